// Command fake is the soak run's registry and request generator
// (bench/soak/run.sh). bench/load/registry serves a single package, and a
// soak needs cold versions for half an hour, so this one serves many:
//
//	fake serve -url-file reg.url [-packages 200 -versions 60]
//	fake targets -mirror URL [-packages 200 -versions 60 -warm 50 -cold 10]
//
// serve answers the packuments of soak-000 … soak-NNN, each with versions
// 1.0.0 … 1.V.0, and their tarballs, built on first use from the name and
// version alone (so every run serves the same bytes). targets writes an
// endless stream of vegeta JSON targets: a mix of read, REST read, list,
// glob and grep over the warm versions (soak-000 … soak-W at 1.0.0) and,
// for -cold percent of them, a list of a version never asked for before.
// Each URL carries ?k=KIND so the report can split latencies by kind.
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: fake serve|targets [flags]")
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	packages := fs.Int("packages", 200, "packages soak-000 …")
	versions := fs.Int("versions", 60, "versions 1.0.0 … 1.(N-1).0 of each")
	switch os.Args[1] {
	case "serve":
		addr := fs.String("addr", "127.0.0.1:0", "listen address (loopback)")
		urlFile := fs.String("url-file", "", "file to write the registry URL to once listening")
		fs.Parse(os.Args[2:])
		serve(*addr, *urlFile, *packages, *versions)
	case "targets":
		mirror := fs.String("mirror", "", "the mirror's base URL")
		warm := fs.Int("warm", 50, "warm packages: soak-000 … at 1.0.0, warmed before the run")
		cold := fs.Int("cold", 10, "percent of requests for a version never asked for")
		seed := fs.Uint64("seed", 1, "random seed of the mix")
		fs.Parse(os.Args[2:])
		targets(*mirror, *packages, *versions, *warm, *cold, *seed)
	default:
		log.Fatalf("unknown command %q", os.Args[1])
	}
}

func name(i int) string { return fmt.Sprintf("soak-%03d", i) }

// files is one version's package: an entry point, typings, 24 modules and
// a README, about 6 KB.
func files(pkg, version string) map[string]string {
	m := map[string]string{
		"package.json": fmt.Sprintf(`{"name":%q,"version":%q,"main":"index.js","types":"index.d.ts"}`, pkg, version),
		"README.md":    "# " + pkg + "\n\nVersion " + version + ".\n",
		"index.d.ts":   "export declare function f0(a: number): number;\n",
	}
	var idx strings.Builder
	for i := range 24 {
		fmt.Fprintf(&idx, "export { f%d } from './lib/m%02d.js';\n", i, i)
		m[fmt.Sprintf("lib/m%02d.js", i)] = fmt.Sprintf("// %s@%s\nexport function f%d(a) {\n  return a * %d + %d;\n}\n", pkg, version, i, i, len(version))
	}
	m["index.js"] = idx.String()
	return m
}

func tgz(files map[string]string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		tw.WriteHeader(&tar.Header{Name: "package/" + name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func serve(addr, urlFile string, packages, versions int) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/"
	var mu sync.Mutex
	tarballs := map[string][]byte{} // "name@version" → tgz, built on first use
	tarball := func(pkg, v string) []byte {
		mu.Lock()
		defer mu.Unlock()
		k := pkg + "@" + v
		if tarballs[k] == nil {
			tarballs[k] = tgz(files(pkg, v))
		}
		return tarballs[k]
	}
	known := map[string]bool{}
	for i := range packages {
		known[name(i)] = true
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimPrefix(r.URL.Path, "/")
		if pkg, file, ok := strings.Cut(path, "/-/"); ok && known[pkg] {
			v := strings.TrimSuffix(strings.TrimPrefix(file, pkg+"-"), ".tgz")
			w.Write(tarball(pkg, v))
			return
		}
		if !known[path] {
			http.Error(w, `{"error":"Not found"}`, http.StatusNotFound)
			return
		}
		vs := map[string]any{}
		for j := range versions {
			v := fmt.Sprintf("1.%d.0", j)
			sum := sha512.Sum512(tarball(path, v))
			vs[v] = map[string]any{"name": path, "version": v, "dist": map[string]any{
				"tarball":   base + path + "/-/" + path + "-" + v + ".tgz",
				"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:]),
				"fileCount": 28,
			}}
		}
		w.Header().Set("Content-Type", "application/vnd.npm.install-v1+json")
		json.NewEncoder(w).Encode(map[string]any{
			"name": path, "dist-tags": map[string]string{"latest": fmt.Sprintf("1.%d.0", versions-1)}, "versions": vs,
		})
	})
	if urlFile != "" {
		if err := os.WriteFile(urlFile, []byte(base), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	log.Fatal(http.Serve(ln, nil))
}

type target struct {
	Method string              `json:"method"`
	URL    string              `json:"url"`
	Body   []byte              `json:"body,omitempty"`
	Header map[string][]string `json:"header,omitempty"`
}

func targets(mirror string, packages, versions, warm, cold int, seed uint64) {
	if mirror == "" || warm < 1 || warm > packages || versions < 2 {
		log.Fatal("targets: need -mirror, 1 <= -warm <= -packages, -versions >= 2")
	}
	mirror = strings.TrimSuffix(mirror, "/")
	rng := rand.New(rand.NewPCG(seed, seed))
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	jsonHeader := map[string][]string{"Content-Type": {"application/json"}}
	explore := func(kind string, body map[string]any) target {
		b, _ := json.Marshal(body)
		return target{Method: "POST", URL: mirror + "/v1/explore?k=" + kind, Body: b, Header: jsonHeader}
	}
	// Cold versions are walked in order: package by package, versions
	// 1.1.0 and up (1.0.0 of the warm packages is warm), then around
	// again, when they are warm too.
	coldNext := 0
	for {
		pkg := name(rng.IntN(warm))
		mod := fmt.Sprintf("lib/m%02d.js", rng.IntN(24))
		var t target
		switch r := rng.IntN(100); {
		case r < cold:
			k := coldNext % (packages * (versions - 1))
			coldNext++
			t = explore("cold", map[string]any{"action": "list", "packageName": name(k / (versions - 1)),
				"version": fmt.Sprintf("1.%d.0", 1+k%(versions-1))})
		case r < cold+30:
			t = explore("read", map[string]any{"action": "read", "packageName": pkg, "version": "1.0.0", "path": mod})
		case r < cold+45:
			t = target{Method: "GET", URL: mirror + "/v1/npm/" + pkg + "@1.0.0/" + mod + "?k=rest"}
		case r < cold+60:
			t = explore("list", map[string]any{"action": "list", "packageName": pkg, "version": "1.0.0"})
		case r < cold+75:
			t = explore("glob", map[string]any{"action": "glob", "packageName": pkg, "version": "1.0.0", "patterns": []string{"lib/**/*.js", "!lib/m0*"}})
		default:
			t = explore("grep", map[string]any{"action": "grep", "packageName": pkg, "version": "1.0.0", "pattern": fmt.Sprintf(`return a \* %d\b`, rng.IntN(24))})
		}
		if err := enc.Encode(t); err != nil {
			return // vegeta stopped reading
		}
		if out.Buffered() > 32<<10 {
			if err := out.Flush(); err != nil {
				return
			}
		}
	}
}
