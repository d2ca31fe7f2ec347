package upstream

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/unavailable"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a Config.Clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is one test's world: a fake registry that npm is configured with,
// optional .npmrc lines, and a client whose connections close at the end.
type env struct {
	reg   *fakeregistry.Registry
	clock *fakeClock
	c     *Client
}

func newEnv(t *testing.T, cfg Config, npmrcLines ...string) *env {
	t.Helper()
	reg := fakeregistry.New(t)
	return newEnvFor(t, reg, reg.URL(), cfg, npmrcLines...)
}

func newEnvFor(t *testing.T, reg *fakeregistry.Registry, registryURL string, cfg Config, npmrcLines ...string) *env {
	t.Helper()
	dir := t.TempDir()
	if len(npmrcLines) > 0 {
		if err := os.WriteFile(filepath.Join(dir, ".npmrc"), []byte(strings.Join(npmrcLines, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	npm, err := npmrc.Load(dir, func(k string) string {
		if k == "npm_config_registry" {
			return registryURL
		}
		return ""
	})
	if err != nil {
		t.Fatalf("npmrc.Load: %v", err)
	}
	clock := newClock()
	if cfg.Clock == nil {
		cfg.Clock = clock.Now
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &env{reg: reg, clock: clock, c: New(npm, cfg, &http.Client{Transport: tr})}
}

// nerf is the npmrc credential prefix of a registry URL: "//host:port/".
func nerf(u string) string { return strings.TrimPrefix(strings.TrimPrefix(u, "http:"), "https:") }

func tgz(t *testing.T, files ...string) []byte {
	t.Helper()
	m := map[string]string{"package.json": "{}"}
	for _, f := range files {
		m[f] = f
	}
	return tarballtest.Package(t, m)
}

func TestPackumentScopedAndPlain(t *testing.T) {
	e := newEnv(t, Config{})
	e.reg.Publish("@scope/pkg", "1.0.0", tgz(t, "a.js"))
	e.reg.Publish("@scope/pkg", "1.1.0", tgz(t, "b.js"), fakeregistry.Deprecated("old"))
	e.reg.Publish("plain", "2.0.0-rc.1", tgz(t), fakeregistry.WithTag("next"))
	e.reg.Publish("plain", "1.0.0", tgz(t))

	p, err := e.c.Packument(context.Background(), "@scope/pkg")
	if err != nil {
		t.Fatalf("Packument: %v", err)
	}
	if p.Name != "@scope/pkg" || p.DistTags["latest"] != "1.1.0" || len(p.Versions) != 2 {
		t.Errorf("packument = %+v", p)
	}
	v := p.Versions["1.1.0"]
	if v.Version != "1.1.0" || v.Deprecated != "old" || !strings.HasPrefix(v.Dist.Integrity, "sha512-") ||
		v.Dist.Tarball != e.reg.URL()+"@scope/pkg/-/pkg-1.1.0.tgz" || v.Dist.FileCount != 2 {
		t.Errorf("version 1.1.0 = %+v", v)
	}
	p, err = e.c.Packument(context.Background(), "plain")
	if err != nil {
		t.Fatalf("Packument: %v", err)
	}
	if p.DistTags["latest"] != "1.0.0" || p.DistTags["next"] != "2.0.0-rc.1" {
		t.Errorf("dist-tags = %v", p.DistTags)
	}
}

func TestPackumentErrors(t *testing.T) {
	httpDate := func(c *fakeClock, d time.Duration) string { return c.Now().Add(d).Format(http.TimeFormat) }
	tests := []struct {
		name  string
		cfg   Config
		setup func(e *env) // the package is "p", published as 1.0.0
		pkg   string
		check func(t *testing.T, err error)
	}{
		{name: "404 is ErrNotFound", pkg: "missing", check: isNotFound},
		{name: "500", setup: func(e *env) { e.reg.Fail("p", 500, "") }, check: isUnavailable(500, 30*time.Second, "")},
		{name: "502", setup: func(e *env) { e.reg.Fail("p", 502, "") }, check: isUnavailable(502, 30*time.Second, "")},
		{name: "429 with Retry-After seconds", setup: func(e *env) { e.reg.Fail("p", 429, "120") },
			check: isUnavailable(429, 120*time.Second, "")},
		{name: "503 with Retry-After date", setup: func(e *env) { e.reg.Fail("p", 503, httpDate(e.clock, 90*time.Second)) },
			check: isUnavailable(503, 90*time.Second, "")},
		{name: "401 asks to check the token", setup: func(e *env) { e.reg.Fail("p", 401, "") },
			check: isUnavailable(401, 30*time.Second, "auth token")},
		{name: "403 asks to check the token", setup: func(e *env) { e.reg.Fail("p", 403, "") },
			check: isUnavailable(403, 30*time.Second, "auth token")},
		{name: "garbage body", setup: func(e *env) { e.reg.SetRawPackument("p", []byte("<html>busy</html>")) },
			check: isUnavailable(0, 30*time.Second, "decoding")},
		{name: "truncated JSON", setup: func(e *env) { e.reg.SetRawPackument("p", []byte(`{"name":"p","versions":{"1.0.0":{`)) },
			check: isUnavailable(0, 30*time.Second, "decoding")},
		{name: "packument of another package", setup: func(e *env) { e.reg.SetRawPackument("p", []byte(`{"name":"q"}`)) },
			check: isUnavailable(200, 30*time.Second, `"q"`)},
		{name: "timeout", cfg: Config{RequestTimeout: 50 * time.Millisecond},
			setup: func(e *env) { e.reg.Hold("p") }, check: isUnavailable(0, 30*time.Second, "timed out")},
		{name: "too large", cfg: Config{MaxPackumentBytes: 100},
			check: func(t *testing.T, err error) { isA(t, err, ErrTooLarge) }},
		{name: "invalid name", pkg: "../etc/passwd",
			check: func(t *testing.T, err error) { isA(t, err, ErrInvalidName) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.cfg)
			e.reg.Publish("p", "1.0.0", tgz(t, strings.Repeat("long-file-name-", 20)))
			if tc.setup != nil {
				tc.setup(e)
			}
			pkg := tc.pkg
			if pkg == "" {
				pkg = "p"
			}
			p, err := e.c.Packument(context.Background(), pkg)
			if err == nil {
				t.Fatalf("Packument = %+v, want an error", p)
			}
			tc.check(t, err)
		})
	}
}

func TestConnectionRefusedIsUnavailable(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	e := newEnvFor(t, fakeregistry.New(t), dead.URL+"/", Config{})
	_, err := e.c.Packument(context.Background(), "p")
	isUnavailable(0, 30*time.Second, "")(t, err)
}

func isNotFound(t *testing.T, err error) {
	t.Helper()
	var ue *unavailable.Error
	if !errors.Is(err, ErrNotFound) || errors.As(err, &ue) {
		t.Errorf("err = %v, want ErrNotFound only", err)
	}
}

func isA(t *testing.T, err, target error) {
	t.Helper()
	var ue *unavailable.Error
	if !errors.Is(err, target) || errors.Is(err, ErrNotFound) || errors.As(err, &ue) {
		t.Errorf("err = %v, want %v only", err, target)
	}
}

func isUnavailable(status int, retry time.Duration, msg string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var ue *unavailable.Error
		if !errors.As(err, &ue) {
			t.Fatalf("err = %v (%T), want *unavailable.Error", err, err)
		}
		if errors.Is(err, ErrNotFound) {
			t.Errorf("err = %v also matches ErrNotFound", err)
		}
		if ue.Status != status || ue.RetryAfter != retry || !strings.Contains(err.Error(), msg) {
			t.Errorf("err = %v (status %d, retry %v), want status %d, retry %v, message with %q",
				err, ue.Status, ue.RetryAfter, status, retry, msg)
		}
	}
}

func TestFailuresAreNotCached(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	if _, err := e.c.Packument(ctx, "p"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("before publish: %v, want ErrNotFound", err)
	}
	e.reg.Publish("p", "1.0.0", tgz(t))
	e.reg.Fail("p", 500, "")
	if _, err := e.c.Packument(ctx, "p"); err == nil {
		t.Fatal("while failing: want an error")
	}
	e.reg.Fail("p", 0, "")
	if _, err := e.c.Packument(ctx, "p"); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
	if got := e.reg.PackumentRequests("p"); got != 3 {
		t.Errorf("requests = %d, want 3 (no failure cached)", got)
	}
}

func TestPackumentTTL(t *testing.T) {
	ttl := 5 * time.Minute
	e := newEnv(t, Config{PackumentTTL: ttl})
	ctx := context.Background()
	e.reg.Publish("p", "1.0.0", tgz(t))
	get := func() *Packument {
		t.Helper()
		p, err := e.c.Packument(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	get()
	e.reg.Publish("p", "1.1.0", tgz(t))
	e.clock.Advance(ttl - time.Second)
	if p := get(); p.DistTags["latest"] != "1.0.0" || e.reg.PackumentRequests("p") != 1 {
		t.Errorf("within TTL: latest %q after %d requests, want the cached 1.0.0 after 1", p.DistTags["latest"], e.reg.PackumentRequests("p"))
	}
	e.clock.Advance(time.Second)
	if p := get(); p.DistTags["latest"] != "1.1.0" || e.reg.PackumentRequests("p") != 2 {
		t.Errorf("at TTL: latest %q after %d requests, want 1.1.0 after 2", p.DistTags["latest"], e.reg.PackumentRequests("p"))
	}
}

func TestCachedVersionOutlivesTTL(t *testing.T) {
	e := newEnv(t, Config{})
	e.reg.Publish("@s/p", "1.0.0", tgz(t))
	if _, ok := e.c.CachedVersion("@s/p", "1.0.0"); ok {
		t.Fatal("CachedVersion before any fetch: want a miss")
	}
	p, err := e.c.Packument(context.Background(), "@s/p")
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(365 * 24 * time.Hour)
	e.reg.Fail("@s/p", 503, "")
	v, ok := e.c.CachedVersion("@s/p", "1.0.0")
	if !ok || v != p.Versions["1.0.0"] {
		t.Errorf("CachedVersion = %+v, %v; want %+v", v, ok, p.Versions["1.0.0"])
	}
	if _, ok := e.c.CachedVersion("@s/p", "2.0.0"); ok {
		t.Error("CachedVersion of an unknown version: want a miss")
	}
}

func TestVersionCacheIsBounded(t *testing.T) {
	e := newEnv(t, Config{MaxCachedVersions: 2})
	for _, v := range []string{"1.0.0", "1.0.1", "1.0.2"} {
		e.reg.Publish("p", v, tgz(t))
	}
	if _, err := e.c.Packument(context.Background(), "p"); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range []string{"1.0.0", "1.0.1", "1.0.2"} {
		if _, ok := e.c.CachedVersion("p", v); ok {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d versions cached, want MaxCachedVersions = 2", n)
	}
}

// joinHook makes the client report each caller that has joined a fetch.
func joinHook(c *Client) <-chan string {
	joined := make(chan string, 64)
	c.onJoin = func(name string) { joined <- name }
	return joined
}

func TestConcurrentCallersShareOneRequest(t *testing.T) {
	const n = 8
	e := newEnv(t, Config{})
	e.reg.Publish("p", "1.0.0", tgz(t))
	joined := joinHook(e.c)
	release := e.reg.Hold("p")

	type result struct {
		p   *Packument
		err error
	}
	results := make(chan result, n)
	for range n {
		go func() {
			p, err := e.c.Packument(context.Background(), "p")
			results <- result{p, err}
		}()
	}
	// All n have joined while the one request is held at the registry, so
	// none can start a second one.
	for range n {
		<-joined
	}
	release()
	for range n {
		r := <-results
		if r.err != nil || r.p.Versions["1.0.0"].Version != "1.0.0" {
			t.Errorf("caller got %+v, %v", r.p, r.err)
		}
	}
	if got := e.reg.PackumentRequests("p"); got != 1 {
		t.Errorf("registry saw %d requests for %d concurrent callers, want 1", got, n)
	}
}

func TestCallerGivingUpDoesNotFailOthers(t *testing.T) {
	e := newEnv(t, Config{})
	e.reg.Publish("p", "1.0.0", tgz(t))
	joined := joinHook(e.c)
	release := e.reg.Hold("p")

	impatient, cancel := context.WithCancel(context.Background())
	impatientErr := make(chan error, 1)
	go func() {
		_, err := e.c.Packument(impatient, "p")
		impatientErr <- err
	}()
	<-joined
	patientErr := make(chan error, 1)
	go func() {
		_, err := e.c.Packument(context.Background(), "p")
		patientErr <- err
	}()
	<-joined
	cancel()
	if err := <-impatientErr; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled caller: err = %v, want context.Canceled", err)
	}
	release()
	if err := <-patientErr; err != nil {
		t.Errorf("patient caller: %v, want success", err)
	}
	if got := e.reg.PackumentRequests("p"); got != 1 {
		t.Errorf("requests = %d, want 1", got)
	}
}

func TestAuthHeaderSentToRegistry(t *testing.T) {
	reg := fakeregistry.New(t)
	e := newEnvFor(t, reg, reg.URL(), Config{}, nerf(reg.URL())+":_authToken=s3cret")
	reg.Publish("@s/p", "1.0.0", tgz(t))
	p, err := e.c.Packument(context.Background(), "@s/p")
	if err != nil {
		t.Fatal(err)
	}
	if got := reg.LastAuthorization(); got != "Bearer s3cret" {
		t.Errorf("packument Authorization = %q", got)
	}
	if _, err := fetchAll(context.Background(), e.c, "@s/p", p.Versions["1.0.0"]); err != nil {
		t.Fatal(err)
	}
	if got := reg.LastAuthorization(); got != "Bearer s3cret" {
		t.Errorf("tarball Authorization = %q", got)
	}
	// A 401 must not echo the token.
	reg.Fail("@s/p", 401, "")
	e.clock.Advance(time.Hour)
	_, err = e.c.Packument(context.Background(), "@s/p")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("401: err = %v, want an error without the token", err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		h    string
		want time.Duration
	}{
		{"", 30 * time.Second},
		{"0", 0},
		{"7", 7 * time.Second},
		{" 7 ", 7 * time.Second},
		{"-5", 30 * time.Second},
		{"soon", 30 * time.Second},
		{"99999999999999999", 24 * time.Hour},
		{now.Add(2 * time.Minute).Format(http.TimeFormat), 2 * time.Minute},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{now.Add(72 * time.Hour).Format(http.TimeFormat), 24 * time.Hour},
	}
	for _, tc := range tests {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestEscapeName(t *testing.T) {
	tests := []struct{ name, want string }{
		{"lodash", "lodash"},
		{"@types/node", "@types%2fnode"},
		{"JSONStream", "JSONStream"},
		{"a.b-c_d~e", "a.b-c_d~e"},
		{"", ""},
		{"@scope", ""},
		{"@/x", ""},
		{"@s/", ""},
		{"@s/a/b", ""},
		{".hidden", ""},
		{"_under", ""},
		{"..", ""},
		{"a/b", ""},
		{"a b", ""},
		{"a%2fb", ""},
		{"a?b", ""},
		{"a#b", ""},
		{"é", ""},
		{strings.Repeat("a", 1025), ""},
	}
	for _, tc := range tests {
		got, err := escapeName(tc.name)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("escapeName(%q) = %q, %v; want %q", truncate(tc.name), got, err, tc.want)
		}
		if err != nil && !errors.Is(err, ErrInvalidName) {
			t.Errorf("escapeName(%q): err %v is not ErrInvalidName", tc.name, err)
		}
	}
}

func TestPackumentCacheIsBoundedByBytes(t *testing.T) {
	e := newEnv(t, Config{MaxCachedPackumentBytes: 1})
	e.reg.Publish("p", "1.0.0", tgz(t))
	for range 2 {
		if _, err := e.c.Packument(context.Background(), "p"); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.reg.PackumentRequests("p"); got != 2 {
		t.Errorf("requests = %d, want 2: a packument over the cache budget is not kept", got)
	}
	if _, ok := e.c.CachedVersion("p", "1.0.0"); !ok {
		t.Error("its versions are still cached")
	}
}
