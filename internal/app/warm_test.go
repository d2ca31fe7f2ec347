package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/redistest"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// TestWarmOverHTTP: POST /v1/warm on a mirror with the embedded store
// runs the jobs in the mirror itself; when the request is finished, each
// version is stored and indexed, and GET /v1/warm/{id} says so.
func TestWarmOverHTTP(t *testing.T) {
	m := newMirror(t, embedded)
	m.reg.Publish("a", "1.0.0", tarballtest.Package(t, map[string]string{"index.js": "export const a = 1;\n"}))
	m.reg.Publish("@s/b", "2.1.0", tarballtest.Package(t, map[string]string{"index.js": "export const b = 2;\n"}))

	// A lockfile larger than max-body-bytes (1 MiB) is accepted: /v1/warm
	// has its own limit.
	pad := strings.Repeat(" ", 1<<20)
	lock := `{"name":"app","lockfileVersion":3,"requires":true,"packages":{"":{"dependencies":{"a":"^1.0.0","@s/b":"2.1.0"}},` +
		`"node_modules/a":{"version":"1.0.0"},"node_modules/@s/b":{"version":"2.1.0"}}}` + pad
	body, _ := json.Marshal(map[string]any{"lockfile": map[string]string{"name": "package-lock.json", "content": lock}})
	resp, err := http.Post(m.srv.URL+"/v1/warm", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	var posted struct{ ID, Status string }
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &posted) != nil || posted.ID == "" {
		t.Fatalf("POST /v1/warm = %d %s", resp.StatusCode, b)
	}
	if _, err := m.app.Warm.Wait(t.Context(), posted.ID, nil); err != nil {
		t.Fatalf("waiting for the warm request: %v", err)
	}
	r, out := m.get(posted.Status)
	var p struct {
		Total, Done, Failed int
		Finished            bool
	}
	if r.StatusCode != 200 || json.Unmarshal(out, &p) != nil || !p.Finished || p.Done != 2 || p.Failed != 0 {
		t.Fatalf("GET %s = %d %s", posted.Status, r.StatusCode, out)
	}
	for _, v := range [][2]string{{"a", "1.0.0"}, {"@s/b", "2.1.0"}} {
		if _, err := m.app.Store.Index(t.Context(), v[0], v[1], index.FormatVersion); err != nil {
			t.Errorf("%s@%s warmed but not indexed: %v", v[0], v[1], err)
		}
	}
	if n := m.reg.TarballDownloads("a", "1.0.0"); n != 1 {
		t.Errorf("a@1.0.0 downloaded %d times", n)
	}
	// A warmed version answers without the registry.
	m.reg.Fail("a", http.StatusInternalServerError, "")
	if status, out := m.explore(`{"action":"grep","packageName":"a","version":"1.0.0","pattern":"const a"}`, nil); status != 200 {
		t.Errorf("grep after warm with the registry down: %d %s", status, out)
	}
	if r, out := m.get(fmt.Sprintf("/v1/warm/%s", "no-such-id")); r.StatusCode != 404 {
		t.Errorf("unknown warm id: %d %s", r.StatusCode, out)
	}
}

// TestQueueDepthMetric: the warm queue's depth is exported, and counts a
// job that has not finished (held at the registry, so it cannot finish).
func TestQueueDepthMetric(t *testing.T) {
	for _, kind := range []storeKind{embedded, pg} {
		t.Run(string(kind), func(t *testing.T) {
			m := newMirror(t, kind)
			release := m.reg.Hold("never-published")
			defer release() // before the mirror's cleanup stops its workers
			if err := m.app.Warm.Enqueue(t.Context(), "never-published", "1.0.0"); err != nil {
				t.Fatal(err)
			}
			n, err := m.app.Warm.Depth(t.Context())
			if err != nil || n != 1 {
				t.Fatalf("Depth = %d, %v; want 1", n, err)
			}
			_, out := m.get("/metrics")
			if !strings.Contains(string(out), "pkgscope_warm_queue_depth") {
				t.Errorf("/metrics has no pkgscope_warm_queue_depth")
			}
		})
	}
}

// TestCloseDoesNotWaitForHeldJobs: Close gives running warm jobs the
// shutdown grace, then cancels them, instead of waiting for the job
// timeout (minutes).
func TestCloseDoesNotWaitForHeldJobs(t *testing.T) {
	m := newMirror(t, embedded, func(c *config.Config) { c.ShutdownTimeout = 100 * time.Millisecond })
	release := m.reg.Hold("slow")
	defer release()
	arrived := m.reg.Arrived("slow")
	if err := m.app.Warm.Enqueue(t.Context(), "slow", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	<-arrived // the job is running, held at the registry
	done := make(chan error, 1)
	go func() { done <- m.app.Close() }()
	select {
	case <-done:
	case <-t.Context().Done():
		t.Fatal("Close did not return")
	}
}

// TestWarmPaysPerPackageAtTheRateLimit: a warm request's packages, and a
// project registration's, are charged to the caller's bucket (one request
// per rate-limit-warm-items of them), not once per POST; a request costing
// more than the burst is a 413 saying the most packages a request may
// carry; a request the bucket cannot pay is a 429 naming the setting, and a refused project is
// not recorded, so its retry registers and warms it.
func TestWarmPaysPerPackageAtTheRateLimit(t *testing.T) {
	prefix := redistest.Prefix(t)
	m := newMirror(t, embedded, func(c *config.Config) {
		c.RedisURL, c.RedisPrefix = redistest.URL(t), prefix
		// One unit a minute: nothing refills while the test runs.
		c.RateLimitPerMinute, c.RateLimitBurst, c.RateLimitWarmItems = 1, 6, 1
	})
	rdb := redistest.Client(t)
	t.Cleanup(func() {
		// redis_rate puts "rate:" before our prefix.
		if keys := rdb.Keys(context.Background(), "rate:"+prefix+"*").Val(); len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	})
	specs := func(n int) map[string][]string {
		var s []string
		for i := range n {
			s = append(s, fmt.Sprintf("pkg-%d@1.0.0", i))
		}
		return map[string][]string{"specs": s}
	}
	// More packages than the burst can pay: refused for good, whatever
	// the bucket holds, saying the most a request may carry; only the
	// door is charged (5 left).
	if status, b := m.do(http.MethodPost, "/v1/warm", "", specs(7)); status != http.StatusRequestEntityTooLarge ||
		!strings.Contains(string(b), "a request may carry at most 6 packages (rate-limit-burst 6 × rate-limit-warm-items 1); split it") {
		t.Fatalf("7 packages on a burst of 6: %d %s, want 413 saying the most a request may carry", status, b)
	}
	if status, b := m.do(http.MethodPost, "/v1/warm", "", specs(3)); status != http.StatusAccepted {
		t.Fatalf("3 packages on a bucket of 5: %d %s, want 202", status, b)
	}
	// 2 left: the door takes one, the 5 packages need 4 more.
	status, b := m.do(http.MethodPost, "/v1/warm", "", specs(5))
	if status != http.StatusTooManyRequests || !strings.Contains(string(b), "a warm request of 5 packages counts as 5 requests") ||
		!strings.Contains(string(b), "rate-limit-warm-items") {
		t.Fatalf("5 packages with 2 requests left: %d %s, want 429 naming rate-limit-warm-items", status, b)
	}
	// 1 left: the door takes it, the project's 3 packages need 2 more.
	up := lockUpload(projectLock)
	status, b = m.do(http.MethodPost, "/v1/projects", "", up)
	if status != http.StatusTooManyRequests || !strings.Contains(string(b), "a project warming 3 packages") {
		t.Fatalf("a project of 3 packages with 1 request left: %d %s, want 429", status, b)
	}
	if _, err := m.app.Store.Project(t.Context(), project.ID(up)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused project was recorded (%v): its retry would find it and never warm it", err)
	}
}

// TestWarmJobsTakeTheFillBudget: the mirror's own warm jobs weigh each
// version against max-fill-bytes before ingesting it (fill.Budget, shared
// with callers' misses). Before, they took no budget, and warming a
// midsize app held nine 90-140 MB binaries at once (2.3 GiB RSS). Under a
// budget smaller than every version, each is ingested alone, and the
// request still finishes; the registry warm.TimeRegistry wraps records
// the tarballs' bytes in the jobs' timing.
func TestWarmJobsTakeTheFillBudget(t *testing.T) {
	m := newMirror(t, embedded, func(c *config.Config) { c.MaxFillBytes = 1 })
	m.reg.Publish("a", "1.0.0", tarballtest.Package(t, map[string]string{"index.js": "export const a = 1;\n"}))
	m.reg.Publish("b", "1.0.0", tarballtest.Package(t, map[string]string{"index.js": "export const b = 2;\n"}))
	lock := `{"name":"app","lockfileVersion":3,"requires":true,"packages":{"":{"dependencies":{"a":"1.0.0","b":"1.0.0"}},` +
		`"node_modules/a":{"version":"1.0.0"},"node_modules/b":{"version":"1.0.0"}}}`
	body, _ := json.Marshal(map[string]any{"lockfile": map[string]string{"name": "package-lock.json", "content": lock}})
	resp, err := http.Post(m.srv.URL+"/v1/warm", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	var posted struct{ ID string }
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &posted) != nil {
		t.Fatalf("POST /v1/warm = %d %s", resp.StatusCode, b)
	}
	if _, err := m.app.Warm.Wait(t.Context(), posted.ID, nil); err != nil {
		t.Fatalf("waiting for the warm request: %v", err)
	}
	for _, name := range []string{"a", "b"} {
		if _, err := m.app.Store.Version(t.Context(), name, "1.0.0"); err != nil {
			t.Errorf("%s@1.0.0 was not stored: %v", name, err)
		}
	}
	n, timing := m.app.Warm.Fetched()
	if n != 2 || timing.DownloadBytes <= 0 {
		t.Errorf("the warm jobs fetched %d versions, %d tarball bytes seen by the budgeted registry; want 2 and more than 0", n, timing.DownloadBytes)
	}
}
