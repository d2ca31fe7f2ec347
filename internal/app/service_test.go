package app

// Tests of the org-wide service's edges: bearer tokens on every route,
// /metrics, side listeners, and tokens kept out of logs.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/redistest"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/web"
)

// Tokens used below. They are distinctive so that a log search for them
// cannot match anything else.
const (
	goodToken   = "tok-GOOD-9f3a1c7e5b2d4f60"
	scopedToken = "tok-SCOPED-41b7e2a9c3d8f015"
	badToken    = "tok-BAD-7d2e9b4c1a6f3058"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// authedMirror is a mirror on the embedded store with tokens configured
// (one in a tokens file, scoped, one in PKGSCOPE_TOKENS), logging at
// debug level into logs, with lib@1.0.0 published in its fake registry.
type authedMirror struct {
	reg  *fakeregistry.Registry
	app  *App
	echo *echo.Echo
	logs *syncBuffer
}

func newAuthedMirror(t *testing.T, tweak ...func(*config.Config)) *authedMirror {
	t.Helper()
	reg := fakeregistry.New(t)
	reg.Publish("lib", "1.0.0", tarballtest.Package(t, map[string]string{
		"package.json": `{"name":"lib","version":"1.0.0"}`,
		"index.js":     "module.exports = 42;\n",
	}))
	tokensFile := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokensFile, []byte("# agents\n"+scopedToken+":@myorg\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.DataDir, cfg.ProjectDir = t.TempDir(), t.TempDir()
	cfg.TokensFile, cfg.Tokens = tokensFile, config.Secret(goodToken)
	for _, f := range tweak {
		f(&cfg)
	}
	env := reg.Env()
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := New(t.Context(), cfg, log, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	e, ok := a.Handler().(*echo.Echo)
	if !ok {
		t.Fatalf("Handler is a %T, want *echo.Echo (this test walks its routes)", a.Handler())
	}
	return &authedMirror{reg: reg, app: a, echo: e, logs: logs}
}

// do serves one request in-process.
func (m *authedMirror) do(method, path, token, body string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	switch {
	case strings.HasPrefix(body, "token="): // the login form
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	case body != "":
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	m.echo.ServeHTTP(rec, req)
	return rec
}

// routeCall is how the test calls one route, and what a caller holding a
// valid token gets.
type routeCall struct {
	path, body string
	status     int // with a valid token; 0: anything but 401 and 403
}

// knownRoutes are the routes this test knows how to call for a real
// answer, by "METHOD PATH-PATTERN". A route missing here is still checked
// (401 without a token, not 401 with one), with a request to its pattern.
var knownRoutes = map[string]routeCall{
	"GET /healthz":     {path: "/healthz", status: 200},
	"GET /readyz":      {path: "/readyz", status: 200},
	"GET /metrics":     {path: "/metrics", status: 200},
	"POST /v1/explore": {path: "/v1/explore", body: `{"action":"list","packageName":"lib","version":"1.0.0"}`, status: 200},
	"GET /v1/npm/*":    {path: "/v1/npm/lib@1.0.0/index.js", status: 200},
	"POST /mcp":        {path: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, status: 200},
	"GET /":            {path: "/", status: 200},
	"GET /browse/*":    {path: "/browse/lib@1.0.0/", status: 200},
	"GET /static/*":    {path: "/static/app.css", status: 200},
	"GET /login":       {path: "/login", status: 200},
	"POST /login":      {path: "/login", body: "token=" + goodToken, status: 303},
}

// param matches a route's :name segments.
var param = regexp.MustCompile(`:[^/]+`)

// open are the routes that answer without a token: the health checks,
// and the web page's login form with its static files.
var open = map[string]bool{"/healthz": true, "/readyz": true, "/login": true, "/robots.txt": true, "/static/*": true, "/static/highlight.css": true}

// TestAuthOnEveryRoute walks every route the real app registers: with
// tokens configured, each but the health checks answers 401 (with the
// challenge and the JSON error shape) without a token or with a wrong one,
// and answers normally with a valid one.
func TestAuthOnEveryRoute(t *testing.T) {
	m := newAuthedMirror(t)
	routes := m.echo.Routes()
	if len(routes) < len(knownRoutes) {
		t.Fatalf("only %d routes registered", len(routes))
	}
	seen := map[string]bool{}
	for _, r := range routes {
		if r.Method == echo.RouteNotFound {
			continue
		}
		key := r.Method + " " + r.Path
		seen[key] = true
		call, known := knownRoutes[key]
		// Every GET route answers HEAD as GET (api.headAsGet).
		asGet := r.Method == http.MethodGet || r.Method == http.MethodHead
		if !known && r.Method == http.MethodHead {
			call, known = knownRoutes["GET "+r.Path]
		}
		if !known {
			call = routeCall{path: param.ReplaceAllString(strings.ReplaceAll(r.Path, "*", "x"), "x")}
		}
		t.Run(key, func(t *testing.T) {
			for _, tok := range []string{"", badToken} {
				rec := m.do(r.Method, call.path, tok, call.body)
				switch {
				case open[r.Path] && asGet:
					if rec.Code != http.StatusOK {
						t.Errorf("token %q: %d, want 200 (open route)", tok, rec.Code)
					}
				case open[r.Path]: // POST /login checks the token it is given
				case web.IsPage(call.path) && asGet:
					// A browser without a token is sent to the login form.
					if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/login?next=") {
						t.Errorf("token %q: %d to %q, want 303 to the login form", tok, rec.Code, loc)
					}
				default:
					checkUnauthorized(t, rec, r.Method)
				}
			}
			rec := m.do(r.Method, call.path, goodToken, call.body)
			switch {
			case call.status != 0 && rec.Code != call.status:
				t.Errorf("with a valid token: %d %s, want %d", rec.Code, rec.Body, call.status)
			case rec.Code == http.StatusUnauthorized || rec.Code == http.StatusForbidden:
				t.Errorf("with a valid token: %d %s", rec.Code, rec.Body)
			}
		})
	}
	for key := range knownRoutes {
		if !seen[key] {
			t.Errorf("route %s is no longer registered: update knownRoutes", key)
		}
	}
	// A scope-limited token is a valid token, limited to its scopes: lib
	// is outside @myorg (TestPrivateScopeNeedsItsToken covers the rest),
	// also once a token that may read it has read the file twice, the
	// second time from the answer the mirror holds (raw-answer-bytes).
	const raw = "/v1/npm/lib@1.0.0/index.js"
	for range 2 {
		if rec := m.do("GET", raw, goodToken, ""); rec.Code != http.StatusOK {
			t.Errorf("GET %s with a valid token: %d %s", raw, rec.Code, rec.Body)
		}
	}
	if rec := m.do("GET", raw, scopedToken, ""); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), `"forbidden"`) {
		t.Errorf("scoped token outside its scopes: %d %s, want 403 forbidden", rec.Code, rec.Body)
	}
}

func checkUnauthorized(t *testing.T, rec *httptest.ResponseRecorder, method string) {
	t.Helper()
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("%d %s, want 401", rec.Code, rec.Body)
		return
	}
	if ch := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(ch, `Bearer realm="pkgscope"`) {
		t.Errorf("WWW-Authenticate %q", ch)
	}
	if method == http.MethodHead {
		return
	}
	var body struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error.Code != "unauthorized" || body.Error.Message == "" {
		t.Errorf("body %s, want {\"error\":{\"code\":\"unauthorized\",\"message\":...}}", rec.Body)
	}
	if strings.Contains(rec.Body.String(), badToken) {
		t.Errorf("the answer echoes the token: %s", rec.Body)
	}
}

// TestTokensNeverLogged drives successes, refusals and failures through a
// mirror logging at debug level, with an access line for every request,
// then searches the logs for the tokens.
func TestTokensNeverLogged(t *testing.T) {
	m := newAuthedMirror(t, func(c *config.Config) { c.AccessLog = true })
	m.reg.Fail("down", http.StatusServiceUnavailable, "")
	for _, tok := range []string{goodToken, scopedToken, badToken, ""} {
		m.do("POST", "/v1/explore", tok, `{"action":"read","packageName":"lib","version":"1.0.0","path":"index.js"}`)
		m.do("POST", "/v1/explore", tok, `{"action":"list","packageName":"down","version":"1.0.0"}`) // 503
		m.do("POST", "/v1/explore", tok, `{"action":"nope"}`)                                        // 400
		m.do("GET", "/v1/npm/lib@9.9.9/index.js", tok, "")                                           // 404
		m.do("GET", "/metrics", tok, "")
	}
	logs := m.logs.String()
	if !strings.Contains(logs, `"status":503`) || !strings.Contains(logs, `"status":401`) {
		t.Fatalf("the logs do not show the requests made; is the logger wired? %s", logs)
	}
	for _, tok := range []string{goodToken, scopedToken, badToken} {
		if strings.Contains(logs, tok) {
			t.Errorf("token %q appears in the logs:\n%s", tok, logs)
		}
	}
	// Nor does a configuration dump: the env tokens are a config.Secret.
	cfg := config.Default()
	cfg.Tokens = config.Secret(goodToken)
	var dump bytes.Buffer
	slog.New(slog.NewTextHandler(&dump, nil)).Info("config", "cfg", cfg, "tokens", cfg.Tokens)
	if strings.Contains(dump.String(), goodToken) {
		t.Errorf("a logged config shows the token: %s", dump.String())
	}
}

// TestMetricsSeries makes a few requests of each kind, then reads /metrics
// and finds each named series with the labels those requests produce.
func TestMetricsSeries(t *testing.T) {
	m := newAuthedMirror(t)
	m.reg.Publish("big", "1.0.0", tarballtest.Package(t, map[string]string{"a.txt": "needle\n"}))
	for range 2 {
		for _, body := range []string{
			`{"action":"list","packageName":"lib","version":"1.0.0"}`,
			`{"action":"read","packageName":"lib","version":"1.0.0","path":"index.js"}`,
			`{"action":"grep","packageName":"big","version":"1.0.0","pattern":"needle"}`,
		} {
			if rec := m.do("POST", "/v1/explore", goodToken, body); rec.Code != 200 {
				t.Fatalf("%s: %d %s", body, rec.Code, rec.Body)
			}
		}
	}
	m.do("POST", "/v1/explore", goodToken, `{"action":"made-up-action"}`)
	m.do("GET", "/v1/npm/lib@1.0.0/index.js", "", "")
	// Refused by the body limit, before auth: counted too.
	if rec := m.do("POST", "/v1/explore", goodToken, `{"pattern":"`+strings.Repeat("x", 1<<20)+`"}`); rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over max-body-bytes: %d %s", rec.Code, rec.Body)
	}
	// The first grep was answered from a scan index while the full one
	// builds behind it: join that build, whose metric is checked below.
	for _, name := range []string{"big", "lib"} {
		if err := m.app.EnsureIndex(t.Context(), name, "1.0.0"); err != nil {
			t.Fatalf("the full index build of %s: %v", name, err)
		}
	}
	// The first answers may also come before the store's commit (from the
	// verified download); the fill's metric is recorded once the whole
	// fill returned, after the commit EnsureIndex waits for: wait for it.
	if err := m.app.core.Fills.Wait(t.Context()); err != nil {
		t.Fatalf("waiting for the fills to end: %v", err)
	}
	rec := m.do("GET", "/metrics", goodToken, "")
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	text := rec.Body.String()
	for _, want := range []string{
		`pkgscope_http_request_duration_seconds_count{action="list",route="/v1/explore",status="200"} 2`,
		`pkgscope_http_request_duration_seconds_count{action="read",route="/v1/explore",status="200"} 2`,
		`pkgscope_http_request_duration_seconds_count{action="grep",route="/v1/explore",status="200"} 2`,
		`pkgscope_http_request_duration_seconds_count{action="invalid",route="/v1/explore",status="400"} 1`,
		`pkgscope_http_request_duration_seconds_count{action="",route="/v1/npm/*",status="401"} 1`,
		`pkgscope_http_request_duration_seconds_count{action="",route="/v1/explore",status="413"} 1`,
		`pkgscope_upstream_requests_total{outcome="ok",source="registry"} 4`, // 2 packuments, 2 tarballs
		`pkgscope_upstream_request_duration_seconds_count{source="registry"} 4`,
		`pkgscope_fill_duration_seconds_count{outcome="ok"} 2`,
		`pkgscope_index_build_duration_seconds_count{outcome="ok"}`,
		`pkgscope_cache_requests_total{layer="local",result="hit"}`,
		`pkgscope_cache_requests_total{layer="local",result="miss"}`,
		`pkgscope_cache_hit_ratio{layer="local"}`,
		`pkgscope_cache_loads_total`,
		`pkgscope_redis_breaker_open 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The hit counter moved: the second round was served from the cache.
	if hits := regexp.MustCompile(`pkgscope_cache_requests_total\{layer="local",result="hit"\} (\d+)`).FindStringSubmatch(text); hits == nil || hits[1] == "0" {
		t.Errorf("no local cache hits recorded: %v", hits)
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", grepLines(text, "pkgscope_"))
	}
}

// TestFillLockSeries: with Postgres and Redis, one cold fill takes both
// fill locks, and /metrics shows each lock's counters, the Postgres
// lock's busy counter (fills past pg-lock-conns) among them.
func TestFillLockSeries(t *testing.T) {
	m := newAuthedMirror(t, func(c *config.Config) {
		c.DatabaseURL, c.RedisURL, c.RedisPrefix = pgtest.URL(t), redistest.URL(t), redistest.Prefix(t)
	})
	if rec := m.do("POST", "/v1/explore", goodToken, `{"action":"list","packageName":"lib","version":"1.0.0"}`); rec.Code != 200 {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	text := m.do("GET", "/metrics", goodToken, "").Body.String()
	for _, want := range []string{
		`pkgscope_fill_lock_acquired_total{lock="redis"} 1`,
		`pkgscope_fill_lock_acquired_total{lock="postgres"} 1`,
		`pkgscope_fill_lock_waits_total{lock="postgres"} 0`,
		`pkgscope_fill_lock_handoffs_total{lock="redis"} 0`,
		`pkgscope_fill_lock_wait_timeouts_total{lock="redis"} 0`,
		`pkgscope_fill_lock_unavailable_total{lock="postgres"} 0`,
		`pkgscope_fill_lock_busy_total{lock="postgres"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", grepLines(text, "pkgscope_fill_lock"))
	}
}

func grepLines(text, prefix string) string {
	var out []string
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestMetricsAddrMovesMetricsOffTheAPI: with metrics-addr, /metrics is
// served there without a token and not on the API; pprof shares the
// listener when given the same address.
func TestMetricsAddrMovesMetricsOffTheAPI(t *testing.T) {
	m := newAuthedMirror(t, func(c *config.Config) { c.MetricsAddr, c.PprofAddr = "127.0.0.1:0", "127.0.0.1:0" })
	if rec := m.do("GET", "/metrics", goodToken, ""); rec.Code != http.StatusNotFound {
		t.Errorf("/metrics on the API: %d, want 404", rec.Code)
	}
	cfg := config.Default()
	cfg.MetricsAddr, cfg.PprofAddr = "127.0.0.1:0", "127.0.0.1:0"
	addrs, stop, err := serveSide(cfg, m.app.Metrics, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if len(addrs) != 1 {
		t.Fatalf("listeners %v, want one shared by metrics and pprof", addrs)
	}
	base := "http://" + addrs["127.0.0.1:0"]
	for path, want := range map[string]string{"/metrics": "pkgscope_", "/debug/pprof/": "goroutine"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("GET %s on the side listener: %d, body lacks %q", path, resp.StatusCode, want)
		}
	}
}

// TestAuthRunsBeforeRateLimits: a refused token never reaches the limiter
// (so made-up tokens cannot spend a real caller's budget), and each valid
// token has its own bucket.
func TestAuthRunsBeforeRateLimits(t *testing.T) {
	prefix := redistest.Prefix(t)
	m := newAuthedMirror(t, func(c *config.Config) {
		c.RedisURL, c.RedisPrefix = redistest.URL(t), prefix
		c.RateLimitPerMinute, c.RateLimitBurst = 60, 2
	})
	rdb := redistest.Client(t)
	t.Cleanup(func() {
		// redis_rate puts "rate:" before our prefix.
		if keys := rdb.Keys(context.Background(), "rate:"+prefix+"*").Val(); len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	})
	for range 5 {
		if rec := m.do("GET", "/v1/npm/lib@1.0.0/index.js", badToken, ""); rec.Code != http.StatusUnauthorized {
			t.Fatalf("bad token: %d, want 401", rec.Code)
		}
	}
	if s := m.app.RateLimit.Stats(); s.Allowed+s.Limited+s.FailedOpen != 0 {
		t.Errorf("refused requests reached the limiter: %+v", s)
	}
	for i := range 2 {
		if rec := m.do("GET", "/v1/npm/lib@1.0.0/index.js", goodToken, ""); rec.Code != http.StatusOK {
			t.Fatalf("request %d within the burst: %d %s", i+1, rec.Code, rec.Body)
		}
	}
	if rec := m.do("GET", "/v1/npm/lib@1.0.0/index.js", goodToken, ""); rec.Code != http.StatusTooManyRequests {
		t.Errorf("past the burst: %d, want 429", rec.Code)
	}
	// Same client address, another token: its own bucket, so it passes
	// the limiter (and is then refused lib, outside its scope: 403).
	if rec := m.do("GET", "/v1/npm/lib@1.0.0/index.js", scopedToken, ""); rec.Code != http.StatusForbidden {
		t.Errorf("another token after the first ran out: %d, want 403 from its scope, not 429", rec.Code)
	}
}
