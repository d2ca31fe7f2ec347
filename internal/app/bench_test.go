package app

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// Benchmarks of the core paths through the whole HTTP stack. They assert
// nothing about time; bench/core.sh runs them with the anchors and
// docs/BENCHMARKS.md records the figures.

func benchStores(b *testing.B, f func(b *testing.B, kind storeKind)) {
	for _, kind := range []storeKind{embedded, pg} {
		b.Run(string(kind), func(b *testing.B) { f(b, kind) })
	}
}

func (m *mirror) mustOK(b *testing.B, body string) {
	if status, out := m.explore(body, nil); status != http.StatusOK {
		b.Fatalf("%s: %d %s", body, status, out)
	}
}

func BenchmarkReadSmallWarm(b *testing.B) {
	benchStores(b, func(b *testing.B, kind storeKind) {
		m := newMirror(b, kind)
		m.reg.Publish("small", "1.0.0", tarballtest.Package(b, map[string]string{
			"index.js": strings.Repeat("export const x = 1;\n", 50),
		}))
		req := `{"action":"read","packageName":"small","version":"1.0.0","path":"index.js"}`
		m.mustOK(b, req)
		b.ResetTimer()
		for b.Loop() {
			m.mustOK(b, req)
		}
	})
}

func BenchmarkListLargeWarm(b *testing.B) {
	benchStores(b, func(b *testing.B, kind storeKind) {
		m := newMirror(b, kind)
		files := map[string]string{}
		for i := range 5000 { // lucide-react@1.81.0 has 4,920 files
			files[fmt.Sprintf("dist/esm/icons/icon-%04d.js", i)] = fmt.Sprintf("export default %d;\n", i)
		}
		m.reg.Publish("large", "1.0.0", tarballtest.Package(b, files))
		req := `{"action":"list","packageName":"large","version":"1.0.0"}`
		m.mustOK(b, req)
		b.ResetTimer()
		for b.Loop() {
			m.mustOK(b, req)
		}
	})
}

// BenchmarkColdIngest times a cold request (resolve, download, verify,
// unpack, store, answer) against curl | tar x of the same tarball from the
// same local server. PKGSCOPE_BENCH_TARBALL names a real .tgz (bench/core.sh
// fetches next@16 with npm pack); without it a generated 20 MB package is
// used.
func BenchmarkColdIngest(b *testing.B) {
	var tgz []byte
	if p := os.Getenv("PKGSCOPE_BENCH_TARBALL"); p != "" {
		var err error
		if tgz, err = os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	} else {
		files := map[string]string{}
		for i := range 2000 {
			files[fmt.Sprintf("dist/chunk-%04d.js", i)] = strings.Repeat(fmt.Sprintf("function f%d(a){return a+%d}\n", i, i), 350)
		}
		tgz = tarballtest.Package(b, files)
	}
	b.Run("curl+tar", func(b *testing.B) {
		m := newMirror(b, embedded)
		m.reg.Publish("big", "1.0.0", tgz)
		url := m.reg.URL() + "big/-/big-1.0.0.tgz"
		b.SetBytes(int64(len(tgz)))
		for b.Loop() {
			dir := b.TempDir()
			cmd := exec.Command("sh", "-c", `curl -sf "$0" | tar xzf - -C "$1"`, url, dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("curl | tar: %v %s", err, out)
			}
		}
	})
	benchStores(b, func(b *testing.B, kind storeKind) {
		b.SetBytes(int64(len(tgz)))
		for b.Loop() {
			b.StopTimer()
			m := newMirror(b, kind)
			m.reg.Publish("big", "1.0.0", tgz)
			b.StartTimer()
			m.mustOK(b, `{"action":"list","packageName":"big","version":"1.0.0"}`)
		}
	})
}
