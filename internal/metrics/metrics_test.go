package metrics

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/cache"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/pglock"
	"github.com/pkgscope/pkgscope/internal/ratelimit"
	"github.com/pkgscope/pkgscope/internal/redisconn"
	"github.com/pkgscope/pkgscope/internal/redislock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestOutcome(t *testing.T) {
	for status, want := range map[int]string{
		0: "error", 200: "ok", 304: "ok", 404: "not_found", 429: "rate_limited",
		403: "client_error", 500: "server_error", 503: "server_error",
	} {
		if got := Outcome(status); got != want {
			t.Errorf("Outcome(%d) = %q, want %q", status, got, want)
		}
	}
}

func TestTransportCountsBySourceAndOutcome(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
		case "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	m := New()
	hc := &http.Client{Transport: m.Transport("registry", nil)}
	for _, p := range []string{"/ok", "/ok", "/missing", "/down"} {
		resp, err := hc.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// A refused connection: no answer at all.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	if _, err := hc.Get(deadURL); err == nil {
		t.Fatal("a closed server answered")
	}
	hc.CloseIdleConnections()
	m.CountUpstream("jsdelivr", "ok")
	text := scrape(t, m)
	hasSeries(t, text,
		`pkgscope_upstream_requests_total{outcome="ok",source="registry"} 2`,
		`pkgscope_upstream_requests_total{outcome="not_found",source="registry"} 1`,
		`pkgscope_upstream_requests_total{outcome="server_error",source="registry"} 1`,
		`pkgscope_upstream_requests_total{outcome="error",source="registry"} 1`,
		`pkgscope_upstream_requests_total{outcome="ok",source="jsdelivr"} 1`,
		`pkgscope_upstream_request_duration_seconds_count{source="registry"} 5`,
	)
}

func TestFillerAndIndexBuilds(t *testing.T) {
	m := New()
	boom := errors.New("boom")
	f := m.Filler(fill.FillerFunc(func(_ context.Context, name, _ string) error {
		if name == "bad" {
			return boom
		}
		return nil
	}))
	if err := f.Fill(t.Context(), "good", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := f.Fill(t.Context(), "bad", "1.0.0"); !errors.Is(err, boom) {
		t.Fatalf("the decorator changed the error: %v", err)
	}
	m.ObserveIndexBuild(time.Second, nil)
	text := scrape(t, m)
	hasSeries(t, text,
		`pkgscope_fill_duration_seconds_count{outcome="ok"} 1`,
		`pkgscope_fill_duration_seconds_count{outcome="error"} 1`,
		`pkgscope_index_build_duration_seconds_count{outcome="ok"} 1`,
		`pkgscope_index_build_duration_seconds_sum{outcome="ok"} 1`,
	)
}

// hasSeries reports each of want that text, a scrape, lacks.
func hasSeries(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("/metrics lacks %s", w)
		}
	}
}

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	return rec.Body.String()
}

// TestMiddlewareRecordsTheStatusSent: an error returned by a handler or a
// middleware after it is rendered once, by the app's error handler, and
// recorded with the status that handler chose.
func TestMiddlewareRecordsTheStatusSent(t *testing.T) {
	m := New()
	e := echo.New()
	handled := 0
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		handled++
		_ = c.NoContent(http.StatusTeapot)
	}
	e.Use(m.Middleware())
	e.POST("/v1/explore", func(c echo.Context) error {
		c.Set(ActionKey, c.QueryParam("a"))
		if c.QueryParam("fail") != "" {
			return errors.New("failed")
		}
		return c.NoContent(http.StatusOK)
	})
	for _, q := range []string{"?a=read", "?a=read", "?a=grep&fail=1", "?a=" + strings.Repeat("x", 300)} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/explore"+q, nil))
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/no/such/route", nil))
	if handled != 2 {
		t.Errorf("error handler ran %d times, want 2 (once per failed request)", handled)
	}
	text := scrape(t, m)
	hasSeries(t, text,
		`pkgscope_http_request_duration_seconds_count{action="read",route="/v1/explore",status="200"} 2`,
		`pkgscope_http_request_duration_seconds_count{action="grep",route="/v1/explore",status="418"} 1`,
		`pkgscope_http_request_duration_seconds_count{action="invalid",route="/v1/explore",status="200"} 1`,
	)
	// Unrouted paths share one label value, whatever the path.
	if strings.Contains(text, "/no/such/route") {
		t.Error("an unrouted path became a label value")
	}
}

func TestScrapeTimeCollectors(t *testing.T) {
	m := New()
	stats := cache.Stats{
		Local: cache.LayerStats{Hits: 3, Misses: 1}, Redis: cache.LayerStats{Hits: 0, Misses: 1, Errors: 2},
		Loads: 1, LocalBytes: 4096, LocalEntries: 2, Breaker: redisconn.BreakerStats{Open: true, Incidents: 1},
	}
	m.WatchCache(func() cache.Stats { return stats })
	m.WatchRateLimit(func() ratelimit.Stats { return ratelimit.Stats{Allowed: 5, Limited: 1} })
	depth, depthErr := 7, error(nil)
	m.WatchQueue(func(ctx context.Context) (int, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the queue query has no deadline")
		}
		return depth, depthErr
	})
	text := scrape(t, m)
	hasSeries(t, text,
		`pkgscope_cache_requests_total{layer="local",result="hit"} 3`,
		`pkgscope_cache_requests_total{layer="redis",result="miss"} 1`,
		`pkgscope_cache_hit_ratio{layer="local"} 0.75`,
		`pkgscope_cache_hit_ratio{layer="redis"} 0`,
		`pkgscope_cache_errors_total{layer="redis"} 2`,
		`pkgscope_cache_local_bytes 4096`,
		`pkgscope_redis_breaker_open 1`,
		`pkgscope_redis_incidents_total 1`,
		`pkgscope_ratelimit_requests_total{result="limited"} 1`,
		`pkgscope_warm_queue_depth 7`,
	)
	// A failing queue query leaves the depth out (not a 0 that reads as
	// an empty queue) and counts; every other series is still served.
	depthErr = errors.New("db down")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusOK || strings.Contains(body, "pkgscope_warm_queue_depth ") {
		t.Errorf("failed queue query: %d, depth still shown:\n%s", rec.Code, body)
	}
	hasSeries(t, body, `pkgscope_warm_queue_depth_errors_total 1`, `pkgscope_cache_local_bytes 4096`, `pkgscope_ratelimit_requests_total{result="limited"} 1`)
}

// TestFillLockCounters: each wired lock's counters under its lock label;
// a lock not wired has no series (not zeros that would read as "never
// waited").
func TestFillLockCounters(t *testing.T) {
	m := New()
	m.WatchFillLocks(func() redislock.Stats { return redislock.Stats{Acquired: 4, Waited: 3, HandedOff: 2, TimedOut: 1} },
		func() pglock.Stats { return pglock.Stats{Acquired: 5, Busy: 6, Unavailable: 7} })
	text := scrape(t, m)
	hasSeries(t, text,
		`pkgscope_fill_lock_acquired_total{lock="redis"} 4`,
		`pkgscope_fill_lock_waits_total{lock="redis"} 3`,
		`pkgscope_fill_lock_handoffs_total{lock="redis"} 2`,
		`pkgscope_fill_lock_wait_timeouts_total{lock="redis"} 1`,
		`pkgscope_fill_lock_unavailable_total{lock="redis"} 0`,
		`pkgscope_fill_lock_acquired_total{lock="postgres"} 5`,
		`pkgscope_fill_lock_busy_total{lock="postgres"} 6`,
		`pkgscope_fill_lock_unavailable_total{lock="postgres"} 7`,
	)
	m = New()
	m.WatchFillLocks(func() redislock.Stats { return redislock.Stats{} }, nil)
	if text := scrape(t, m); !strings.Contains(text, `lock="redis"`) || strings.Contains(text, `lock="postgres"`) {
		t.Errorf("Redis lock alone: %s", text)
	}
	m.WatchFillLocks(nil, nil) // no lock: nothing registered, no panic
}

// TestFillSlotSeries: the fill slots' bound, use, waiters and refusals.
func TestFillSlotSeries(t *testing.T) {
	m := New()
	m.WatchFillSlots(func() fill.SlotStats { return fill.SlotStats{Max: 8, MaxWaiters: 64, InUse: 5, Waiting: 3, Refused: 2} })
	hasSeries(t, scrape(t, m),
		`pkgscope_fill_slots 8`,
		`pkgscope_fill_slots_in_use 5`,
		`pkgscope_fill_slot_waiters 3`,
		`pkgscope_fill_slot_refusals_total 2`,
	)
}

func TestNilMetricsRecordNothing(t *testing.T) {
	var m *Metrics
	m.CountUpstream("registry", "ok")
	m.ObserveIndexBuild(time.Second, nil)
	m.WatchCache(nil)
	f := fill.FillerFunc(func(context.Context, string, string) error { return nil })
	if err := m.Filler(f).Fill(t.Context(), "a", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if m.Transport("registry", nil) != http.DefaultTransport {
		t.Error("a nil Metrics wrapped the transport")
	}
	e := echo.New()
	e.Use(m.Middleware())
	e.GET("/", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusNoContent {
		t.Errorf("status %d", rec.Code)
	}
}

func TestPprof(t *testing.T) {
	rec := httptest.NewRecorder()
	Pprof().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/goroutine?debug=1", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "goroutine profile") {
		t.Errorf("pprof goroutine: %d", rec.Code)
	}
}
