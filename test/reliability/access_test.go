package reliability

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// The tokens of the access tests: one limited to a public scope, one to
// the private scope (which has a registry of its own in .npmrc), one
// unrestricted.
const (
	pubToken  = "pub-token-for-tests"
	privToken = "priv-token-for-tests"
	allToken  = "all-token-for-tests"
)

// privateMirror is a mirror with tokens, whose .npmrc gives the @priv
// scope a registry of its own holding @priv/x@1.0.0; the public registry
// holds @pub/y@1.0.0. tweak adjusts the configuration further.
func privateMirror(t *testing.T, tweak ...func(*config.Config)) (m *mirror, priv *fakeregistry.Registry) {
	t.Helper()
	priv = fakeregistry.New(t)
	priv.Publish("@priv/x", "1.0.0", tb.Package(t, map[string]string{"x.js": "export const secret = 1;\n"}))
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, ".npmrc"), []byte("@priv:registry="+priv.URL()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m = newMirror(t, append([]func(*config.Config){func(c *config.Config) {
		c.ProjectDir = project
		c.Tokens = pubToken + ":@pub," + privToken + ":@priv," + allToken
	}}, tweak...)...)
	m.reg.Publish("@pub/y", "1.0.0", tb.Package(t, map[string]string{"y.js": "export const y = 1;\n"}))
	return m, priv
}

// send serves one request in-process with token ("" for none).
func send(h http.Handler, method, path, body, token string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	switch {
	case strings.HasPrefix(body, "{"):
		req.Header.Set("Content-Type", "application/json")
	case body != "": // a web page's form
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// accessCall is one request of the route table, reading @priv/x (or
// another package named in it), and the status each caller gets.
type accessCall struct {
	method, path, body string
	// want is the status without a token, with a token without the
	// package's scope (pubToken) and with one that has it (privToken, or
	// with when set); 0 means anything but 401 and 403. For /mcp, a tool
	// error whose code is "forbidden" counts as 403.
	want [3]int
	with string
}

func mcpCall(tool, args string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

// accessTable has an entry for every route the mirror registers, by
// "METHOD PATH-PATTERN": TestAccessOnEveryRoute fails on a route without
// one, so a new route is added here with the answer each caller gets.
var accessTable = map[string][]accessCall{
	"GET /healthz": {{path: "/healthz", want: [3]int{200, 200, 200}}},
	"GET /readyz":  {{path: "/readyz", want: [3]int{200, 200, 200}}},
	"GET /metrics": {{path: "/metrics", want: [3]int{401, 200, 200}}},
	"POST /v1/explore": {
		{path: "/v1/explore", body: `{"action":"list","packageName":"@priv/x","version":"1.0.0"}`, want: [3]int{401, 403, 200}},
		{path: "/v1/explore", body: `{"action":"read","packageName":"@priv/x","path":"x.js"}`, want: [3]int{401, 403, 200}},
		{path: "/v1/explore", body: `{"action":"grep","packageName":"@priv/x","pattern":"secret"}`, want: [3]int{401, 403, 200}},
		{path: "/v1/explore", body: `{"action":"list","packageName":"@priv/nope"}`, want: [3]int{401, 403, 404}},
		{path: "/v1/explore", body: `{"action":"diff","packageName":"@priv/x","from":"1.0.0","to":"1.0.0"}`, want: [3]int{401, 403, 200}},
	},
	"GET /v1/npm/*": {
		{path: "/v1/npm/@priv/x@1.0.0/x.js", want: [3]int{401, 403, 200}},
		{path: "/v1/npm/@priv/x@^1/-/files", want: [3]int{401, 403, 200}},
		// The REST diff, and names that do not exist, spelt every way.
		{path: "/v1/npm/@priv/x/-/diff?from=1.0.0&to=1.0.0", want: [3]int{401, 403, 200}},
		{path: "/v1/npm/@priv/nope/-/diff?from=1.0.0&to=1.0.0", want: [3]int{401, 403, 404}},
		{path: "/v1/npm/@priv%2fnope@1.0.0/-/files", want: [3]int{401, 403, 404}},
		{path: "/v1/npm/%40priv%2Fx@1.0.0/x.js", want: [3]int{401, 403, 200}},
	},
	// The jsDelivr-compatible endpoints: metadata, resolved, listing.
	"GET /v1/packages/npm/*": {
		{path: "/v1/packages/npm/@priv/x", want: [3]int{401, 403, 200}},
		{path: "/v1/packages/npm/@priv/nope", want: [3]int{401, 403, 404}},
		{path: "/v1/packages/npm/@priv/x/resolved?specifier=%5E1", want: [3]int{401, 403, 200}},
		{path: "/v1/packages/npm/@priv/x@1.0.0?structure=flat", want: [3]int{401, 403, 200}},
	},
	// ... and the file.
	"GET /npm/*": {
		{path: "/npm/@priv/x@1.0.0/x.js", want: [3]int{401, 403, 200}},
		{path: "/npm/@priv/nope@1.0.0/x.js", want: [3]int{401, 403, 404}},
	},
	"POST /mcp": {
		{path: "/mcp", body: mcpCall("explore_npm", `{"action":"list","packageName":"@priv/x"}`), want: [3]int{401, 403, 200}},
		// Web docs are made of four public data packages outside both
		// scopes: only an unrestricted token reads them.
		{path: "/mcp", body: mcpCall("explore_web_docs", `{"action":"search","query":"gap"}`), want: [3]int{401, 403, 0}, with: allToken},
	},
	"POST /v1/webdocs": {{path: "/v1/webdocs", body: `{"action":"search","query":"gap"}`, want: [3]int{401, 403, 0}, with: allToken}},
	"POST /v1/warm": {
		{path: "/v1/warm", body: `{"specs":["@priv/x@1.0.0"]}`, want: [3]int{401, 403, 202}},
		{path: "/v1/warm", body: `{"lockfile":{"name":"package.json","content":"{\"dependencies\":{\"@priv/x\":\"1.0.0\"}}"}}`, want: [3]int{401, 403, 202}},
	},
	// A real request's progress needs every package in it:
	// TestWarmProgressNeedsEveryPackage.
	"GET /v1/warm/:id": {{path: "/v1/warm/0123456789abcdef", want: [3]int{401, 404, 404}}},
	// Projects (internal/project): registering one is warming every
	// package of its lockfile.
	"POST /v1/projects":    {{path: "/v1/projects", body: `{"lockfile":{"name":"package-lock.json","content":"{\"name\":\"app\",\"lockfileVersion\":3,\"requires\":true,\"packages\":{\"\":{\"dependencies\":{\"@priv/x\":\"1.0.0\"}},\"node_modules/@priv/x\":{\"version\":\"1.0.0\"}}}"}}`, want: [3]int{401, 403, 0}}},
	"GET /v1/projects/:id": {{path: "/v1/projects/" + strings.Repeat("0", 64), want: [3]int{401, 404, 404}}},
	// The web pages (internal/web): a browser without a token is sent to
	// the login form (303; a form post is refused, 401); with one, they
	// read through the same chain.
	"GET /":                     {{path: "/", want: [3]int{303, 200, 200}}},
	"GET /login":                {{path: "/login", want: [3]int{200, 200, 200}}},
	"POST /login":               {{path: "/login", body: "token=" + allToken, want: [3]int{303, 303, 303}}},
	"POST /logout":              {{path: "/logout", want: [3]int{401, 303, 303}}},
	"GET /static/*":             {{path: "/static/app.css", want: [3]int{200, 200, 200}}},
	"GET /static/highlight.css": {{path: "/static/highlight.css", want: [3]int{200, 200, 200}}},
	"GET /browse/*": {
		{path: "/browse/@priv/x@1.0.0/", want: [3]int{303, 403, 200}},
		{path: "/browse/@priv/x@1.0.0/x.js", want: [3]int{303, 403, 200}},
		{path: "/browse/@priv/x@1.0.0/?grep=secret", want: [3]int{303, 403, 200}},
		{path: "/browse/@priv/nope@1.0.0/", want: [3]int{303, 403, 404}},
		// The package page with its README, and a range or tag sent to
		// the exact version: the redirect names a version only to a
		// token that may read the package.
		{path: "/browse/@priv/x@1.0.0", want: [3]int{303, 403, 200}},
		{path: "/browse/@priv/x", want: [3]int{303, 403, 302}},
		{path: "/browse/@priv/x@latest/x.js", want: [3]int{303, 403, 302}},
		{path: "/browse/@priv/x@%5E1?versions=1", want: [3]int{303, 403, 302}},
		{path: "/browse/@priv/x@1.0.0?versions=", want: [3]int{303, 403, 200}},
		{path: "/browse/@priv/nope", want: [3]int{303, 403, 404}},
	},
	// The Fetch button of a version not stored: the access check before
	// any fill.
	"POST /browse/*":    {{path: "/browse/@priv/x@1.0.0/", want: [3]int{401, 403, 303}}},
	"POST /diff/*":      {{path: "/diff/@priv/x?from=1.0.0&to=1.0.0", want: [3]int{401, 403, 303}}},
	"GET /robots.txt":   {{path: "/robots.txt", want: [3]int{200, 200, 200}}},
	"GET /projects/:id": {{path: "/projects/" + strings.Repeat("0", 64), want: [3]int{303, 404, 404}}},
	"GET /diff/*": {
		{path: "/diff/@priv/x?from=1.0.0&to=1.0.0", want: [3]int{303, 403, 200}},
		// 302 to the exact versions once stored, the Fetch page before.
		{path: "/diff/@priv/x?from=latest&to=%5E1", want: [3]int{303, 403, 0}},
	},
	"GET /docs":        {{path: "/docs?q=gap", want: [3]int{303, 403, 0}, with: allToken}},
	"GET /docs/page":   {{path: "/docs/page?path=Web/CSS/gap", want: [3]int{303, 403, 0}, with: allToken}},
	"GET /docs/compat": {{path: "/docs/compat?key=css.properties.gap", want: [3]int{303, 403, 0}, with: allToken}},
	"POST /warm":       {{path: "/warm", body: "specs=%40priv%2Fx%401.0.0", want: [3]int{401, 403, 303}}},
	"GET /warm/:id":    {{path: "/warm/0123456789abcdef", want: [3]int{303, 404, 404}}},
}

// TestAccessOnEveryRoute walks every route the mirror registers × {no
// token, a token without the package's scope, a token with it}: the
// access check is the read chain's first link, and no route reaches a
// package around it (issue 11 §1).
func TestAccessOnEveryRoute(t *testing.T) {
	m, _ := privateMirror(t)
	e, ok := m.app.Handler().(*echo.Echo)
	if !ok {
		t.Fatalf("Handler is a %T, want *echo.Echo (this test walks its routes)", m.app.Handler())
	}
	seen := map[string]bool{}
	for _, r := range e.Routes() {
		if r.Method == echo.RouteNotFound {
			continue
		}
		key := r.Method + " " + r.Path
		seen[key] = true
		calls, ok := accessTable[key]
		if !ok && r.Method == http.MethodHead {
			// Every GET route answers HEAD as GET (api.New), through the
			// same access check: each caller gets GET's status.
			calls, ok = accessTable[http.MethodGet+" "+r.Path]
		}
		if !ok && r.Path == "/mcp" {
			// The streamable-HTTP handler answers only POST; the other
			// methods it is mounted on are refused without a token and
			// never read a package.
			calls, ok = []accessCall{{path: "/mcp", want: [3]int{401, 0, 0}}}, true
		}
		if !ok {
			t.Errorf("route %s has no entry in accessTable: add what each caller gets", key)
			continue
		}
		t.Run(key, func(t *testing.T) {
			for _, c := range calls {
				tokens := [3]string{"", pubToken, privToken}
				if c.with != "" {
					tokens[2] = c.with
				}
				for i, tok := range tokens {
					rec := send(e, r.Method, c.path, c.body, tok)
					got := rec.Code
					if r.Path == "/mcp" && got == 200 && strings.Contains(rec.Body.String(), `"isError":true`) {
						got = 0
						if strings.Contains(rec.Body.String(), "forbidden") {
							got = 403
						}
					}
					switch want := c.want[i]; {
					case want != 0 && got != want:
						t.Errorf("%s %s as %q: %d %.300s, want %d", r.Method, c.path, tok, rec.Code, rec.Body, want)
					case want == 0 && (got == 401 || got == 403):
						t.Errorf("%s %s as %q: %d %.300s, want neither 401 nor 403", r.Method, c.path, tok, rec.Code, rec.Body)
					}
					if got == 403 && !strings.Contains(rec.Body.String(), "may not read") {
						t.Errorf("%s %s as %q: 403 %.300s does not say which package the token may not read", r.Method, c.path, tok, rec.Body)
					}
				}
			}
		})
	}
	for key := range accessTable {
		if !seen[key] {
			t.Errorf("accessTable has %s, which is no longer registered", key)
		}
	}
}

// TestPrivateNamesCannotBeEnumerated: a token without the private scope
// gets the same 403 for a private package that exists and one that does
// not, from the jsDelivr-compatible metadata and resolved endpoints
// (before: 200 with every version and dist-tag, and 404 for an unknown
// name), and the private registry is never asked.
func TestPrivateNamesCannotBeEnumerated(t *testing.T) {
	m, priv := privateMirror(t)
	h := m.app.Handler()
	for _, path := range []string{
		"/v1/packages/npm/@priv/x", "/v1/packages/npm/@priv/nope",
		"/v1/packages/npm/@priv/x/resolved?specifier=latest", "/v1/packages/npm/@priv/nope/resolved?specifier=latest",
	} {
		if rec := send(h, "GET", path, "", pubToken); rec.Code != 403 || strings.Contains(rec.Body.String(), "1.0.0") {
			t.Errorf("%s with a token limited to @pub: %d %s, want 403", path, rec.Code, rec.Body)
		}
	}
	if n := priv.PackumentRequests("@priv/x") + priv.PackumentRequests("@priv/nope"); n != 0 {
		t.Errorf("the private registry was asked %d times for a refused caller", n)
	}
}

// TestWarmRefusesOutOfScopeItems: a warm request naming one package the
// token may not read is refused whole, 403 naming it, before anything is
// queued (before: 202, and the mirror fetched the private package with
// the org's registry token).
func TestWarmRefusesOutOfScopeItems(t *testing.T) {
	m, priv := privateMirror(t)
	h := m.app.Handler()
	rec := send(h, "POST", "/v1/warm", `{"specs":["@pub/y@1.0.0","@priv/x@1.0.0"]}`, pubToken)
	if rec.Code != 403 || !strings.Contains(rec.Body.String(), "@priv/x") {
		t.Fatalf("warm with an out-of-scope item: %d %s, want 403 naming @priv/x", rec.Code, rec.Body)
	}
	if n, err := m.app.Warm.Depth(t.Context()); err != nil || n != 0 {
		t.Errorf("queue depth after a refused request: %d %v, want 0", n, err)
	}
	// A request the token may make goes through; once it is done, the
	// refused one has left nothing behind.
	rec = send(h, "POST", "/v1/warm", `{"specs":["@pub/y@1.0.0"]}`, pubToken)
	if rec.Code != 202 {
		t.Fatalf("warm within scope: %d %s", rec.Code, rec.Body)
	}
	id := strings.TrimPrefix(rec.Header().Get("Location"), "/v1/warm/")
	if _, err := m.app.Warm.Wait(t.Context(), id, nil); err != nil {
		t.Fatal(err)
	}
	if n := priv.PackumentRequests("@priv/x"); n != 0 {
		t.Errorf("the private registry was asked %d times", n)
	}
	if n := m.reg.TarballDownloads("@pub/y", "1.0.0"); n != 1 {
		t.Errorf("@pub/y downloaded %d times, want 1 (by the allowed request only)", n)
	}
}

// TestWarmProgressNeedsEveryPackage: a warm request's progress (GET
// /v1/warm/{id} and the web page /warm/{id}) is shown only to a token that
// may read every package in it, the same check as submitting it; the
// refusal names the package (before: any token that knew the id read
// any request's packages).
func TestWarmProgressNeedsEveryPackage(t *testing.T) {
	m, _ := privateMirror(t)
	h := m.app.Handler()
	submit := func(specs, token string) string {
		t.Helper()
		rec := send(h, "POST", "/v1/warm", `{"specs":`+specs+`}`, token)
		if rec.Code != 202 {
			t.Fatalf("warm %s: %d %s", specs, rec.Code, rec.Body)
		}
		return strings.TrimPrefix(rec.Header().Get("Location"), "/v1/warm/")
	}
	privReq := submit(`["@priv/x@1.0.0"]`, privToken)
	unscoped := submit(`["lodash@4.17.21"]`, allToken)
	pubReq := submit(`["@pub/y@1.0.0"]`, pubToken)
	cases := []struct {
		id, token, refused string // refused: the package a 403 names, "" for 200
	}{
		{privReq, pubToken, "@priv/x"},
		{privReq, allToken, "@priv/x"}, // the private scope must be listed
		{privReq, privToken, ""},
		{unscoped, pubToken, "lodash"},
		{unscoped, privToken, "lodash"},
		{unscoped, allToken, ""},
		{pubReq, pubToken, ""},
		{pubReq, privToken, "@pub/y"},
	}
	for _, tc := range cases {
		for _, path := range []string{"/v1/warm/" + tc.id, "/warm/" + tc.id} {
			rec := send(h, "GET", path, "", tc.token)
			switch {
			case tc.refused == "" && rec.Code != 200:
				t.Errorf("%s as %s: %d %.300s, want 200", path, tc.token, rec.Code, rec.Body)
			case tc.refused != "" && (rec.Code != 403 || !strings.Contains(rec.Body.String(), tc.refused)):
				t.Errorf("%s as %s: %d %.300s, want 403 naming %s", path, tc.token, rec.Code, rec.Body, tc.refused)
			}
		}
	}
}

// TestWarmProgressOfSkippedItems: a warm request whose items were all
// skipped (git and file: dependencies, never fetched) is read only by a
// token that may read every item it names, as any other request (before:
// any token that knew its id read it, since skipped items were not
// checked), and a token that could not read it may not submit it.
func TestWarmProgressOfSkippedItems(t *testing.T) {
	m, _ := privateMirror(t)
	h := m.app.Handler()
	lockfile := `{"lockfile":{"name":"package.json","content":"{\"dependencies\":{\"secret-app\":\"github:org/secret-app\",\"local\":\"file:../local\"}}"}}`
	rec := send(h, "POST", "/v1/warm", lockfile, allToken)
	if rec.Code != 202 {
		t.Fatalf("warm: %d %s", rec.Code, rec.Body)
	}
	id := strings.TrimPrefix(rec.Header().Get("Location"), "/v1/warm/")
	p, err := m.app.Warm.Wait(t.Context(), id, nil)
	if err != nil || p.Skipped != 2 || len(p.Items) != 2 {
		t.Fatalf("request %s: %+v %v, want two skipped items", id, p, err)
	}
	for _, path := range []string{"/v1/warm/" + id, "/warm/" + id} {
		if rec := send(h, "GET", path, "", pubToken); rec.Code != 403 || !strings.Contains(rec.Body.String(), "may not read") {
			t.Errorf("%s as a token limited to @pub: %d %.300s, want 403 naming a package", path, rec.Code, rec.Body)
		}
		if rec := send(h, "GET", path, "", allToken); rec.Code != 200 {
			t.Errorf("%s as the unrestricted token: %d %.300s, want 200", path, rec.Code, rec.Body)
		}
	}
	if rec := send(h, "POST", "/v1/warm", lockfile, pubToken); rec.Code != 403 {
		t.Errorf("the same request from a token limited to @pub: %d %.300s, want 403", rec.Code, rec.Body)
	}
}
