package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/jsdelivr/fakejsdelivr"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// newFallbackMirror is a mirror with the jsDelivr fallback on, pointed at
// a fake jsDelivr. The cold budget is off unless a tweak sets it.
func newFallbackMirror(t *testing.T, kind storeKind, tweak ...func(*config.Config)) (*mirror, *fakejsdelivr.Server) {
	t.Helper()
	fj := fakejsdelivr.New(t)
	m := newMirror(t, kind, append([]func(*config.Config){func(c *config.Config) {
		c.JSDelivrFallback = true
		c.JSDelivrDataURL, c.JSDelivrCDNURL = fj.DataURL(), fj.CDNURL()
		c.ColdBudget = 0
	}}, tweak...)...)
	return m, fj
}

// publishBoth publishes the same tarball to the fake registry and the
// fake jsDelivr, as jsDelivr mirrors the public registry.
func publishBoth(m *mirror, fj *fakejsdelivr.Server, name, version string, tgz []byte) {
	m.reg.Publish(name, version, tgz)
	fj.Publish(name, version, tgz)
}

type fallbackAnswer struct {
	Source  string `json:"source"`
	Version string `json:"version"`
	listResult
	Content          string `json:"content"`
	Binary           bool   `json:"binary"`
	Complete         *bool  `json:"complete"`
	IncompleteReason string `json:"incompleteReason"`
	FilesNotSearched int    `json:"filesNotSearched"`
	FilesSearched    int    `json:"filesSearched"`
	Matches          []struct {
		File string `json:"file"`
		Line int    `json:"line"`
	} `json:"matches"`
}

// TestRegistryFailingJSDelivrAnswers: with the registry failing, list,
// glob, read and grep are answered from jsDelivr and say so; nothing of it
// reaches the store.
func TestRegistryFailingJSDelivrAnswers(t *testing.T) {
	forEachStore(t, func(t *testing.T, kind storeKind) {
		m, fj := newFallbackMirror(t, kind)
		publishBoth(m, fj, "icons", "1.0.0", grepPackage(t))
		m.reg.Fail("icons", http.StatusServiceUnavailable, "")

		var a fallbackAnswer
		if status, body := m.explore(`{"action":"list","packageName":"icons","version":"^1"}`, &a); status != 200 {
			t.Fatalf("list: %d %s", status, body)
		}
		if a.Source != "jsdelivr" || a.Version != "1.0.0" || strings.Join(a.files(), ",") != "README.md,crlf.js,dist/icons.d.ts,dist/index.min.js,logo.png" {
			t.Errorf("list = %+v", a)
		}
		a = fallbackAnswer{}
		m.explore(`{"action":"glob","packageName":"icons","version":"1.0.0","patterns":["**/*.d.ts"]}`, &a)
		if a.Source != "jsdelivr" || strings.Join(a.files(), ",") != "dist/icons.d.ts" {
			t.Errorf("glob = %+v", a)
		}
		a = fallbackAnswer{}
		m.explore(`{"action":"read","packageName":"icons","path":"dist/icons.d.ts","limit":1}`, &a)
		if a.Source != "jsdelivr" || a.Content != "     1\texport declare const ArrowLeft: Icon;" {
			t.Errorf("read = %+v", a)
		}
		a = fallbackAnswer{}
		m.explore(`{"action":"read","packageName":"icons","path":"logo.png"}`, &a)
		if !a.Binary || a.Content != "" {
			t.Errorf("binary read = %+v", a)
		}
		a = fallbackAnswer{}
		if status, body := m.explore(`{"action":"grep","packageName":"icons","pattern":"ArrowLeft"}`, &a); status != 200 {
			t.Fatalf("grep: %d %s", status, body)
		}
		if a.Source != "jsdelivr" || a.Complete == nil || !*a.Complete || len(a.Matches) != 5 || a.FilesSearched != 4 {
			t.Errorf("grep = %+v", a)
		}
		// The raw GET of /v1/npm/ goes through the same service.
		resp, body := m.get("/v1/npm/icons@1.0.0/crlf.js")
		if resp.StatusCode != 200 || string(body) != "const x = 1;\r\nconst ArrowLeftish = 2;\r\n" {
			t.Errorf("raw GET = %d %q", resp.StatusCode, body)
		}
		// CDN bytes never go into the store.
		if _, err := m.app.Store.Files(t.Context(), "icons", "1.0.0"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("store.Files after jsDelivr answers: %v, want ErrNotFound", err)
		}
		if _, err := m.app.Store.Version(t.Context(), "icons", "1.0.0"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("store.Version after jsDelivr answers: %v, want ErrNotFound", err)
		}
		// Once the registry is back, the store answers.
		m.reg.Fail("icons", 0, "")
		a = fallbackAnswer{}
		m.explore(`{"action":"list","packageName":"icons","version":"1.0.0"}`, &a)
		if a.Source != "" || len(a.files()) != 5 {
			t.Errorf("after recovery = %+v, want the store's answer", a)
		}
	})
}

// TestTarballFailingJSDelivrAnswers: the packument is cached, only the
// tarball download fails (the fill fails, not the resolve).
func TestTarballFailingJSDelivrAnswers(t *testing.T) {
	m, fj := newFallbackMirror(t, embedded)
	for _, v := range []string{"1.0.0", "2.0.0"} {
		publishBoth(m, fj, "lib", v, tarballtest.Package(t, map[string]string{"index.js": "// " + v + "\n"}))
	}
	var a fallbackAnswer
	if status, body := m.explore(`{"action":"list","packageName":"lib","version":"1.0.0"}`, &a); status != 200 || a.Source != "" {
		t.Fatalf("warm-up: %d %s", status, body)
	}
	m.reg.Fail("lib", http.StatusBadGateway, "")
	a = fallbackAnswer{}
	if status, body := m.explore(`{"action":"read","packageName":"lib","version":"2.0.0","path":"index.js"}`, &a); status != 200 ||
		a.Source != "jsdelivr" || a.Content != "     1\t// 2.0.0" {
		t.Errorf("read of 2.0.0 with the tarball failing = %d %s", status, body)
	}
}

// TestGrepFallbackBudget: a grep over jsDelivr that ran out of budget
// says it is incomplete and why.
func TestGrepFallbackBudget(t *testing.T) {
	m, fj := newFallbackMirror(t, embedded, func(c *config.Config) { c.JSDelivrGrepMaxFiles = 2 })
	publishBoth(m, fj, "icons", "1.0.0", grepPackage(t))
	m.reg.Fail("icons", http.StatusInternalServerError, "")
	var a fallbackAnswer
	if status, body := m.explore(`{"action":"grep","packageName":"icons","pattern":"ArrowLeft"}`, &a); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	if a.Complete == nil || *a.Complete || a.FilesSearched != 2 || a.FilesNotSearched != 2 ||
		!strings.Contains(a.IncompleteReason, "jsdelivr-grep-max-files=2") {
		t.Errorf("grep over budget = %+v", a)
	}
	status, body := m.explore(`{"action":"grep","packageName":"icons","pattern":"a("}`, nil)
	if status != 400 {
		t.Errorf("bad pattern over the fallback = %d %s", status, body)
	}
}

// TestBothFailing: registry and jsDelivr failing answer the registry's
// 503 with Retry-After, never a 404, and nothing is remembered: once both
// recover, the same request succeeds.
func TestBothFailing(t *testing.T) {
	m, fj := newFallbackMirror(t, embedded)
	publishBoth(m, fj, "down", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x"}))
	m.reg.Fail("down", http.StatusServiceUnavailable, "17")
	fj.Fail(http.StatusServiceUnavailable)
	for _, body := range []string{
		`{"action":"list","packageName":"down"}`,
		`{"action":"read","packageName":"down","version":"1.0.0","path":"a.js"}`,
		`{"action":"grep","packageName":"down","pattern":"x"}`,
	} {
		resp, err := http.Post(m.srv.URL+"/v1/explore", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct{ Code, Message string }
		}
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "17" || e.Error.Code != "upstream_unavailable" ||
			!strings.Contains(e.Error.Message, "jsdelivr") {
			t.Errorf("%s: %d Retry-After %q %+v", body, resp.StatusCode, resp.Header.Get("Retry-After"), e)
		}
	}
	m.reg.Fail("down", 0, "")
	fj.Fail(0)
	var a fallbackAnswer
	if status, body := m.explore(`{"action":"list","packageName":"down"}`, &a); status != 200 || a.Source != "" || len(a.files()) != 1 {
		t.Errorf("after recovery: %d %s", status, body)
	}
}

// TestJSDelivrForbiddenIsNotNotFound: jsDelivr's 403 (its package size
// limit) with the registry down is the registry's 503, not a 404.
func TestJSDelivrForbiddenIsNotNotFound(t *testing.T) {
	m, fj := newFallbackMirror(t, embedded)
	publishBoth(m, fj, "huge", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x"}))
	fj.TooLarge("huge", "1.0.0")
	m.reg.Fail("huge", http.StatusServiceUnavailable, "")
	status, body := m.explore(`{"action":"list","packageName":"huge","version":"1.0.0"}`, nil)
	if status != 503 || !bytes.Contains(body, []byte("size limit")) {
		t.Errorf("jsDelivr 403 = %d %s, want the registry's 503 naming jsDelivr's size limit", status, body)
	}
}

// TestColdBudget: a cold fill slower than the budget is answered from
// jsDelivr while it goes on; the next request, once it is done, comes from
// the store, and the tarball was downloaded once.
func TestColdBudget(t *testing.T) {
	m, fj := newFallbackMirror(t, embedded, func(c *config.Config) { c.ColdBudget = time.Millisecond })
	for _, v := range []string{"1.0.0", "2.0.0"} {
		publishBoth(m, fj, "big", v, tarballtest.Package(t, map[string]string{"index.js": "// " + v + "\n", "package.json": "{}"}))
	}
	// Cache the packument through the store-only endpoint, which waits
	// for its fill, so that only the tarball download is held below.
	if resp, body := m.get("/v1/packages/npm/big@1.0.0?structure=flat"); resp.StatusCode != 200 {
		t.Fatalf("warm-up: %d %s", resp.StatusCode, body)
	}
	release := m.reg.Hold("big")
	var a fallbackAnswer
	if status, body := m.explore(`{"action":"list","packageName":"big","version":"2.0.0"}`, &a); status != 200 {
		t.Fatalf("cold list: %d %s", status, body)
	}
	if a.Source != "jsdelivr" || strings.Join(a.files(), ",") != "index.js,package.json" {
		t.Errorf("cold list = %+v, want jsDelivr's answer", a)
	}
	release()
	// The store-only endpoint joins the fill still in flight.
	if resp, body := m.get("/v1/packages/npm/big@2.0.0?structure=flat"); resp.StatusCode != 200 {
		t.Fatalf("waiting for the fill: %d %s", resp.StatusCode, body)
	}
	a = fallbackAnswer{}
	if status, body := m.explore(`{"action":"read","packageName":"big","version":"2.0.0","path":"index.js"}`, &a); status != 200 || a.Source != "" {
		t.Errorf("after the fill: %d %s, want the store's answer", status, body)
	}
	if n := m.reg.TarballDownloads("big", "2.0.0"); n != 1 {
		t.Errorf("tarball downloaded %d times, want 1", n)
	}
}

// stripLinks re-encodes JSON compactly without its "links" members, in
// the document's own key order. links name each server's own URLs (and
// the mirror serves no stats or entry points), so they cannot agree.
func stripLinks(t *testing.T, b []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out bytes.Buffer
	str := func(s string) {
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		out.Truncate(out.Len() - 1)
	}
	var value func()
	value = func() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("decoding %s: %v", b, err)
		}
		switch v := tok.(type) {
		case json.Delim:
			open, end := byte(v), byte('}')
			if v == '[' {
				end = ']'
			}
			out.WriteByte(open)
			first := true
			for dec.More() {
				if open == '{' {
					k, _ := dec.Token()
					if k == "links" {
						var skip json.RawMessage
						dec.Decode(&skip)
						continue
					}
					if !first {
						out.WriteByte(',')
					}
					str(k.(string))
					out.WriteByte(':')
				} else if !first {
					out.WriteByte(',')
				}
				first = false
				value()
			}
			dec.Token()
			out.WriteByte(end)
		case string:
			str(v)
		case json.Number:
			out.WriteString(v.String())
		case bool:
			fmt.Fprint(&out, v)
		case nil:
			out.WriteString("null")
		}
	}
	value()
	return out.String()
}

// TestJSDelivrCompatibleEndpoints: the mirror's jsDelivr endpoints answer
// the same bytes as (the fake) jsDelivr for the same packages, scoped
// ones included, links aside.
func TestJSDelivrCompatibleEndpoints(t *testing.T) {
	m, fj := newFallbackMirror(t, embedded)
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0-rc.1"} {
		publishBoth(m, fj, "widget", v, tarballtest.Package(t, map[string]string{
			"package.json":      `{"name":"widget","version":"` + v + `","main":"dist/index.js"}`,
			"dist/index.js":     "export default '<" + v + ">';\n",
			"dist/index.min.js": "export default'" + v + "';",
			"dist/esm/a.mjs":    "export const a = 1;\n",
			"dist/cjs/a.cjs":    "exports.a = 1;\n",
			"lib/util.js":       "module.exports = {};\n",
			"README.md":         "# widget & co\n",
			"LICENSE":           "MIT",
		}))
	}
	publishBoth(m, fj, "@types/widget", "3.0.0", tarballtest.PackageUnder(t, "widget", map[string]string{
		"package.json": `{"name":"@types/widget","types":"index.d.ts"}`,
		"index.d.ts":   "export {};\n",
		"sub/x.d.ts":   "export type X = 1;\n",
	}))
	paths := []string{
		"/v1/packages/npm/widget@1.1.0",
		"/v1/packages/npm/widget@1.1.0?structure=flat",
		"/v1/packages/npm/widget@2.0.0-rc.1?structure=tree",
		"/v1/packages/npm/widget/resolved",
		"/v1/packages/npm/widget/resolved?specifier=1.0",
		"/v1/packages/npm/widget/resolved?specifier=next",
		"/v1/packages/npm/widget/resolved?specifier=%5E9",
		"/v1/packages/npm/widget",
		"/v1/packages/npm/@types/widget@3.0.0",
		"/v1/packages/npm/@types/widget@3.0.0?structure=flat",
		"/v1/packages/npm/@types/widget/resolved?specifier=3",
		"/v1/packages/npm/@types/widget",
	}
	m.reg.SetDistTag("widget", "next", "2.0.0-rc.1")
	fj.SetDistTag("widget", "next", "2.0.0-rc.1")
	for _, p := range paths {
		mresp, mbody := m.get(p)
		jresp, err := http.Get(fj.DataURL() + p)
		if err != nil {
			t.Fatal(err)
		}
		var jbody bytes.Buffer
		jbody.ReadFrom(jresp.Body)
		jresp.Body.Close()
		if mresp.StatusCode != 200 || jresp.StatusCode != 200 {
			t.Errorf("%s: mirror %d %s, jsDelivr %d %s", p, mresp.StatusCode, mbody, jresp.StatusCode, jbody.Bytes())
			continue
		}
		if got, want := stripLinks(t, mbody), stripLinks(t, jbody.Bytes()); got != want {
			t.Errorf("%s:\nmirror   %s\njsDelivr %s", p, got, want)
		}
		if !bytes.HasPrefix(mbody, []byte(`{"type":"npm","name":`)) || bytes.HasSuffix(mbody, []byte("\n")) {
			t.Errorf("%s: not jsDelivr's compact JSON: %s", p, mbody)
		}
	}
	for _, tc := range []struct{ mirror, jsdelivr string }{
		{"/npm/widget@1.1.0/dist/index.js", "/npm/widget@1.1.0/dist/index.js"},
		{"/npm/widget@1.1.0", "/npm/widget@1.1.0/dist/index.min.js"}, // no path: the default file
		{"/npm/widget@^1/README.md", "/npm/widget@1.1.0/README.md"},
		{"/npm/@types/widget@3.0.0/sub/x.d.ts", "/npm/@types/widget@3.0.0/sub/x.d.ts"},
	} {
		mresp, mbody := m.get(tc.mirror)
		jresp, err := http.Get(fj.CDNURL() + tc.jsdelivr)
		if err != nil {
			t.Fatal(err)
		}
		var jbody bytes.Buffer
		jbody.ReadFrom(jresp.Body)
		jresp.Body.Close()
		if mresp.StatusCode != 200 || jresp.StatusCode != 200 || !bytes.Equal(mbody, jbody.Bytes()) || mresp.Header.Get("X-Jsd-Version") == "" {
			t.Errorf("%s: %d %q, jsDelivr %d %q", tc.mirror, mresp.StatusCode, mbody, jresp.StatusCode, jbody.Bytes())
		}
	}
	// Errors in jsDelivr's shape.
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/v1/packages/npm/nope@1.0.0", 404},
		{"/v1/packages/npm/widget@9.9.9", 404},
		{"/v1/packages/npm/widget@^1", 404}, // jsDelivr wants an exact version here
		{"/v1/packages/npm/widget@1.1.0?structure=deep", 400},
		{"/v1/packages/npm/nope/resolved", 404},
		{"/npm/widget@1.1.0/missing.js", 404},
	} {
		resp, body := m.get(tc.path)
		var e struct {
			Status  int    `json:"status"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != tc.status || e.Status != tc.status || e.Message == "" {
			t.Errorf("%s = %d %s, want jsDelivr's error shape with %d", tc.path, resp.StatusCode, body, tc.status)
		}
	}
	// The registry down is the mirror's 503, not a jsDelivr-shaped 404.
	m.reg.Fail("gone", http.StatusServiceUnavailable, "")
	if resp, body := m.get("/v1/packages/npm/gone/resolved"); resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("registry down = %d %s", resp.StatusCode, body)
	}
	if n := fj.Requests("listing widget@1.1.0"); n != 2 { // the two direct GETs above; the mirror asked none
		t.Errorf("jsDelivr listed widget@1.1.0 %d times, want 2: compatible endpoints serve the store", n)
	}
}
