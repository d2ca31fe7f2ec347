package ratelimit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/auth"
	"github.com/pkgscope/pkgscope/internal/faultproxy"
	"github.com/pkgscope/pkgscope/internal/redisconn"
	"github.com/pkgscope/pkgscope/internal/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// server is an Echo instance behind the limiter, on the test Redis (or
// addr, a fault proxy, when not ""). Its rate keys are deleted at the end.
func server(t *testing.T, addr string, opt Options) (*echo.Echo, *Limiter) {
	t.Helper()
	prefix := redistest.Prefix(t)
	if addr == "" {
		addr = redistest.Addr(t)
	}
	ro := redisconn.DefaultOptions()
	ro.URL, ro.Prefix = "redis://"+addr+"/0", prefix
	rc, err := redisconn.Open(ro)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	rdb := redistest.Client(t)
	t.Cleanup(func() {
		// redis_rate puts "rate:" before our prefix.
		keys := rdb.Keys(context.Background(), "rate:"+prefix+"*").Val()
		if len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	})
	l := New(rc, opt)
	e := echo.New()
	e.Use(l.Middleware())
	ok := func(c echo.Context) error { return c.String(http.StatusOK, "ok") }
	e.GET("/v1/x", ok)
	e.GET("/healthz", ok)
	// A request that submits ?items=N items, charged once counted.
	e.GET("/v1/items", func(c echo.Context) error {
		n, _ := strconv.Atoi(c.QueryParam("items"))
		if err := ChargeItems(c.Request().Context(), n, "a request of "+c.QueryParam("items")+" items"); err != nil {
			return err
		}
		return ok(c)
	})
	return e, l
}

func get(e *echo.Echo, path, token, remote string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.RemoteAddr = remote + ":12345"
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

func TestBurstThen429WithRetryAfter(t *testing.T) {
	e, l := server(t, "", Options{PerMinute: 6, Burst: 3, KeyByToken: true})
	for i := range 3 {
		if rec := get(e, "/v1/x", "tok-a", "10.0.0.1"); rec.Code != http.StatusOK {
			t.Fatalf("request %d of the burst: %d", i+1, rec.Code)
		}
	}
	rec := get(e, "/v1/x", "tok-a", "10.0.0.1")
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("request past the burst: %d, want 429", rec.Code)
	}
	// 6 per minute: the next request is allowed in 10s.
	if ra, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || ra < 1 || ra > 10 {
		t.Errorf("Retry-After = %q, want 1..10 seconds", rec.Header().Get("Retry-After"))
	}
	if !strings.Contains(rec.Body.String(), "rate-limit-per-minute") {
		t.Errorf("body %q does not name the setting", rec.Body.String())
	}
	// Another token has its own bucket, even from the same address.
	if rec := get(e, "/v1/x", "tok-b", "10.0.0.1"); rec.Code != http.StatusOK {
		t.Errorf("another token: %d", rec.Code)
	}
	// Health checks are never limited.
	if rec := get(e, "/healthz", "tok-a", "10.0.0.1"); rec.Code != http.StatusOK {
		t.Errorf("healthz: %d", rec.Code)
	}
	if s := l.Stats(); s.Allowed != 4 || s.Limited != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestItemsCostOnePerItemsPerRequest: a request submitting many items
// (a warm request's packages) costs one request per ItemsPerRequest of
// them from the caller's one bucket; one costing more than the burst is a
// 413 saying the most a request may carry; one its bucket cannot pay is a 429 naming rate-limit-warm-items, with a Retry-After
// after which the same request is let in.
func TestItemsCostOnePerItemsPerRequest(t *testing.T) {
	e, l := server(t, "", Options{PerMinute: 6, Burst: 10, KeyByToken: true, ItemsPerRequest: 100})
	for _, tc := range []struct {
		items, remaining int
	}{
		{1, 9},   // one request, as any other
		{250, 6}, // three
		{600, 0}, // six
	} {
		rec := get(e, "/v1/items?items="+strconv.Itoa(tc.items), "tok-a", "10.0.0.1")
		if rec.Code != http.StatusOK || rec.Header().Get("RateLimit-Remaining") != strconv.Itoa(tc.remaining) {
			t.Fatalf("%d items: %d, remaining %q; want 200 and %d left", tc.items, rec.Code, rec.Header().Get("RateLimit-Remaining"), tc.remaining)
		}
	}
	if rec := get(e, "/v1/x", "tok-a", "10.0.0.1"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("a plain request after the items spent the bucket: %d, want 429", rec.Code)
	}

	// Items costing the whole burst are let in on a full bucket; one more
	// item than the burst can pay is refused for good (413), whatever is
	// left, saying the most a request may carry: charging it the burst
	// would let 20,000 items through for the price of 1,000. Nothing is
	// charged for the refused items, only the door.
	if rec := get(e, "/v1/items?items=1000", "tok-b", "10.0.0.1"); rec.Code != http.StatusOK {
		t.Errorf("1000 items on a full bucket of 10: %d %s, want 200", rec.Code, rec.Body)
	}
	for _, items := range []int{1001, 20000} {
		rec := get(e, "/v1/items?items="+strconv.Itoa(items), "tok-d", "10.0.0.1")
		if rec.Code != http.StatusRequestEntityTooLarge || rec.Header().Get("Retry-After") != "" ||
			!strings.Contains(rec.Body.String(), "a request may carry at most 1000 packages (rate-limit-burst 10 × rate-limit-warm-items 100); split it") {
			t.Errorf("%d items on a bucket of 10: %d %q %s, want 413 saying 1000 at most, no Retry-After", items, rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
	}
	if rec := get(e, "/v1/items?items=800", "tok-d", "10.0.0.1"); rec.Code != http.StatusOK {
		t.Errorf("800 items after two refused requests spent only their doors: %d %s, want 200", rec.Code, rec.Body)
	}

	// A bucket short of the items: refused by the charge, naming its
	// setting, with a wait (at 6 per minute, a unit per 10 s) that
	// covers the units the items lack and the retry's own request.
	get(e, "/v1/x", "tok-c", "10.0.0.1")
	get(e, "/v1/x", "tok-c", "10.0.0.1") // 8 left
	rec := get(e, "/v1/items?items=1000", "tok-c", "10.0.0.1")
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "a request of 1000 items counts as 10 requests (one per 100, setting rate-limit-warm-items)") {
		t.Fatalf("1000 items with 8 requests left: %d %s, want 429 naming rate-limit-warm-items", rec.Code, rec.Body)
	}
	if ra, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || ra <= 20 || ra > 30 {
		t.Errorf("Retry-After = %q, want 21..30 s (2 units the items lack and 1 for the retry, less what refilled meanwhile)", rec.Header().Get("Retry-After"))
	}
	if s := l.Stats(); s.Limited != 2 {
		t.Errorf("stats %+v, want the two refusals counted", s)
	}

	// Without the middleware (limits off, background work) nothing is charged.
	if err := ChargeItems(t.Context(), 1_000_000, "x"); err != nil {
		t.Errorf("ChargeItems outside a request: %v", err)
	}
}

func TestUnverifiedTokensDoNotGetTheirOwnBuckets(t *testing.T) {
	e, _ := server(t, "", Options{PerMinute: 60, Burst: 2})
	for i, tok := range []string{"made-up-1", "made-up-2"} {
		if rec := get(e, "/v1/x", tok, "10.0.0.2"); rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d", i, rec.Code)
		}
	}
	if rec := get(e, "/v1/x", "made-up-3", "10.0.0.2"); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("a fresh made-up token escaped the address's limit: %d", rec.Code)
	}
	if rec := get(e, "/v1/x", "", "10.0.0.3"); rec.Code != http.StatusOK {
		t.Errorf("another address: %d", rec.Code)
	}
	// X-Forwarded-For is not trusted without an IPExtractor.
	req := httptest.NewRequest(http.MethodGet, "/v1/x", nil)
	req.RemoteAddr = "10.0.0.2:1"
	req.Header.Set("X-Forwarded-For", "192.0.2.77")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusTooManyRequests {
		t.Errorf("a forged X-Forwarded-For escaped the limit: %d", rec.Code)
	}
}

func TestRedisDownFailsOpen(t *testing.T) {
	p, err := faultproxy.New(redistest.Addr(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	e, l := server(t, p.Addr(), Options{PerMinute: 1, Burst: 1})
	p.Kill()
	for i := range 5 {
		if rec := get(e, "/v1/x", "", "10.0.0.4"); rec.Code != http.StatusOK {
			t.Fatalf("request %d with Redis down: %d, want it allowed", i, rec.Code)
		}
	}
	if s := l.Stats(); s.FailedOpen != 5 {
		t.Errorf("stats %+v, want 5 failed open", s)
	}
}

func TestOffWhenZero(t *testing.T) {
	if l := New(nil, Options{}); l != nil {
		t.Fatal("a zero rate built a limiter")
	}
}

// TestPageCookieCallersKeyedByToken: the web pages' token comes in the
// login cookie, which auth verifies; the limiter keys those requests by
// that token, not by the address they share behind a load balancer, and a
// token sent as a cookie and as a header is one caller.
func TestPageCookieCallersKeyedByToken(t *testing.T) {
	toks, err := auth.ParseList("page-user-a-token,page-user-b-token")
	if err != nil {
		t.Fatal(err)
	}
	set, err := auth.NewSet(toks)
	if err != nil {
		t.Fatal(err)
	}
	prefix := redistest.Prefix(t)
	ro := redisconn.DefaultOptions()
	ro.URL, ro.Prefix = "redis://"+redistest.Addr(t)+"/0", prefix
	rc, err := redisconn.Open(ro)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	rdb := redistest.Client(t)
	t.Cleanup(func() {
		if keys := rdb.Keys(context.Background(), "rate:"+prefix+"*").Val(); len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	})
	l := New(rc, Options{PerMinute: 60, Burst: 2, KeyByToken: true})
	e := echo.New()
	// A session of the web page acts with its token's identity
	// (internal/session); here the cookie names the token's session.
	session := func(_ context.Context, v string) (auth.Identity, bool, error) {
		id, ok := set.Verify(strings.TrimPrefix(v, "session-of-"))
		return id, ok, nil
	}
	e.Use(auth.Middleware(set, auth.Options{Cookie: "pkgscope_session", Session: session, Page: func(p string) bool { return strings.HasPrefix(p, "/browse/") }}))
	e.Use(l.Middleware())
	e.GET("/browse/*", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	page := func(cookie, header string) int {
		req := httptest.NewRequest(http.MethodGet, "/browse/x", nil)
		req.RemoteAddr = "10.9.9.9:1" // everyone comes through the same proxy
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: "pkgscope_session", Value: "session-of-" + cookie})
		}
		if header != "" {
			req.Header.Set("Authorization", "Bearer "+header)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec.Code
	}
	for i := range 2 {
		if code := page("page-user-a-token", ""); code != http.StatusOK {
			t.Fatalf("user a's request %d: %d", i+1, code)
		}
	}
	if code := page("page-user-a-token", ""); code != http.StatusTooManyRequests {
		t.Fatalf("user a past the burst: %d, want 429", code)
	}
	if code := page("page-user-b-token", ""); code != http.StatusOK {
		t.Errorf("user b, from the same address, was limited by user a's requests: %d", code)
	}
	if code := page("", "page-user-a-token"); code != http.StatusTooManyRequests {
		t.Errorf("user a's token in the header escaped its cookie's bucket: %d", code)
	}
}
