package reliability

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// longLineBytes is issue 25 §1's hostile body: one line of 200 MiB, which
// its tarball (LongLine) carries in about 200 KB.
const longLineBytes = 200 << 20

// coldFillsOverIdle is issue 25 §1's target: four such versions filled at
// once raise the mirror's peak RSS by at most this much over its idle RSS.
const coldFillsOverIdle = 512 << 20

// fillsGiveBackSlack is how far above idle the mirror's RSS may stay once
// the large fills have ended and their indexes are built: the memory
// goes back to the system (fill.Budget frees it when the last large fill
// ends) instead of being held by the heap for minutes.
const fillsGiveBackSlack = 128 << 20

// publishLongLines publishes n versions of longline, each one file of
// one longLineBytes line, each with its own bytes.
func publishLongLines(t testing.TB, reg *fakeregistry.Registry, n int) []string {
	t.Helper()
	var versions []string
	for i := range n {
		v := fmt.Sprintf("1.0.%d", i)
		reg.Publish("longline", v, tb.LongLine(t, "line.js", fmt.Sprintf("/* %d */", i), longLineBytes))
		versions = append(versions, v)
	}
	return versions
}

// rss reads a VmRSS-style field of the process's status, in bytes.
func rss(t testing.TB, p *proc, field string) int64 {
	t.Helper()
	return statusBytes(t, p.cmd.Process.Pid, field)
}

// statusBytes reads a "VmRSS:"-style field of /proc/pid/status, in bytes.
func statusBytes(t testing.TB, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(regexp.QuoteMeta(field) + `\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no %s in /proc/%d/status", field, pid)
	}
	kb, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return kb << 10
}

// coldLongLines lists each version of longline at once on a fresh mirror
// process started with env and returns its idle RSS, its peak RSS while
// the fills and their index builds ran, and its RSS once they had all
// ended.
func coldLongLines(t testing.TB, reg *fakeregistry.Registry, env []string, versions []string) (idle, peak, after int64) {
	t.Helper()
	reg.Publish("small", "1.0.0", tb.Package(t, map[string]string{"package.json": `{"name":"small"}`, "index.js": "module.exports = 1\n"}))
	mir := startMirror(t, env)
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	list := func(name, version string) answer {
		return do(t.Context(), hc, http.MethodPost, mir.url+"/v1/explore",
			fmt.Sprintf(`{"action":"list","packageName":%q,"version":%q}`, name, version), 10*time.Minute)
	}
	indexed := func(name, version string) <-chan string {
		return mir.waitFor(regexp.MustCompile(`msg="index stored" package=` + regexp.QuoteMeta(name) + ` version=` + regexp.QuoteMeta(version)))
	}
	// The idle anchor: the process after one ordinary cold fill and its
	// index build, so what is measured is the large fills.
	done := indexed("small", "1.0.0")
	if a := list("small", "1.0.0"); a.status != http.StatusOK {
		t.Fatalf("list small: %v", a)
	}
	waitLine(t, mir, done)
	idle = rss(t, mir, "VmRSS:")
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", mir.cmd.Process.Pid), []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak RSS: %v", err)
	}
	var builds []<-chan string
	for _, v := range versions {
		builds = append(builds, indexed("longline", v))
	}
	var wg sync.WaitGroup
	for _, v := range versions {
		wg.Go(func() {
			if a := list("longline", v); a.status != http.StatusOK {
				t.Errorf("list longline@%s: %v", v, a)
			}
		})
	}
	wg.Wait()
	for _, ch := range builds {
		waitLine(t, mir, ch)
	}
	return idle, rss(t, mir, "VmHWM:"), rss(t, mir, "VmRSS:")
}

// waitLine waits for a log line the process promised, within a bound on
// hanging (ten minutes: a 200 MiB body's fill and build take seconds).
func waitLine(t testing.TB, p *proc, ch <-chan string) {
	t.Helper()
	select {
	case <-ch:
	case err := <-p.exited:
		p.exited <- err
		t.Fatalf("the mirror exited: %v", err)
	case <-time.After(10 * time.Minute):
		t.Fatal("no index build ended within ten minutes")
	}
}

// TestColdFillsWeighedByBytes is issue 25 §1: four versions whose 200 KB
// tarballs each unpack to one 200 MiB line, listed cold at once, raise
// the mirror's peak RSS by at most coldFillsOverIdle, and the memory goes
// back once they end. Before fills were weighed by bytes (fill.Budget),
// each fill read its body whole into a buffer grown by copying, and the
// four reached 1.9 GiB of heap, still held 60 s later.
func TestColdFillsWeighedByBytes(t *testing.T) {
	reg := fakeregistry.New(t)
	versions := publishLongLines(t, reg, 4)
	idle, peak, after := coldLongLines(t, reg, processEnv(t, reg), versions)
	t.Logf("idle %d MiB, peak %d MiB (+%d), after %d MiB (+%d)", idle>>20, peak>>20, (peak-idle)>>20, after>>20, (after-idle)>>20)
	if peak-idle > coldFillsOverIdle {
		t.Errorf("four cold %d MiB fills raised the peak RSS by %d MiB over idle, over the bound of %d MiB",
			longLineBytes>>20, (peak-idle)>>20, coldFillsOverIdle>>20)
	}
	if after-idle > fillsGiveBackSlack {
		t.Errorf("once the fills ended the RSS stayed %d MiB over idle, over %d MiB: the memory was not given back",
			(after-idle)>>20, fillsGiveBackSlack>>20)
	}
}

// BenchmarkColdLongLinesRSS is issue 25 §1's figure: the mirror binary's
// RSS while n versions of one 200 MiB line each are listed cold at once
// (1 and 4), for each store: idle-MiB after one ordinary fill (the
// anchor), peak-MiB while the fills and their index builds ran, after-MiB
// once they had all ended.
//
//	go test -run XXX -bench ColdLongLinesRSS -benchtime 1x ./test/reliability/
func BenchmarkColdLongLinesRSS(b *testing.B) {
	for _, store := range []string{"sqlite", "postgres"} {
		for _, n := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/%d", store, n), func(b *testing.B) {
				for b.Loop() {
					reg := fakeregistry.New(b)
					versions := publishLongLines(b, reg, n)
					var settings []string
					if store == "postgres" {
						settings = append(settings, "PKGSCOPE_DATABASE_URL="+pgtest.URL(b))
					}
					idle, peak, after := coldLongLines(b, reg, processEnv(b, reg, settings...), versions)
					b.ReportMetric(float64(idle)/(1<<20), "idle-MiB")
					b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
					b.ReportMetric(float64(after)/(1<<20), "after-MiB")
				}
			})
		}
	}
}
