package reliability

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// hitCounter is a server no request of the suite may reach: it counts
// every request, so "the mirror fetched nothing from it" is checked, not
// assumed.
type hitCounter struct {
	srv  *httptest.Server
	hits atomic.Int64
}

func newHitCounter(t *testing.T, body []byte) *hitCounter {
	h := &hitCounter{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.hits.Add(1)
		w.Write(body)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hitCounter) host() string { u, _ := url.Parse(h.srv.URL); return u.Host }

// maxAllocPerRequest bounds what one hostile request may allocate, in all
// (garbage included): the body is capped at max-body-bytes (1 MiB), and
// every answer to a bad request is a few hundred bytes. 32 MiB leaves room
// for a grep's index pages; a request that builds anything in proportion
// to what it claims (a 10^9 limit, 2^30 brace expansions) blows it.
const maxAllocPerRequest = 32 << 20

// hostileBound is the client deadline of a hostile request: the issue
// asks for a clear 4xx "within a second". Measured answers take under a
// millisecond (the greps a few); this is a bound on hanging, not a
// latency figure.
const hostileBound = time.Second

type hazard struct {
	name         string
	method, path string
	body         string
	status       int    // 0: any 4xx
	code         string // "" : any
}

// TestHostileRequests sends each hostile request, one per hazard, to a
// running mirror: each answers a clear 4xx within the client deadline,
// allocating less than maxAllocPerRequest while it is served, and the
// mirror keeps serving; no request reaches the hit counter, however its
// spec or name points there.
func TestHostileRequests(t *testing.T) {
	counter := newHitCounter(t, tb.Package(t, map[string]string{"evil.js": "evil"}))
	evil := counter.srv.URL
	evilHost := counter.host()
	m := newMirror(t, func(c *config.Config) { c.MaxBodyBytes = 64 << 10 })
	files := map[string]string{"package.json": `{"name":"ok"}`, "a.js": "export const a = 1;\n", "lib/b.js": "b\n"}
	m.reg.Publish("ok", "1.0.0", tb.Package(t, files))
	// Warm: the version and its index exist before anything is measured.
	if a := m.explore(`{"action":"grep","packageName":"ok","version":"1.0.0","pattern":"a"}`); a.status != 200 {
		t.Fatalf("warming: %v", a)
	}

	x := func(fields string) string { return `{"packageName":"ok","version":"1.0.0",` + fields + `}` }
	deep := func(open, close string, n int) string { return strings.Repeat(open, n) + strings.Repeat(close, n) }
	hazards := []hazard{
		// Traversal and odd paths.
		{"path ../", "POST", "/v1/explore", x(`"action":"read","path":"../../../../etc/passwd"`), 400, "bad_request"},
		{"path ..\\ (backslash)", "POST", "/v1/explore", x(`"action":"read","path":"..\\..\\etc\\passwd"`), 0, ""},
		{"path with NUL", "POST", "/v1/explore", x(`"action":"read","path":"a.js\u0000.png"`), 400, "bad_request"},
		{"absolute path", "POST", "/v1/explore", x(`"action":"read","path":"/etc/passwd"`), 0, ""},
		{"path %2e%2e (literal)", "POST", "/v1/explore", x(`"action":"read","path":"%2e%2e/%2e%2e/etc/passwd"`), 0, ""},
		{"REST ../ in the URL", "GET", "/v1/npm/ok@1.0.0/../../../etc/passwd", "", 0, ""},
		{"REST %2e%2e in the URL", "GET", "/v1/npm/ok@1.0.0/%2e%2e/%2e%2e/etc/passwd", "", 0, ""},
		{"REST %2f-encoded traversal", "GET", "/v1/npm/ok@1.0.0/..%2f..%2fetc%2fpasswd", "", 0, ""},
		{"REST NUL in the URL", "GET", "/v1/npm/ok@1.0.0/a.js%00.png", "", 0, ""},
		{"REST traversal in the name", "GET", "/v1/npm/..%2f..%2fetc/-/files", "", 0, ""},
		{"path 10k deep", "POST", "/v1/explore", x(`"action":"read","path":"` + strings.Repeat("a/", 10000) + `x"`), 0, ""},
		// Names.
		{"name with ..", "POST", "/v1/explore", `{"action":"list","packageName":"../etc"}`, 400, "bad_request"},
		// Legacy names with capitals exist (JSONStream): asked of the
		// configured registry, which has none here.
		{"name upper case", "POST", "/v1/explore", `{"action":"list","packageName":"EVIL"}`, 404, "not_found"},
		{"name with space", "POST", "/v1/explore", `{"action":"list","packageName":"a b"}`, 400, "bad_request"},
		{"name empty scope", "POST", "/v1/explore", `{"action":"list","packageName":"@/x"}`, 400, "bad_request"},
		{"name 215 bytes", "POST", "/v1/explore", `{"action":"list","packageName":"` + strings.Repeat("a", 215) + `"}`, 400, "bad_request"},
		{"name 60 KiB", "POST", "/v1/explore", `{"action":"list","packageName":"` + strings.Repeat("a", 60<<10) + `"}`, 400, "bad_request"},
		{"name is a URL", "POST", "/v1/explore", `{"action":"list","packageName":"` + evil + `/evil.tgz"}`, 400, "bad_request"},
		{"name with NUL", "POST", "/v1/explore", `{"action":"list","packageName":"ok\u0000"}`, 400, "bad_request"},
		// Specs that name a place to fetch from.
		{"spec http URL", "POST", "/v1/explore", x2("ok", evil+"/evil.tgz"), 400, "bad_request"},
		{"spec git+http", "POST", "/v1/explore", x2("ok", "git+"+evil+"/evil.git"), 400, "bad_request"},
		{"spec git+ssh", "POST", "/v1/explore", x2("ok", "git+ssh://git@"+evilHost+"/evil.git"), 400, "bad_request"},
		{"spec github shorthand", "POST", "/v1/explore", x2("ok", "github:evil/evil"), 400, "bad_request"},
		{"spec user/repo", "POST", "/v1/explore", x2("ok", "evil/evil"), 400, "bad_request"},
		{"spec file:", "POST", "/v1/explore", x2("ok", "file:../../etc"), 400, "bad_request"},
		{"spec alias npm:", "POST", "/v1/explore", x2("ok", "npm:evil@1.0.0"), 400, "bad_request"},
		{"spec REST URL", "GET", "/v1/npm/ok@" + url.PathEscape(evil+"/evil.tgz") + "/-/files", "", 0, ""},
		{"spec 10k ||", "POST", "/v1/explore", x2("ok", strings.Repeat("1.0.0 || ", 5000)+"1.0.0"), 0, ""},
		// Regexes at RE2's limits and DFA blow-ups.
		{"regex repeat over 1000", "POST", "/v1/explore", x(`"action":"grep","pattern":"a{1001}"`), 400, "bad_request"},
		{"regex nested repeats", "POST", "/v1/explore", x(`"action":"grep","pattern":"((a{100}){100}){100}"`), 400, "bad_request"},
		{"regex nesting 5000 deep", "POST", "/v1/explore", x(`"action":"grep","pattern":"` + deep("(", ")", 5000) + `"`), 400, "bad_request"},
		{"regex over max-grep-pattern-bytes", "POST", "/v1/explore", x(`"action":"grep","pattern":"` + strings.Repeat("a", 40<<10) + `"`), 0, ""},
		{"regex invalid", "POST", "/v1/explore", x(`"action":"grep","pattern":"(?P<x"`), 400, "bad_request"},
		{"regex backreference", "POST", "/v1/explore", x(`"action":"grep","pattern":"(a)\\1"`), 400, "bad_request"},
		// DFA blow-ups answer (RE2 is linear), within the grep timeout.
		{"regex DFA blow-up (a|b)*a(a|b){20}", "POST", "/v1/explore", x(`"action":"grep","pattern":"(a|b)*a(a|b){20}"`), 200, ""},
		{"regex (.*.*.*.*){20}x", "POST", "/v1/explore", x(`"action":"grep","pattern":"(.*.*.*.*){20}x"`), 200, ""},
		// Globs.
		{"glob 30 brace groups (2^30)", "POST", "/v1/explore", x(`"action":"glob","patterns":["` + strings.Repeat("{a,b}", 30) + `"]}`), 0, ""},
		{"glob nested braces 1000 deep", "POST", "/v1/explore", x(`"action":"glob","patterns":["` + deep("{a,", "}", 1000) + `"]`), 0, ""},
		{"glob 200 globstars", "POST", "/v1/explore", x(`"action":"glob","patterns":["` + strings.Repeat("**/", 200) + `x"]`), 0, ""},
		{"glob 5000 patterns", "POST", "/v1/explore", x(`"action":"glob","patterns":[` + strings.TrimSuffix(strings.Repeat(`"*",`, 5000), ",") + `]`), 0, ""},
		{"glob unclosed class", "POST", "/v1/explore", x(`"action":"glob","patterns":["[a"]`), 400, "bad_request"},
		{"grep include brace bomb", "POST", "/v1/explore", x(`"action":"grep","pattern":"a","include":["` + strings.Repeat("{a,b}", 30) + `"]`), 0, ""},
		// Limits.
		{"read limit 10^9", "POST", "/v1/explore", x(`"action":"read","path":"a.js","limit":1000000000`), 422, "limit_exceeded"},
		{"read offset negative", "POST", "/v1/explore", x(`"action":"read","path":"a.js","offset":-5`), 0, ""},
		{"read column 2^62", "POST", "/v1/explore", x(`"action":"read","path":"a.js","column":4611686018427387904`), 0, ""},
		{"read limit 2^64 (overflow)", "POST", "/v1/explore", x(`"action":"read","path":"a.js","limit":18446744073709551616`), 400, "bad_request"},
		// 400, where read's limit answers 422 naming max-read-limit: see
		// docs/RELIABILITY.md.
		{"grep maxMatches 10^9", "POST", "/v1/explore", x(`"action":"grep","pattern":"a","maxMatches":1000000000`), 422, "limit_exceeded"},
		{"grep contextLines 10^6", "POST", "/v1/explore", x(`"action":"grep","pattern":"a","contextLines":1000000`), 422, "limit_exceeded"},
		{"grep maxMatchesPerFile negative", "POST", "/v1/explore", x(`"action":"grep","pattern":"a","maxMatchesPerFile":-1`), 0, ""},
		// Bodies.
		{"body over max-body-bytes", "POST", "/v1/explore", `{"action":"list","packageName":"ok","x":"` + strings.Repeat("a", 128<<10) + `"}`, 413, "body_too_large"},
		{"malformed JSON", "POST", "/v1/explore", `{"action":"list",`, 400, "bad_request"},
		{"JSON nested 30k deep", "POST", "/v1/explore", deep("[", "]", 30000), 400, "bad_request"},
		{"JSON trailing garbage", "POST", "/v1/explore", `{"action":"list","packageName":"ok"} {"action":"list"}`, 400, "bad_request"},
		{"JSON wrong type", "POST", "/v1/explore", x(`"action":"read","path":"a.js","limit":"all"`), 400, "bad_request"},
		{"JSON duplicate action", "POST", "/v1/explore", `{"action":"list","action":"rm","packageName":"ok"}`, 0, ""},
		{"unknown action", "POST", "/v1/explore", x(`"action":"exec"`), 400, "bad_request"},
		{"unknown field", "POST", "/v1/explore", x(`"action":"list","shell":"rm -rf /"`), 400, "bad_request"},
		{"empty body", "POST", "/v1/explore", "", 400, "bad_request"},
		{"GET on explore", "GET", "/v1/explore", "", 0, ""},
		{"MCP malformed JSON-RPC", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":`, 0, ""},
		{"MCP unknown tool", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"exec","arguments":{}}}`, 0, ""},
	}
	var worst struct {
		name  string
		bytes uint64
	}
	for _, h := range hazards {
		t.Run(h.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			a := do(t.Context(), m.hc, h.method, m.url+h.path, h.body, hostileBound)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			if alloc > worst.bytes {
				worst.name, worst.bytes = h.name, alloc
			}
			if a.err != nil {
				t.Fatalf("no answer within %s: %v", hostileBound, a.err)
			}
			switch {
			case h.status != 0 && a.status != h.status,
				h.status == 0 && (a.status < 400 || a.status > 499),
				h.code != "" && a.code() != h.code:
				t.Errorf("%v, want %d %s", a, h.status, h.code)
			}
			if alloc > maxAllocPerRequest {
				t.Errorf("allocated %d MiB while serving it (bound %d MiB)", alloc>>20, maxAllocPerRequest>>20)
			}
			t.Logf("%d %s, %d KiB allocated", a.status, a.code(), alloc>>10)
		})
	}
	t.Logf("most allocated by one hostile request: %d KiB (%s)", worst.bytes>>10, worst.name)
	if n := counter.hits.Load(); n != 0 {
		t.Errorf("the hit counter was reached %d times", n)
	}
	// Still up, still right.
	if a := m.get("/v1/npm/ok@1.0.0/a.js"); a.status != 200 || string(a.body) != files["a.js"] {
		t.Errorf("after the hostile requests: %v", a)
	}
}

func x2(name, spec string) string {
	return fmt.Sprintf(`{"action":"list","packageName":%q,"version":%q}`, name, spec)
}

// ssrfIs502 records whether explore.Classify maps upstream.ErrTarballURL
// (a packument whose dist.tarball names a host that is not allowed) to a
// 502: until it does, the refusal answers 500 "internal". Reported in
// docs/RELIABILITY.md; set this to true when it lands.
const ssrfIs502 = true

// TestSSRFThroughTheMirror: a packument whose dist.tarball points at
// another host — another port on loopback, the link-local metadata
// address, a private range — is refused before any connection, whatever
// the request; the same host named in allowed-tarball-hosts is fetched.
func TestSSRFThroughTheMirror(t *testing.T) {
	tgz := tb.Package(t, map[string]string{"index.js": "served\n"})
	counter := newHitCounter(t, tgz)
	targets := []struct{ name, url string }{
		{"loopback, another port", counter.srv.URL + "/x.tgz"},
		{"link-local metadata", "http://169.254.169.254/latest/meta-data/x.tgz"},
		{"private range", "http://10.0.0.1/x.tgz"},
		{"IPv6 loopback", "http://[::1]:1/x.tgz"},
		{"userinfo trick", "http://" + "registry@" + counter.host() + "/x.tgz"},
		{"file scheme", "file:///etc/passwd"},
	}
	m := newMirror(t)
	for i, tg := range targets {
		name := fmt.Sprintf("ssrf%d", i)
		m.reg.Publish(name, "1.0.0", tgz, fakeregistry.WithTarballURL(tg.url))
		a := m.get("/v1/npm/" + name + "@1.0.0/index.js")
		want := http.StatusBadGateway
		if !ssrfIs502 && a.status == http.StatusInternalServerError {
			want = a.status
			t.Logf("%s: 500 (known: explore.Classify does not map upstream.ErrTarballURL yet)", tg.name)
		}
		if a.err != nil || a.status != want {
			t.Errorf("%s: %v, want %d", tg.name, a, want)
		}
		noPartial(t, m.app.Store, name, "1.0.0", 1)
		if !strings.Contains(m.log.String(), "tarball URL refused") {
			t.Errorf("%s: the log does not say the URL was refused", tg.name)
		}
	}
	if n := counter.hits.Load(); n != 0 {
		t.Errorf("the other host was reached %d times", n)
	}
	// Allowed explicitly: fetched.
	m2 := newMirror(t, func(c *config.Config) { c.AllowedTarballHosts = []string{counter.host()} })
	m2.reg.Publish("allowed", "1.0.0", tgz, fakeregistry.WithTarballURL(counter.srv.URL+"/x.tgz"))
	if a := m2.get("/v1/npm/allowed@1.0.0/index.js"); a.status != 200 || string(a.body) != "served\n" {
		t.Errorf("allowed host: %v", a)
	}
	if n := counter.hits.Load(); n != 1 {
		t.Errorf("allowed host reached %d times, want 1", n)
	}
}
