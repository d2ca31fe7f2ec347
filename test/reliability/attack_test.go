package reliability

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/lockfile/lockfiletest"
	"github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/store"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// The hazards of the attack on the running service (docs/RELIABILITY.md,
// "Attacking the running service"), one test each.

// TestBodyReadErrorsNameNoAddress: a body that does not arrive within
// read-timeout answers 408 saying so, on every route that reads one, and
// no answer names an address. Before: 400 "reading the body: read tcp
// 127.0.0.1:7878->127.0.0.1:49252: i/o timeout" (MCP: "failed to read
// body: read tcp …"), the replica's own address behind a load balancer.
func TestBodyReadErrorsNameNoAddress(t *testing.T) {
	const readTimeout = 300 * time.Millisecond
	m := newMirror(t, func(c *config.Config) {
		c.Tokens = allToken
		c.ReadTimeout = readTimeout
	})
	srv := httptest.NewUnstartedServer(m.app.Handler())
	srv.Config.ReadTimeout = readTimeout
	srv.Start()
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, path := range []string{"/v1/explore", "/v1/webdocs", "/v1/warm", "/v1/projects", "/mcp"} {
		t.Run(path, func(t *testing.T) {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(answerBound))
			// The headers and the body's first byte of 100.
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
				"Content-Length: 100\r\n\r\n{", path, host, allToken)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer to a body that stopped arriving: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			text := string(body)
			for _, leak := range []string{"127.0.0.1", "tcp", "->", "i/o timeout"} {
				if strings.Contains(text, leak) {
					t.Errorf("%d %s: names %q", resp.StatusCode, text, leak)
				}
			}
			if !strings.Contains(text, "read-timeout") {
				t.Errorf("%d %s: does not name the setting read-timeout", resp.StatusCode, text)
			}
			// MCP's handler answers the read error itself, with its own
			// status; every other route answers through the API's.
			if path != "/mcp" && (resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(text, `"body_timeout"`)) {
				t.Errorf("%d %s, want 408 body_timeout", resp.StatusCode, text)
			}
		})
	}
}

// TestAnswersToTokensAreNotStored: every answer to a verified token —
// each call of TestAccessOnEveryRoute's table, with the token that may
// read its package — is "private", and one whose route sets no cache
// policy of its own is also "no-store". Before: the web pages (read
// with the login cookie, so without the Authorization header that alone
// keeps a response out of shared caches), explore, web docs, warm and
// project answers had no Cache-Control at all, and MCP's "no-cache" lets
// a cache store the answer.
func TestAnswersToTokensAreNotStored(t *testing.T) {
	m, _ := privateMirror(t)
	e := m.app.Handler().(*echo.Echo)
	for key, calls := range accessTable {
		method, _, _ := strings.Cut(key, " ")
		for _, c := range calls {
			if strings.HasPrefix(c.path, "/static/") || c.path == "/login" || c.path == "/robots.txt" || c.path == "/healthz" || c.path == "/readyz" {
				continue // the same bytes for everyone; no token checked
			}
			tok := privToken
			if c.with != "" {
				tok = c.with
			}
			rec := send(e, method, c.path, c.body, tok)
			cc := rec.Header().Get("Cache-Control")
			if !strings.Contains(cc, "private") || !strings.Contains(cc, "no-store") && !strings.Contains(cc, "max-age") {
				t.Errorf("%s %s with a token: %d, Cache-Control %q; want private (no-store unless the route sets its own)", method, c.path, rec.Code, cc)
			}
		}
	}
	// The page, with the login cookie instead of the header.
	rec := withCookie(e, "GET", "/browse/@priv/x@1.0.0/x.js", login(t, e, privToken))
	if cc := rec.Header().Get("Cache-Control"); rec.Code != 200 || cc != "private, no-store" {
		t.Errorf("a private package's page with the login cookie: %d, Cache-Control %q; want 200 and private, no-store", rec.Code, cc)
	}
}

// TestProjectLayoutStopsAtTheCap: a 280 KB pnpm lockfile whose layout is
// 78,680 folders is refused at max-project-packages while it is laid out,
// 422 limit_exceeded naming the setting. Before, the whole layout was
// built first (and with 700 packages, a 737 KB file, that was 3 minutes
// of CPU and 1.1 GiB, holding a lockfile parse slot), then refused with
// the code "error".
func TestProjectLayoutStopsAtTheCap(t *testing.T) {
	m := newMirror(t, func(c *config.Config) { c.MaxProjectPackages = 2000 })
	body, err := json.Marshal(map[string]any{"lockfile": map[string]string{"name": "pnpm-lock.yaml", "content": lockfiletest.NestingPnpm(280, 40)}})
	if err != nil {
		t.Fatal(err)
	}
	a := do(t.Context(), m.hc, "POST", m.url+"/v1/projects", string(body), answerBound)
	if a.status != http.StatusUnprocessableEntity || a.code() != "limit_exceeded" ||
		!strings.Contains(string(a.body), "more than 2000") || !strings.Contains(string(a.body), "max-project-packages") {
		t.Errorf("a project laying out 78,680 folders: %s; want 422 limit_exceeded, more than 2000 (setting max-project-packages)", a)
	}
}

// TestMaxConnectionsBoundsHeldConnections: the mirror process keeps at
// most max-connections connections open; clients holding them with
// unfinished headers (no token needed) make the next one wait to be
// accepted instead of costing another connection's buffers, and it is
// served once one of them goes. Before, every connection was accepted:
// 8,000 of them, each holding 60 KiB of an unfinished header, took the
// mirror from 55 to 883 MiB RSS.
func TestMaxConnectionsBoundsHeldConnections(t *testing.T) {
	t.Parallel()
	const held = 3
	env := processEnv(t, fakeregistry.New(t), "PKGSCOPE_DATA_DIR="+t.TempDir(),
		fmt.Sprintf("PKGSCOPE_MAX_CONNECTIONS=%d", held), "PKGSCOPE_READ_HEADER_TIMEOUT=1m")
	mir := startMirror(t, env)
	host := strings.TrimPrefix(mir.url, "http://")
	var holders []net.Conn
	for range held {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\nX-Pad: %s", host, strings.Repeat("a", 60<<10))
		holders = append(holders, c)
	}
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	answered := make(chan answer, 1)
	go func() { answered <- do(t.Context(), hc, http.MethodGet, mir.url+"/healthz", "", time.Minute) }()
	// While the holders hold every connection the mirror keeps, the
	// request is not served (half a second is the chance a missing bound
	// gets to answer it: a health check takes microseconds).
	select {
	case a := <-answered:
		t.Fatalf("with %d connections held (max-connections %d), another request was served: %v", held, held, a)
	case <-time.After(500 * time.Millisecond):
	}
	holders[0].Close()
	select {
	case a := <-answered:
		if a.status != http.StatusOK {
			t.Errorf("once a holder left: %v, want 200", a)
		}
	case <-time.After(answerBound):
		t.Errorf("a holder left, and the waiting request was still not served after %s", answerBound)
	}
}

// TestWebGrepErrorHasItsStatus: a folder page whose grep is refused
// answers the status the API gives the refusal (400 for a bad pattern or
// glob), the folder and the error still shown. Before: 200, so a script
// or a monitor took the refused grep for an answer.
func TestWebGrepErrorHasItsStatus(t *testing.T) {
	m := newMirror(t)
	m.reg.Publish("lib", "1.0.0", tb.Package(t, map[string]string{"index.js": "export const x = 1;\n"}))
	// Stored first: a page never fills (the Fetch button does).
	m.explore(`{"action":"list","packageName":"lib","version":"1.0.0"}`)
	m.stored(t, "lib", "1.0.0")
	for _, q := range []string{"grep=a%7B1001%7D", "grep=x&include=%5B"} {
		a := m.get("/browse/lib@1.0.0/?" + q)
		if a.status != http.StatusBadRequest || !strings.Contains(string(a.body), "index.js") || !strings.Contains(string(a.body), `role="alert"`) {
			t.Errorf("/browse/lib@1.0.0/?%s: %d %.200s; want 400, the folder and the grep's error", q, a.status, a.body)
		}
	}
	if a := m.get("/browse/lib@1.0.0/?grep=export"); a.status != http.StatusOK {
		t.Errorf("a grep that runs: %v, want 200", a)
	}
}

// TestRefusalsDoNotEchoLongInput: a request refused for a field's length
// answers a message of its own size, not the field again. Before, a
// 5 MB lockfile name and a 900 KB grep include were quoted whole in their
// 400s: answers as large as the request.
func TestRefusalsDoNotEchoLongInput(t *testing.T) {
	m := newMirror(t)
	m.reg.Publish("lib", "1.0.0", tb.Package(t, map[string]string{"index.js": "export const x = 1;\n"}))
	long := strings.Repeat("a", 64<<10)
	for _, c := range []struct{ path, body string }{
		{"/v1/warm", `{"lockfile":{"name":"` + long + `","content":"{}"}}`},
		{"/v1/projects", `{"lockfile":{"name":"` + long + `","content":"{}"}}`},
		{"/v1/explore", `{"action":"grep","packageName":"lib","version":"1.0.0","pattern":"x","include":["` + long + `"]}`},
		{"/v1/explore", `{"action":"glob","packageName":"lib","version":"1.0.0","patterns":["` + long + `"]}`},
	} {
		a := do(t.Context(), m.hc, http.MethodPost, m.url+c.path, c.body, answerBound)
		if a.status != http.StatusBadRequest || len(a.body) > 1<<10 {
			t.Errorf("%s with a 64 KiB field: %d, %d bytes (%.200s); want 400 in under 1 KiB", c.path, a.status, len(a.body), a.body)
		}
	}
}

// TestWebDocsMissingDataIsNotA404: web docs whose pinned data packages
// the registry does not hold answer 502 upstream_bad_data naming the
// setting that pins them: the operator's to fix. Before: 404 not_found,
// which a caller searching for "gap" reads as "no such doc".
func TestWebDocsMissingDataIsNotA404(t *testing.T) {
	m := newMirror(t) // the fake registry holds none of the four
	a := do(t.Context(), m.hc, http.MethodPost, m.url+"/v1/webdocs", `{"action":"search","query":"gap"}`, answerBound)
	if a.status != http.StatusBadGateway || a.code() != "upstream_bad_data" || !strings.Contains(string(a.body), "(setting webdocs-") ||
		!strings.Contains(string(a.body), "is not in the registry") {
		t.Errorf("web docs without their data packages: %v; want 502 upstream_bad_data saying which is not in the registry, naming its setting", a)
	}
}

// TestWarmQueueIsBounded: a warm request or project registration whose
// jobs would take the warm queue past max-warm-queue is refused whole,
// 503 naming the setting with Retry-After, and the project is not
// recorded. Before, the queue took whatever a token sent: 20,000 versions
// a request, as many requests as the rate limit (off by default) let in.
func TestWarmQueueIsBounded(t *testing.T) {
	m := newMirror(t, func(c *config.Config) { c.MaxWarmQueue = 2 })
	for _, n := range []string{"qa", "qb", "qc"} {
		m.reg.Publish(n, "1.0.0", tb.Package(t, map[string]string{"index.js": "export const x = 1;\n"}))
	}
	a := do(t.Context(), m.hc, http.MethodPost, m.url+"/v1/warm", `{"specs":["qa@1.0.0","qb@1.0.0","qc@1.0.0"]}`, answerBound)
	if a.status != http.StatusServiceUnavailable || !strings.Contains(string(a.body), "max-warm-queue") || a.header.Get("Retry-After") == "" {
		t.Errorf("a warm request of 3 jobs, max-warm-queue 2: %v; want 503 naming max-warm-queue with Retry-After", a)
	}
	lock := `{"name":"app","lockfileVersion":3,"requires":true,"packages":{"":{"dependencies":{"qa":"1.0.0","qb":"1.0.0","qc":"1.0.0"}},` +
		`"node_modules/qa":{"version":"1.0.0"},"node_modules/qb":{"version":"1.0.0"},"node_modules/qc":{"version":"1.0.0"}}}`
	body, _ := json.Marshal(map[string]any{"lockfile": map[string]string{"name": "package-lock.json", "content": lock}})
	a = do(t.Context(), m.hc, http.MethodPost, m.url+"/v1/projects", string(body), answerBound)
	if a.status != http.StatusServiceUnavailable || !strings.Contains(string(a.body), "max-warm-queue") || a.header.Get("Retry-After") == "" {
		t.Errorf("a project of 3 jobs, max-warm-queue 2: %v; want 503 naming max-warm-queue with Retry-After", a)
	}
	id := project.ID(project.Upload{Lockfile: project.File{Name: "package-lock.json", Content: lock}})
	if _, err := m.app.Store.Project(t.Context(), id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused project: %v, want it not recorded (store.ErrNotFound)", err)
	}
	if a := do(t.Context(), m.hc, http.MethodPost, m.url+"/v1/warm", `{"specs":["qa@1.0.0","qb@1.0.0"]}`, answerBound); a.status != http.StatusAccepted {
		t.Errorf("a warm request within max-warm-queue: %v, want 202", a)
	}
}

// TestManyUnknownFieldsAnswerBriefly: a body of thousands of made-up keys
// is refused naming the first few and counting the rest. Before, every
// key was named (and on /v1/explore matched against the action's fields
// for a did-you-mean): 60,000 keys, a 1 MB body, cost a 1.5 MB answer
// and 0.9 s of CPU.
func TestManyUnknownFieldsAnswerBriefly(t *testing.T) {
	m := newMirror(t)
	var keys strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&keys, `,"k%d":1`, i)
	}
	for _, c := range []struct{ path, body string }{
		{"/v1/explore", `{"action":"list","packageName":"lib"` + keys.String() + `}`},
		{"/v1/webdocs", `{"action":"search","query":"gap"` + keys.String() + `}`},
		{"/v1/warm", `{"specs":["lib@1.0.0"]` + keys.String() + `}`},
		{"/v1/projects", `{"lockfile":{"name":"package.json","content":"{}"` + keys.String() + `}}`},
	} {
		a := do(t.Context(), m.hc, http.MethodPost, m.url+c.path, c.body, answerBound)
		if a.status != http.StatusBadRequest || len(a.body) > 4<<10 || !strings.Contains(string(a.body), "more unknown fields") {
			t.Errorf("%s with 5,000 unknown fields: %d, %d bytes (%.200s); want 400 in under 4 KiB counting the rest", c.path, a.status, len(a.body), a.body)
		}
	}
}

// TestWarmRequestItemsIsASetting: the mirror's refusal of a warm request
// over max-request-items names a setting the mirror has. Before, the
// message named the indexer's flag and the mirror kept warm's default
// (20,000) with no way to change it.
func TestWarmRequestItemsIsASetting(t *testing.T) {
	m := newMirror(t, func(c *config.Config) { c.MaxRequestItems = 2 })
	for _, n := range []string{"ra", "rb", "rc"} {
		m.reg.Publish(n, "1.0.0", tb.Package(t, map[string]string{"index.js": "export const x = 1;\n"}))
	}
	a := do(t.Context(), m.hc, http.MethodPost, m.url+"/v1/warm", `{"specs":["ra@1.0.0","rb@1.0.0","rc@1.0.0"]}`, answerBound)
	if a.status != http.StatusBadRequest || !strings.Contains(string(a.body), "max-request-items") {
		t.Errorf("a warm request of 3 packages, max-request-items 2: %v; want 400 naming max-request-items", a)
	}
	if a := do(t.Context(), m.hc, http.MethodPost, m.url+"/v1/warm", `{"specs":["ra@1.0.0","rb@1.0.0"]}`, answerBound); a.status != http.StatusAccepted {
		t.Errorf("a warm request within max-request-items: %v, want 202", a)
	}
	if _, err := config.Load("mirror", []string{"--max-request-items", "0"}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "max-request-items") {
		t.Errorf("config.Load --max-request-items 0: %v, want an error naming the setting", err)
	}
}
