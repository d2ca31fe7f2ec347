package reliability

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// TestFillsPastTheWaitersAreRefused is issue 25 §7: with max-fills 1 and
// max-fill-waiters 2, while one cold version holds the slot (its tarball
// held by the registry), three more cold versions asked at once get two
// waits and one refusal, answered while the slot is still held: 503
// fills_busy with Retry-After, a message saying to retry, counted in
// /metrics and recording nothing; once the slot frees, the two waiters
// are answered 200. The refusal names this mirror, not the registry
// (it was upstream_unavailable).
func TestFillsPastTheWaitersAreRefused(t *testing.T) {
	m := newMirror(t, func(c *config.Config) { c.MaxFills, c.MaxFillWaiters = 1, 2 })
	names := []string{"held", "b", "c", "d"}
	for _, name := range names {
		m.reg.Publish(name, "1.0.0", tb.Package(t, map[string]string{"index.js": "module.exports = 1\n"}))
	}
	arrived, release := m.reg.HoldTarballs("held")
	defer release()
	list := func(name string) answer {
		return do(t.Context(), m.hc, http.MethodPost, m.url+"/v1/explore",
			fmt.Sprintf(`{"action":"list","packageName":%q,"version":"1.0.0"}`, name), time.Minute)
	}
	held := make(chan answer, 1)
	go func() { held <- list("held") }()
	<-arrived // held@1.0.0 holds the only slot
	type timed struct {
		name string
		a    answer
		took time.Duration
	}
	answers := make(chan timed, 3)
	for _, name := range names[1:] {
		go func() {
			start := time.Now()
			a := list(name)
			answers <- timed{name, a, time.Since(start)}
		}()
	}
	// The first answer comes while the slot is held: it can only be the
	// refusal (the waiters wait for the slot).
	first := <-answers
	a := first.a
	if a.status != http.StatusServiceUnavailable || a.code() != "fills_busy" || a.header.Get("Retry-After") == "" ||
		!strings.Contains(string(a.body), "retry") {
		t.Fatalf("the first answer past the slot: %v (Retry-After %q), want 503 fills_busy with Retry-After", a, a.header.Get("Retry-After"))
	}
	t.Logf("refused %s in %s (Retry-After %s), while the slot was held", first.name, first.took.Round(time.Millisecond), a.header.Get("Retry-After"))
	metrics := m.get("/metrics")
	if !strings.Contains(string(metrics.body), "pkgscope_fill_slot_refusals_total 1") ||
		!strings.Contains(string(metrics.body), "pkgscope_fill_slot_waiters 2") {
		t.Errorf("/metrics does not show 2 waiters and 1 refusal:\n%s", grepLines(string(metrics.body), "pkgscope_fill_slot"))
	}
	release()
	if a := <-held; a.status != http.StatusOK {
		t.Errorf("the held version: %v", a)
	}
	for range 2 {
		w := <-answers
		if w.a.status != http.StatusOK {
			t.Errorf("waiter %s: %v, want 200 once the slot freed", w.name, w.a)
		}
	}
	if _, err := m.app.Store.Version(t.Context(), first.name, "1.0.0"); err == nil {
		t.Errorf("the refused version %s was recorded", first.name)
	}
}

// grepLines returns the lines of s holding sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
