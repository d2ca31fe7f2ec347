package topology

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// longLineBytes and replicaFillsOverIdle are issue 25 §1's hostile body
// and bound (test/reliability TestColdFillsWeighedByBytes), here on two
// replicas: each version is one 200 MiB line in a 200 KB tarball, and
// each replica's peak RSS may rise at most 512 MiB over its idle RSS.
const (
	longLineBytes        = 200 << 20
	replicaFillsOverIdle = 512 << 20
)

// rss reads a VmRSS-style field of the replica's status, in bytes.
func (r *replica) rss(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(field + `\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no %s in /proc/<pid>/status", field)
	}
	var kb int64
	fmt.Sscan(string(m[1]), &kb)
	return kb << 10
}

// TestHostileBodiesOnTwoReplicas is issue 25 §7: the hostile-body attack
// of §1 on two replicas behind one Postgres and Redis. Four versions of
// one 200 MiB line each are listed cold on both replicas at once (eight
// requests): every answer is 200, each version is downloaded once (the
// locks join the replicas), and each replica's peak RSS stays within
// 512 MiB of its idle RSS, the fills and index builds included.
func TestHostileBodiesOnTwoReplicas(t *testing.T) {
	d := newDeployment(t, redistestAddr(t))
	d.reg.Publish("small", "1.0.0", tarballtest.Package(t, map[string]string{"index.js": "module.exports = 1\n"}))
	var versions []string
	for i := range 4 {
		v := fmt.Sprintf("1.0.%d", i)
		d.reg.Publish("longline", v, tarballtest.LongLine(t, "line.js", fmt.Sprintf("/* %d */", i), longLineBytes))
		versions = append(versions, v)
	}
	replicas := d.start(2)
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	list := func(r *replica, name, version string) (int, string) {
		status, body, err := send(t.Context(), hc, http.MethodPost, r.url+"/v1/explore",
			fmt.Sprintf(`{"action":"list","packageName":%q,"version":%q}`, name, version), 10*time.Minute)
		if err != nil {
			return 0, err.Error()
		}
		return status, body
	}
	// indexed is closed once either replica has stored name@version's
	// index: only the replica that filled it builds it.
	indexed := func(name, version string) <-chan struct{} {
		re := regexp.MustCompile(`msg="index stored" package=` + regexp.QuoteMeta(name) + ` version=` + regexp.QuoteMeta(version) + ` `)
		a, b := replicas[0].waitFor(re), replicas[1].waitFor(re)
		ch := make(chan struct{})
		go func() {
			select {
			case <-a:
			case <-b:
			case <-t.Context().Done():
			}
			close(ch)
		}()
		return ch
	}
	wait := func(ch <-chan struct{}) {
		select {
		case <-ch:
		case <-time.After(10 * time.Minute): // a bound on hanging
			t.Fatal("an index build did not end within ten minutes")
		}
	}
	// The idle anchor: each replica after one ordinary fill.
	done := indexed("small", "1.0.0")
	if status, body := list(replicas[0], "small", "1.0.0"); status != http.StatusOK {
		t.Fatalf("list small: %d %s", status, body)
	}
	wait(done)
	if status, body := list(replicas[1], "small", "1.0.0"); status != http.StatusOK {
		t.Fatalf("list small on the second replica: %d %s", status, body)
	}
	var idle [2]int64
	for i, r := range replicas {
		idle[i] = r.rss(t, "VmRSS:")
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", r.cmd.Process.Pid), []byte("5"), 0); err != nil {
			t.Fatalf("resetting the peak RSS: %v", err)
		}
	}
	var builds []<-chan struct{}
	for _, v := range versions {
		builds = append(builds, indexed("longline", v))
	}
	var wg sync.WaitGroup
	for _, r := range replicas {
		for _, v := range versions {
			wg.Go(func() {
				if status, body := list(r, "longline", v); status != http.StatusOK {
					t.Errorf("list longline@%s on %s: %d %.300s", v, r.url, status, body)
				}
			})
		}
	}
	wg.Wait()
	for _, ch := range builds {
		wait(ch)
	}
	for i, r := range replicas {
		peak, after := r.rss(t, "VmHWM:"), r.rss(t, "VmRSS:")
		t.Logf("replica %d: idle %d MiB, peak %d MiB (+%d), after %d MiB", i, idle[i]>>20, peak>>20, (peak-idle[i])>>20, after>>20)
		if peak-idle[i] > replicaFillsOverIdle {
			t.Errorf("replica %d: peak RSS %d MiB over idle, over the bound of %d MiB", i, (peak-idle[i])>>20, replicaFillsOverIdle>>20)
		}
	}
	for _, v := range versions {
		if n := d.reg.TarballDownloads("longline", v); n != 1 {
			t.Errorf("longline@%s downloaded %d times by two replicas, want 1", v, n)
		}
	}
}
