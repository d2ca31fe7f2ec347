// Command registry is a static npm registry for the load benchmarks
// (bench/load/run.sh, bench/load/agents.sh): it serves generated packages
// on a loopback port, and writes bench-pkg's index.js to a directory for
// nginx to serve, so the mirror and nginx answer with the same bytes. It
// is also the plain net/http anchor: it serves those bytes itself at
// /index.js, and at /replay/ the answers the mirror gave to recorded
// requests (agents.sh), each from memory — the most a Go server can do
// with the same bytes.
//
//	registry -addr 127.0.0.1:0 -url-file reg.url -www dir [-replay dir]
//
// Packages: bench-pkg@1.0.0 (404 small files, the benchmarked 2.6 KiB
// read), and three shaped like common ones for the agent mix:
// bench-ui@2.3.0 (an icon set: 1,200 components and their .d.ts),
// bench-lib@5.1.0 (a framework: sources, declarations, bundles) and
// bench-cli@0.9.0 (a small tool). Their contents are generated from fixed
// seeds, so every run serves the same bytes.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// benchPkg is the read benchmark's package: a small index.js (2.6 KiB,
// about a typical package entry point) and enough other files to make list
// and glob realistic.
func benchPkg() map[string]string {
	m := map[string]string{
		"package.json": `{"name":"bench-pkg","version":"1.0.0","main":"index.js","types":"index.d.ts"}`,
		"index.js":     strings.Repeat("export function f(a, b) { return a + b; } // the benchmarked read\n", 40),
		"index.d.ts":   "export declare function f(a: number, b: number): number;\n",
		"README.md":    "# bench-pkg\n",
	}
	for i := range 200 {
		m[fmt.Sprintf("lib/mod%03d.js", i)] = fmt.Sprintf("module.exports = %d;\n", i)
		m[fmt.Sprintf("lib/mod%03d.d.ts", i)] = fmt.Sprintf("declare const x: %d; export = x;\n", i)
	}
	return m
}

var words = []string{"value", "state", "props", "router", "config", "options", "handler", "buffer", "result", "index",
	"cache", "stream", "render", "update", "context", "element", "request", "response", "module", "record"}

// source is n lines of plausible JavaScript from r; every 40th line names
// extra, so a grep for it finds a few lines in some files.
func source(r *rand.Rand, n int, extra string) string {
	var b strings.Builder
	for i := range n {
		a, c := words[r.IntN(len(words))], words[r.IntN(len(words))]
		switch {
		case extra != "" && i%40 == 39:
			fmt.Fprintf(&b, "  const %s = %s(%s);\n", a, extra, c)
		case i%12 == 0:
			fmt.Fprintf(&b, "export function %s%d(%s, %s) {\n", a, r.IntN(1000), c, a)
		case i%12 == 11:
			b.WriteString("}\n")
		default:
			fmt.Fprintf(&b, "  %s.%s = %s[%d] ?? %q;\n", a, c, c, r.IntN(64), a+"-"+c)
		}
	}
	return b.String()
}

// benchUI is an icon set: one component and one declaration per icon.
func benchUI() map[string]string {
	r := rand.New(rand.NewPCG(2, 3))
	m := map[string]string{"package.json": `{"name":"bench-ui","version":"2.3.0","main":"dist/index.js","types":"dist/index.d.ts"}`}
	var index, types strings.Builder
	for i := range 600 {
		name := fmt.Sprintf("Icon%04d", i)
		if i == 17 {
			name = "ArrowLeft"
		}
		m["dist/icons/"+name+".js"] = fmt.Sprintf("import { createIcon } from '../createIcon.js';\nexport const %s = createIcon(%q, [\n%s]);\nexport default %s;\n",
			name, name, source(r, 20, ""), name)
		m["dist/icons/"+name+".d.ts"] = fmt.Sprintf("import type { IconProps } from '../types';\nexport declare const %s: (props: IconProps) => JSX.Element;\nexport default %s;\n", name, name)
		fmt.Fprintf(&index, "export { %s } from './icons/%s.js';\n", name, name)
		fmt.Fprintf(&types, "export { %s } from './icons/%s';\n", name, name)
	}
	m["dist/index.js"], m["dist/index.d.ts"] = index.String(), types.String()
	m["dist/createIcon.js"] = source(r, 80, "")
	m["dist/types.d.ts"] = "export interface IconProps { size?: number; color?: string; strokeWidth?: number }\n"
	m["README.md"] = "# bench-ui\n\nIcons. `import { ArrowLeft } from 'bench-ui'`.\n"
	return m
}

// benchLib is a framework: sources, declarations and two bundles.
func benchLib() map[string]string {
	r := rand.New(rand.NewPCG(5, 7))
	m := map[string]string{"package.json": `{"name":"bench-lib","version":"5.1.0","main":"dist/index.js","types":"dist/index.d.ts"}`}
	for i := range 360 {
		dir := []string{"client", "server", "shared", "build"}[i%4]
		extra := ""
		if i%9 == 0 {
			extra = "useRouter"
		}
		m[fmt.Sprintf("dist/%s/mod%03d.js", dir, i)] = source(r, 60+r.IntN(120), extra)
		m[fmt.Sprintf("dist/%s/mod%03d.d.ts", dir, i)] = fmt.Sprintf("export declare function readFileSync%d(path: string): string;\nexport declare function useRouter(): Router;\n", i)
	}
	m["dist/index.d.ts"] = "export interface Router { push(url: string): void }\nexport declare function useRouter(): Router;\n"
	m["dist/index.js"] = source(r, 400, "useRouter")
	m["dist/bundle.min.js"] = strings.ReplaceAll(source(r, 3000, "useRouter"), "\n", ";")
	m["README.md"] = "# bench-lib\n"
	return m
}

// benchCLI is a small tool.
func benchCLI() map[string]string {
	r := rand.New(rand.NewPCG(11, 13))
	m := map[string]string{"package.json": `{"name":"bench-cli","version":"0.9.0","bin":{"bench-cli":"bin/cli.js"}}`}
	m["bin/cli.js"] = "#!/usr/bin/env node\n" + source(r, 120, "parseArgs")
	for i := range 60 {
		m[fmt.Sprintf("lib/cmd%02d.js", i)] = source(r, 40+r.IntN(60), "parseArgs")
	}
	m["README.md"] = "# bench-cli\n"
	return m
}

func tgz(files map[string]string) []byte {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range names {
		body := files[name]
		tw.WriteHeader(&tar.Header{Name: "package/" + name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	urlFile := flag.String("url-file", "", "file to write the registry URL to once listening")
	www := flag.String("www", "", "directory to write index.js to, for nginx")
	replay := flag.String("replay", "", "directory of recorded answers served at /replay/ (file name: sha256 of the request body)")
	flag.Parse()
	pkgs := map[string]struct {
		version string
		files   map[string]string
	}{
		"bench-pkg": {"1.0.0", benchPkg()},
		"bench-ui":  {"2.3.0", benchUI()},
		"bench-lib": {"5.1.0", benchLib()},
		"bench-cli": {"0.9.0", benchCLI()},
	}
	index := []byte(pkgs["bench-pkg"].files["index.js"])
	if *www != "" {
		if err := os.WriteFile(filepath.Join(*www, "index.js"), index, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/"
	for name, p := range pkgs {
		body := tgz(p.files)
		sum := sha512.Sum512(body)
		tarball := name + "/-/" + name + "-" + p.version + ".tgz"
		doc, _ := json.Marshal(map[string]any{
			"name":      name,
			"dist-tags": map[string]string{"latest": p.version},
			"versions": map[string]any{p.version: map[string]any{
				"name": name, "version": p.version,
				"dist": map[string]any{
					"tarball":   base + tarball,
					"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:]),
					"fileCount": len(p.files),
				},
			}},
		})
		http.HandleFunc("/"+name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/vnd.npm.install-v1+json")
			w.Write(doc)
		})
		http.HandleFunc("/"+tarball, func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	}
	http.HandleFunc("/index.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Write(index)
	})
	http.Handle("/headers/index.js", withHeaders(index))
	if *replay != "" {
		http.Handle("/replay/", replayer(*replay))
	}
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile, []byte(base), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	log.Fatal(http.Serve(ln, nil))
}

// withHeaders serves body with the headers the mirror's raw read answers
// with (internal/api serveFile and its middleware: eight, beside Date), each
// value computed once and shared as the mirror shares its constant ones:
// the second anchor of run.sh, which shows what net/http's own work on
// those headers costs before the mirror does anything. The request id is a
// constant here, the mirror draws one per request.
func withHeaders(body []byte) http.Handler {
	sum := sha256.Sum256(body)
	vals := []struct {
		k string
		v []string
	}{
		{"Cross-Origin-Resource-Policy", []string{"same-origin"}},
		{"X-Content-Type-Options", []string{"nosniff"}},
		{"X-Request-Id", []string{"AYBbIvOgXiwGYxaYbklkrGdDNOyKtChw"}},
		{"Etag", []string{`"sha256-` + hex.EncodeToString(sum[:]) + `"`}},
		{"Content-Security-Policy", []string{"default-src 'none'; sandbox"}},
		{"Cache-Control", []string{"public, max-age=31536000, immutable"}},
		{"Content-Type", []string{"text/javascript; charset=utf-8"}},
		{"Content-Length", []string{strconv.Itoa(len(body))}},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for _, kv := range vals {
			h[kv.k] = kv.v
		}
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	})
}

// replayer answers a POST with the recorded answer to its body (the file
// named by the body's sha256 in dir), read from disk once and then served
// from memory; 404 when none was recorded.
func replayer(dir string) http.Handler {
	var answers sync.Map // hex sha256 → []byte
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sum := sha256.Sum256(req)
		key := hex.EncodeToString(sum[:])
		a, ok := answers.Load(key)
		if !ok {
			b, err := os.ReadFile(filepath.Join(dir, key))
			if err != nil {
				http.Error(w, "no recorded answer", http.StatusNotFound)
				return
			}
			a, _ = answers.LoadOrStore(key, b)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(a.([]byte))
	})
}
