// Command registry is a static npm registry for the load benchmark: it
// serves one generated package, bench-pkg@1.0.0, on a loopback port, and
// writes the package's index.js to a directory for nginx to serve, so the
// mirror and nginx answer with the same bytes. It also serves those bytes
// itself at /index.js: plain net/http, the most a Go server can do here.
//
//	registry -addr 127.0.0.1:0 -url-file reg.url -www dir
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// files is the package: a small index.js (the benchmarked read, 2.6 KiB,
// about a typical package entry point) and enough other files to make
// list and glob realistic.
func files() map[string]string {
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

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	urlFile := flag.String("url-file", "", "file to write the registry URL to once listening")
	www := flag.String("www", "", "directory to write index.js to, for nginx")
	flag.Parse()
	fs := files()
	body := tgz(fs)
	if *www != "" {
		if err := os.WriteFile(filepath.Join(*www, "index.js"), []byte(fs["index.js"]), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/"
	sum := sha512.Sum512(body)
	doc, _ := json.Marshal(map[string]any{
		"name":      "bench-pkg",
		"dist-tags": map[string]string{"latest": "1.0.0"},
		"versions": map[string]any{"1.0.0": map[string]any{
			"name": "bench-pkg", "version": "1.0.0",
			"dist": map[string]any{
				"tarball":   base + "bench-pkg/-/bench-pkg-1.0.0.tgz",
				"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:]),
				"fileCount": len(fs),
			},
		}},
	})
	http.HandleFunc("/bench-pkg", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.npm.install-v1+json")
		w.Write(doc)
	})
	index := []byte(fs["index.js"])
	http.HandleFunc("/index.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Write(index)
	})
	http.HandleFunc("/bench-pkg/-/bench-pkg-1.0.0.tgz", func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile, []byte(base), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	log.Fatal(http.Serve(ln, nil))
}
