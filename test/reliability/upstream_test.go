package reliability

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/store"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// upstreamTimeouts makes the registry client give up quickly, so faults
// that stall cost the test little: the client deadline (answerBound) must
// still be met, which is the point.
func upstreamTimeouts(c *config.Config) {
	c.UpstreamTimeout, c.TarballTimeout = 300*time.Millisecond, 500*time.Millisecond
}

var upFiles = map[string]string{"package.json": `{"name":"p"}`, "index.js": "module.exports = 42;\n"}

// upstreamDown checks an answer to a request the registry could not
// serve: a 503 with Retry-After (or the 502 named), never a 404, within
// the client deadline.
func upstreamDown(t *testing.T, what string, a answer, status int, code string) {
	t.Helper()
	if a.err != nil {
		t.Fatalf("%s: no answer within %s: %v", what, answerBound, a.err)
	}
	if a.status != status || a.code() != code {
		t.Fatalf("%s: %v, want %d %s", what, a, status, code)
	}
	if status == http.StatusServiceUnavailable {
		if ra, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || ra < 1 {
			t.Errorf("%s: Retry-After %q", what, a.header.Get("Retry-After"))
		}
	}
}

// TestUpstreamFaults: each way a registry fails makes the mirror answer
// 503 with Retry-After (502 for bytes that do not match their integrity),
// never 404, within the client deadline; none is remembered: once the
// registry is well again, the same request is answered, and nothing of a
// failed version is ever visible in the store.
func TestUpstreamFaults(t *testing.T) {
	type fault struct {
		name       string
		apply      func(t *testing.T, m *mirror) (clear func())
		status     int
		code       string
		retryAfter string // when the registry's own Retry-After must come through
	}
	faults := []fault{
		{name: "500", status: 503, code: "upstream_unavailable", apply: func(t *testing.T, m *mirror) func() {
			m.reg.Fail("p", 500, "")
			return func() { m.reg.Fail("p", 0, "") }
		}},
		{name: "503 with Retry-After", status: 503, code: "upstream_unavailable", retryAfter: "7", apply: func(t *testing.T, m *mirror) func() {
			m.reg.Fail("p", 503, "7")
			return func() { m.reg.Fail("p", 0, "") }
		}},
		{name: "429 with Retry-After", status: 503, code: "upstream_unavailable", retryAfter: "3", apply: func(t *testing.T, m *mirror) func() {
			m.reg.Fail("p", 429, "3")
			return func() { m.reg.Fail("p", 0, "") }
		}},
		{name: "packument timeout", status: 503, code: "upstream_unavailable", apply: func(t *testing.T, m *mirror) func() {
			return m.reg.Hold("p")
		}},
		{name: "garbage JSON", status: 503, code: "upstream_unavailable", apply: func(t *testing.T, m *mirror) func() {
			m.reg.SetRawPackument("p", []byte("<html><body>502 Bad Gateway</body></html>"))
			return func() { m.reg.SetRawPackument("p", nil) }
		}},
		{name: "truncated packument", status: 503, code: "upstream_unavailable", apply: func(t *testing.T, m *mirror) func() {
			m.reg.SetRawPackument("p", []byte(`{"name":"p","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"dist":{"tarb`))
			return func() { m.reg.SetRawPackument("p", nil) }
		}},
		{name: "packument of another package", status: 503, code: "upstream_unavailable", apply: func(t *testing.T, m *mirror) func() {
			m.reg.SetRawPackument("p", []byte(`{"name":"evil","versions":{}}`))
			return func() { m.reg.SetRawPackument("p", nil) }
		}},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			m := newMirror(t, upstreamTimeouts)
			m.reg.Publish("p", "1.0.0", tb.Package(t, upFiles))
			clear := f.apply(t, m)
			a := m.explore(`{"action":"read","packageName":"p","version":"^1","path":"index.js"}`)
			upstreamDown(t, "while failing", a, f.status, f.code)
			if f.retryAfter != "" && a.header.Get("Retry-After") != f.retryAfter {
				t.Errorf("Retry-After %q, want the registry's %q", a.header.Get("Retry-After"), f.retryAfter)
			}
			noPartial(t, m.app.Store, "p", "1.0.0", len(upFiles))
			clear()
			a = m.explore(`{"action":"read","packageName":"p","version":"^1","path":"index.js"}`)
			if a.status != http.StatusOK || !strings.Contains(string(a.body), "module.exports = 42;") {
				t.Fatalf("once the registry is well: %v (a failure was remembered)", a)
			}
			m.stored(t, "p", "1.0.0")
			whole(t, m.app.Store, "p", "1.0.0")
		})
	}
}

// TestTarballFaults: the packument is fine, the tarball download is not:
// it stalls, is cut short, or dribbles in a byte at a time (bounded by
// tarball-timeout); or its bytes do not match dist.integrity.
func TestTarballFaults(t *testing.T) {
	tgz := tb.Package(t, upFiles)
	for _, mode := range []fakeregistry.Mode{fakeregistry.Cut, fakeregistry.Dribble} {
		t.Run(string(mode), func(t *testing.T) {
			ts := fakeregistry.NewTarballHost(t, tgz, mode)
			m := newMirror(t, upstreamTimeouts, func(c *config.Config) { c.AllowedTarballHosts = []string{ts.Host()} })
			m.reg.Publish("p", "1.0.0", tgz, fakeregistry.WithTarballURL(ts.URL()))
			upstreamDown(t, string(mode), m.get("/v1/npm/p@1.0.0/index.js"), 503, "upstream_unavailable")
			noPartial(t, m.app.Store, "p", "1.0.0", len(upFiles))
			ts.Set(fakeregistry.Whole)
			if a := m.get("/v1/npm/p@1.0.0/index.js"); a.status != 200 || string(a.body) != upFiles["index.js"] {
				t.Fatalf("once the tarball is whole: %v", a)
			}
		})
	}
	t.Run("stall", func(t *testing.T) {
		m := newMirror(t, upstreamTimeouts)
		m.reg.Publish("p", "1.0.0", tgz)
		m.reg.Publish("p", "2.0.0", tb.Package(t, map[string]string{"index.js": "two\n"}))
		if a := m.get("/v1/npm/p@1.0.0/index.js"); a.status != 200 {
			t.Fatalf("first version: %v", a)
		}
		// The packument is cached now; only the tarball meets the hold.
		release := m.reg.Hold("p")
		upstreamDown(t, "stalled tarball", m.get("/v1/npm/p@2.0.0/index.js"), 503, "upstream_unavailable")
		noPartial(t, m.app.Store, "p", "2.0.0", 1)
		release()
		if a := m.get("/v1/npm/p@2.0.0/index.js"); a.status != 200 || string(a.body) != "two\n" {
			t.Fatalf("after the stall: %v", a)
		}
	})
	t.Run("integrity mismatch", func(t *testing.T) {
		m := newMirror(t)
		m.reg.Publish("p", "1.0.0", tgz, fakeregistry.WithIntegrity("sha512-"+strings.Repeat("A", 86)+"=="))
		for i := range 2 {
			upstreamDown(t, "mismatch", m.get("/v1/npm/p@1.0.0/index.js"), 502, "upstream_integrity")
			noPartial(t, m.app.Store, "p", "1.0.0", len(upFiles))
			// The failure is remembered for failed-retry-after (the same
			// bytes fail again), never as a 404: one download, two 502s.
			if n := m.reg.TarballDownloads("p", "1.0.0"); n != 1 {
				t.Errorf("request %d: %d downloads, want 1", i+1, n)
			}
		}
		if v, err := m.app.Store.Version(t.Context(), "p", "1.0.0"); err != nil || v.State != store.StateFailed {
			t.Errorf("Version = %+v, %v; want it recorded as failed, for operators", v, err)
		}
	})
}

// TestBreakerStopsHammeringAStalledRegistry: a registry that stops
// answering costs each of the first BreakerFailures (5) requests an
// upstream-timeout; then the mirror answers 503 at once, sending nothing,
// until the cooldown (30s) lets a probe through. The probe and the close
// are tested with a fake clock in internal/upstream.
func TestBreakerStopsHammeringAStalledRegistry(t *testing.T) {
	m := newMirror(t, upstreamTimeouts)
	release := m.reg.Hold("p")
	defer release()
	for i := range 5 {
		upstreamDown(t, "stalled "+strconv.Itoa(i+1), m.explore(`{"action":"list","packageName":"p"}`), 503, "upstream_unavailable")
	}
	sent := m.reg.PackumentRequests("p") + m.reg.PackumentRequests("other")
	for _, name := range []string{"p", "other"} {
		a := m.explore(`{"action":"list","packageName":"` + name + `"}`)
		upstreamDown(t, "breaker open, "+name, a, 503, "upstream_unavailable")
		if !strings.Contains(string(a.body), "circuit breaker open") {
			t.Errorf("%s: %v, want the breaker's refusal", name, a)
		}
		if ra, _ := strconv.Atoi(a.header.Get("Retry-After")); ra < 1 || ra > 30 {
			t.Errorf("%s: Retry-After %q, want the cooldown left (≤ 30s)", name, a.header.Get("Retry-After"))
		}
	}
	if now := m.reg.PackumentRequests("p") + m.reg.PackumentRequests("other"); now != sent {
		t.Errorf("the open breaker let %d requests through", now-sent)
	}
}
