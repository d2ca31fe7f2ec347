package reliability

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// jsText returns n bytes of JavaScript-like text, which compresses the
// way package sources do (about 6x with zstd).
func jsText(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 0))
	words := []string{"const ", "function ", "return ", "export ", "import ", "value", "index", "=> ",
		"{\n", "}\n", "(", ")", ";\n", "  ", "this.", "props", "undefined", "null", "true", "await "}
	var b strings.Builder
	b.Grow(n + 32)
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(8) == 0 {
			fmt.Fprintf(&b, "v%d", r.IntN(100000))
		}
	}
	return b.String()[:n]
}

// procKiB reads a "VmRSS:"-style field of /proc/pid/status, in KiB.
func procKiB(b *testing.B, pid int, field string) int64 { return statusBytes(b, pid, field) >> 10 }

// BenchmarkConcurrentReadRSS is issue 11 §5's figure: the mirror binary's
// peak RSS while 16 clients at once read one line of a 128 MiB file
// (explore read), then while 16 fetch it whole (raw GET), with the
// default max-body-bytes-in-flight, for each store. idle-MiB is the
// anchor: the process after ingesting the file, before the reads.
//
//	go test -run XXX -bench ConcurrentReadRSS -benchtime 1x ./test/reliability/
func BenchmarkConcurrentReadRSS(b *testing.B) {
	body := jsText(5, 128<<20)
	tgz := tb.Package(b, map[string]string{"package.json": `{"name":"huge"}`, "huge.js": body})
	want := sha256.Sum256([]byte(body))
	for _, store := range []string{"sqlite", "postgres"} {
		b.Run(store, func(b *testing.B) {
			reg := fakeregistry.New(b)
			reg.Publish("huge", "1.0.0", tgz)
			var settings []string
			if store == "postgres" {
				settings = append(settings, "PKGSCOPE_DATABASE_URL="+pgtest.URL(b))
			}
			env := processEnv(b, reg, settings...)
			mir := startMirror(b, env)
			hc := &http.Client{}
			defer hc.CloseIdleConnections()
			if a := do(b.Context(), hc, http.MethodGet, mir.url+"/v1/npm/huge@1.0.0/package.json", "", 5*time.Minute); a.status != 200 {
				b.Fatalf("ingest: %v", a)
			}
			// A fresh process serves the stored file: the ingest's own
			// memory is not what is measured.
			mir.stop()
			mir = startMirror(b, env)
			pid := mir.cmd.Process.Pid
			if a := do(b.Context(), hc, http.MethodGet, mir.url+"/v1/npm/huge@1.0.0/package.json", "", time.Minute); a.status != 200 {
				b.Fatalf("after the restart: %v", a)
			}
			idle := procKiB(b, pid, "VmRSS:")
			peak := func(req func() answer) int64 {
				os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) // resets VmHWM
				var wg sync.WaitGroup
				for range 16 {
					wg.Go(func() {
						if a := req(); a.err != nil || a.status != 200 {
							b.Errorf("%v", a)
						}
					})
				}
				wg.Wait()
				return procKiB(b, pid, "VmHWM:")
			}
			for b.Loop() {
				read := peak(func() answer {
					return do(b.Context(), hc, http.MethodPost, mir.url+"/v1/explore", `{"action":"read","packageName":"huge","version":"1.0.0","path":"huge.js","limit":1}`, 5*time.Minute)
				})
				raw := peak(func() answer {
					// Hashed as it arrives: 16 copies would cost the test
					// 2 GiB.
					resp, err := hc.Get(mir.url + "/v1/npm/huge@1.0.0/huge.js")
					if err != nil {
						return answer{err: err}
					}
					defer resp.Body.Close()
					h := sha256.New()
					_, err = io.Copy(h, resp.Body)
					if err == nil && !bytes.Equal(h.Sum(nil), want[:]) {
						err = errors.New("raw GET: not the file")
					}
					return answer{status: resp.StatusCode, err: err}
				})
				b.ReportMetric(float64(idle)/1024, "idle-MiB")
				b.ReportMetric(float64(read)/1024, "read-peak-MiB")
				b.ReportMetric(float64(raw)/1024, "raw-peak-MiB")
			}
		})
	}
}
