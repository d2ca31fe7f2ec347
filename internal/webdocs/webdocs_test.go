package webdocs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/app"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/webdocs"
	"github.com/pkgscope/pkgscope/internal/webdocs/fakemdn"
	"github.com/pkgscope/pkgscope/internal/webdocs/webdocstest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		// The live test's TLS connection to the real registry idles in
		// the app's HTTP client after Close (the fakes' servers close
		// theirs); it is the transport's, not a leak of this package.
		if err := goleak.Find(goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop")); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// mirror is a wired pkgscope (embedded store) against a fake registry
// holding the fixture data packages, and a fake MDN.
type mirror struct {
	t   *testing.T
	reg *fakeregistry.Registry
	mdn *fakemdn.Server
	app *app.App
	srv *httptest.Server
}

// newMirror wires a mirror; mdnOn says whether the configured MDN is the
// (seeded, running) fake, else MDN fetching is off.
func newMirror(t *testing.T, mdnOn bool, tweak ...func(*config.Config)) *mirror {
	t.Helper()
	m := &mirror{t: t, reg: fakeregistry.New(t), mdn: fakemdn.New(t)}
	webdocstest.Publish(t, m.reg)
	webdocstest.SeedMDN(m.mdn)
	cfg := config.Default()
	cfg.DataDir, cfg.ProjectDir = t.TempDir(), t.TempDir()
	v := webdocstest.Versions()
	cfg.WebDocsBCDVersion, cfg.WebDocsInventoryVersion, cfg.WebDocsIDLVersion, cfg.WebDocsFeaturesVersion = v.BCD, v.Inventory, v.IDL, v.Features
	cfg.MDNBaseURL = ""
	if mdnOn {
		cfg.MDNBaseURL = m.mdn.URL()
	}
	for _, f := range tweak {
		f(&cfg)
	}
	env := m.reg.Env()
	a, err := app.New(t.Context(), cfg, slog.New(slog.DiscardHandler), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	m.app = a
	m.srv = httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		m.srv.Close()
		a.Close()
	})
	return m
}

// service returns a web docs service over the mirror's explore service,
// with options the app does not expose (a short MDN cooldown).
func (m *mirror) service(mdn webdocs.MDNOptions) *webdocs.Service {
	return webdocs.New(m.app.Service, webdocs.Options{Versions: webdocstest.Versions(), MDN: mdn})
}

// post sends body to /v1/webdocs, decoding a 200 into out.
func (m *mirror) post(body string, out any) (int, http.Header, []byte) {
	m.t.Helper()
	resp, err := http.Post(m.srv.URL+"/v1/webdocs", "application/json", strings.NewReader(body))
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, out); err != nil {
			m.t.Fatalf("decoding %s: %v", b, err)
		}
	}
	return resp.StatusCode, resp.Header, b
}

type apiError struct {
	Error struct{ Code, Message string }
}

func (m *mirror) postError(body string) (int, apiError) {
	m.t.Helper()
	status, _, b := m.post(body, nil)
	var e apiError
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Code == "" {
		m.t.Fatalf("%s: %d %s is not the error shape", body, status, b)
	}
	return status, e
}

func paths(docs []webdocs.Document) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.Path)
	}
	return out
}

func TestSearchRanking(t *testing.T) {
	m := newMirror(t, false)
	for _, tc := range []struct {
		query string
		first string
		also  []string // in the results, anywhere
	}{
		// The exact interface name: the interface page, then its
		// constructor (whose last slug segment is the same word), above
		// the overview that lists the same compat key.
		{"ResizeObserver", "/en-US/docs/Web/API/ResizeObserver", []string{"/en-US/docs/Web/API/ResizeObserver/ResizeObserver", "/en-US/docs/Web/API/Resize_Observer_API", "/en-US/docs/Web/API/ResizeObserverEntry"}},
		{"resizeobserver", "/en-US/docs/Web/API/ResizeObserver", nil},
		{"resize observer", "/en-US/docs/Web/API/ResizeObserver", []string{"/en-US/docs/Web/API/Resize_Observer_API"}},
		{"ResizeObs", "/en-US/docs/Web/API/ResizeObserver", nil},
		{"api.ResizeObserver", "/en-US/docs/Web/API/ResizeObserver", nil},
		{"ResizeObserver()", "/en-US/docs/Web/API/ResizeObserver/ResizeObserver", nil},
		{"gap", "/en-US/docs/Web/CSS/Reference/Properties/gap", []string{"/en-US/docs/Web/CSS/Reference/Properties/row-gap"}},
		{"css.properties.gap", "/en-US/docs/Web/CSS/Reference/Properties/gap", nil},
		{"Element.append", "/en-US/docs/Web/API/Element/append", nil},
		{"observe", "/en-US/docs/Web/API/ResizeObserver/observe", nil},
		// A dictionary its declaration takes finds the method.
		{"ResizeObserverOptions", "/en-US/docs/Web/API/ResizeObserver/observe", nil},
		// A question: its subject among words many pages hold.
		{"is ResizeObserver available in Safari 15", "/en-US/docs/Web/API/ResizeObserver", nil},
		{"does Safari support the gap property", "/en-US/docs/Web/CSS/Reference/Properties/gap", nil},
		// A path or URL finds its page first.
		{"https://developer.mozilla.org/en-US/docs/Web/CSS/gap", "/en-US/docs/Web/CSS/Reference/Properties/gap", nil},
	} {
		var res webdocs.SearchResult
		status, _, body := m.post(fmt.Sprintf(`{"action":"search","query":%q}`, tc.query), &res)
		if status != 200 {
			t.Errorf("search %q: %d %s", tc.query, status, body)
			continue
		}
		got := paths(res.Documents)
		if len(got) == 0 || got[0] != tc.first {
			t.Errorf("search %q: first %v, want %s", tc.query, got, tc.first)
		}
		for _, p := range tc.also {
			if !slices.Contains(got, p) {
				t.Errorf("search %q: %v lacks %s", tc.query, got, p)
			}
		}
		if res.Total < len(res.Documents) {
			t.Errorf("search %q: total %d < %d documents", tc.query, res.Total, len(res.Documents))
		}
	}
}

func TestSearchResultShapeAndPaging(t *testing.T) {
	m := newMirror(t, false)
	var res webdocs.SearchResult
	if status, _, body := m.post(`{"action":"search","query":"ResizeObserver"}`, &res); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	d := res.Documents[0]
	if d.Title != "ResizeObserver" || d.PageType != "web-api-interface" || !slices.Equal(d.CompatKeys, []string{"api.ResizeObserver"}) || d.Score <= res.Documents[1].Score {
		t.Errorf("first document = %+v", d)
	}
	// Offline, summaries come from the packages: web-features for the
	// interface, the IDL declaration for a member.
	if !strings.Contains(d.Summary, "observes and reacts to changes in the size") {
		t.Errorf("interface summary = %q", d.Summary)
	}
	if c := res.Documents[1]; c.Summary != "IDL: constructor(ResizeObserverCallback callback);" {
		t.Errorf("constructor summary = %q", c.Summary)
	}
	if res.Versions != webdocstest.Versions() {
		t.Errorf("dataVersions = %+v", res.Versions)
	}
	total := res.Total
	var all []string
	for off := 0; off < total; off += 2 {
		var page webdocs.SearchResult
		if status, _, body := m.post(fmt.Sprintf(`{"action":"search","query":"ResizeObserver","limit":2,"offset":%d}`, off), &page); status != 200 || page.Total != total || page.Offset != off {
			t.Fatalf("page at %d: %d %s", off, status, body)
		}
		all = append(all, paths(page.Documents)...)
	}
	if !slices.Equal(all, paths(res.Documents)[:min(total, len(res.Documents))]) && len(all) != total {
		t.Errorf("pages %v do not add up to the %d results %v", all, total, paths(res.Documents))
	}
	var past webdocs.SearchResult
	if status, _, _ := m.post(`{"action":"search","query":"ResizeObserver","offset":1000}`, &past); status != 200 || len(past.Documents) != 0 || past.Total != total {
		t.Errorf("offset past the end = %d %+v", status, past)
	}
	var none webdocs.SearchResult
	if status, _, _ := m.post(`{"action":"search","query":"zzzqqq"}`, &none); status != 200 || none.Total != 0 || none.Documents == nil {
		t.Errorf("no match = %d %+v (documents must be [] not null)", status, none)
	}
}

func TestGetCompat(t *testing.T) {
	m := newMirror(t, false)
	var c webdocs.Compat
	if status, _, body := m.post(`{"action":"get_compat","key":"api.ResizeObserver"}`, &c); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	type compat struct {
		Support map[string]struct {
			VersionAdded any `json:"version_added"`
		}
		SpecURL string `json:"spec_url"`
	}
	var data map[string]json.RawMessage
	var own compat
	if err := json.Unmarshal(c.Data, &data); err != nil || json.Unmarshal(data["__compat"], &own) != nil {
		t.Fatalf("data %s: %v", c.Data, err)
	}
	if own.Support["chrome"].VersionAdded != "64" || own.Support["safari"].VersionAdded != "13.1" || own.Support["ie"].VersionAdded != false ||
		own.SpecURL != "https://drafts.csswg.org/resize-observer/#resize-observer-interface" {
		t.Errorf("api.ResizeObserver __compat = %+v", own)
	}
	for _, child := range []string{"ResizeObserver", "observe", "disconnect"} {
		var sub struct {
			Compat compat `json:"__compat"`
		}
		if err := json.Unmarshal(data[child], &sub); err != nil || sub.Compat.Support["firefox"].VersionAdded != "69" {
			t.Errorf("child %s = %s (%v)", child, data[child], err)
		}
	}
	if _, ok := data["options_box_parameter"]; ok {
		t.Error("a grandchild is in the answer; only direct children belong")
	}
	bl := c.Baseline
	if bl == nil || bl.Status != "high" || bl.HighDate != "2023-01-28" || bl.LowDate != "2020-07-28" || bl.Feature != "resize-observer" || bl.Scope != "key" || bl.Support["firefox"] != "69" {
		t.Errorf("baseline = %+v", bl)
	}
	if c.DocPath != "/en-US/docs/Web/API/ResizeObserver" {
		t.Errorf("docPath = %q (mdn_url's page, not the overview)", c.DocPath)
	}

	for _, tc := range []struct {
		key, canonical, status, scope string
		discouraged                   bool
		feature                       string // the whole feature's status, when the key's differs
	}{
		{"api.ResizeObserver.observe.options_box_parameter", "", "low", "key", false, "high"},
		{"api.ResizeObserver.disconnect", "", "high", "feature", false, ""}, // no per-key status: the feature's
		{"css.properties.gap", "", "high", "feature", false, ""},
		{"api.Element.append", "", "limited", "feature", true, ""},
		{"api.resizeobserver", "api.ResizeObserver", "high", "key", false, ""}, // case folded to the real key
	} {
		var r webdocs.Compat
		status, _, body := m.post(fmt.Sprintf(`{"action":"get_compat","key":%q}`, tc.key), &r)
		want := tc.canonical
		if want == "" {
			want = tc.key
		}
		if status != 200 || r.Key != want || r.Baseline == nil || r.Baseline.Status != tc.status || r.Baseline.Scope != tc.scope || r.Baseline.Discouraged != tc.discouraged ||
			r.Baseline.FeatureStatus != tc.feature {
			t.Errorf("get_compat %s = %d %s", tc.key, status, body)
		}
	}
	// An interior node has no __compat, only its children.
	var props map[string]json.RawMessage
	var r webdocs.Compat
	if status, _, body := m.post(`{"action":"get_compat","key":"css.properties"}`, &r); status != 200 || json.Unmarshal(r.Data, &props) != nil {
		t.Fatalf("css.properties = %d %s", status, body)
	}
	if _, ok := props["__compat"]; ok || props["gap"] == nil || props["row-gap"] == nil || r.Baseline != nil {
		t.Errorf("css.properties = %s, baseline %+v", r.Data, r.Baseline)
	}
}

// The children cap: the rest are named, not dropped silently.
func TestGetCompatCapsChildren(t *testing.T) {
	m := newMirror(t, false)
	s := webdocs.New(m.app.Service, webdocs.Options{Versions: webdocstest.Versions(), Limits: webdocs.Limits{MaxCompatChildren: 1}})
	c, err := s.GetCompat(t.Context(), "api.ResizeObserver")
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(c.Data, &data); err != nil {
		t.Fatalf("data %s: %v", c.Data, err)
	}
	if len(data) != 2 || len(c.MoreChildren) != 2 {
		t.Errorf("data keys %d (want __compat + 1 child), moreChildren %v", len(data), c.MoreChildren)
	}
}

func TestGetCompatErrors(t *testing.T) {
	m := newMirror(t, false)
	for _, tc := range []struct {
		key    string
		status int
		code   string
		want   []string // in the message
	}{
		{"api.ResizeObserverr", 404, "not_found", []string{`"api.ResizeObserverr"`, "closest valid keys: api.ResizeObserver"}},
		{"api.ResizeObserver.observ", 404, "not_found", []string{"api.ResizeObserver.observe"}},
		{"api.ResizeObserver.nope", 404, "not_found", []string{"api.ResizeObserver"}},
		{"css.properties.gapp", 404, "not_found", []string{"css.properties.gap"}},
		// Names as code and docs write them (Array.prototype.findLast is
		// javascript.builtins.Array.findLast).
		{"ResizeObserver.prototype.observe", 404, "not_found", []string{"closest valid keys: api.ResizeObserver.observe"}},
		{"ResizeObserver.observe()", 404, "not_found", []string{"closest valid keys: api.ResizeObserver.observe"}},
		{"gap", 404, "not_found", []string{"closest valid keys: css.properties.gap"}},
		{"/en-US/docs/Web/API/ResizeObserver", 404, "not_found", []string{"an MDN page", "api.ResizeObserver"}},
		{"https://developer.mozilla.org/en-US/docs/Web/CSS/gap", 404, "not_found", []string{"css.properties.gap"}},
		{"zzz.qqq.www.eee.rrr.ttt.yyy", 404, "not_found", []string{"search for the feature by name"}},
		{"api..ResizeObserver", 400, "bad_request", []string{"not a BCD key"}},
		{"api.Resize Observer", 400, "bad_request", []string{"not a BCD key"}},
		{"", 400, "bad_request", []string{"missing"}},
		{strings.Repeat("a", 600), 422, "limit_exceeded", []string{"webdocs-max-query-bytes"}},
	} {
		status, e := m.postError(fmt.Sprintf(`{"action":"get_compat","key":%q}`, tc.key))
		if status != tc.status || e.Error.Code != tc.code {
			t.Errorf("get_compat %.40q = %d %s, want %d %s", tc.key, status, e.Error.Code, tc.status, tc.code)
		}
		for _, w := range tc.want {
			if !strings.Contains(e.Error.Message, w) {
				t.Errorf("get_compat %.40q: message %q lacks %q", tc.key, e.Error.Message, w)
			}
		}
	}
}

func TestGetDocOfflineShowsIDL(t *testing.T) {
	for _, tc := range []struct {
		name string
		mdn  func(m *mirror) string // the MDN base URL
		why  string
	}{
		{"mdn off", func(*mirror) string { return "" }, "setting mdn-base-url"},
		{"mdn answers 503", func(m *mirror) string { m.mdn.SetDown(true); return m.mdn.URL() }, "MDN unreachable"},
		{"mdn not listening", func(m *mirror) string { u := m.mdn.URL(); m.mdn.Close(); return u }, "MDN unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMirror(t, false)
			base := tc.mdn(m)
			s := m.service(webdocs.MDNOptions{BaseURL: base})
			d, err := s.GetDoc(t.Context(), "/en-US/docs/Web/API/ResizeObserver/ResizeObserver")
			if err != nil {
				t.Fatal(err)
			}
			if d.Source != "packages" || !strings.Contains(d.Note, "unavailable") || !strings.Contains(d.Note, tc.why) {
				t.Errorf("source %q note %q", d.Source, d.Note)
			}
			// One line, naming no URL, address or resolver (issue 11 §7,
			// issue 12 item 6): net/http's dial errors name all three.
			host := strings.TrimPrefix(base, "http://")
			if strings.Contains(d.Note, "\n") || (base != "" && (strings.Contains(d.Note, host) || strings.Contains(d.Note, "http://"))) ||
				strings.Contains(d.Note, "dial") || strings.Contains(d.Note, "127.0.0.1") {
				t.Errorf("note %q is not one line free of internal detail", d.Note)
			}
			if !strings.Contains(d.IDL, "interface ResizeObserver {\n  constructor(ResizeObserverCallback callback);\n};") || strings.Contains(d.IDL, "observe(") {
				t.Errorf("IDL = %q, want only the constructor", d.IDL)
			}
			if !strings.Contains(d.IDL, "// resize-observer: Resize Observer Module Level 1 (https://drafts.csswg.org/resize-observer-1/)") {
				t.Errorf("IDL does not name its spec: %q", d.IDL)
			}
			for _, want := range []string{
				"# ResizeObserver: ResizeObserver() constructor", "Page type: web-api-constructor",
				"constructor(ResizeObserverCallback callback);", "`api.ResizeObserver.ResizeObserver`: Baseline widely available since 2023-01-28",
				"https://drafts.csswg.org/resize-observer/#dom-resizeobserver-resizeobserver",
			} {
				if !strings.Contains(d.Content, want) {
					t.Errorf("content lacks %q:\n%s", want, d.Content)
				}
			}
			if d.PageType != "web-api-constructor" || !slices.Equal(d.BrowserCompat, []string{"api.ResizeObserver.ResizeObserver"}) ||
				!slices.Equal(d.SpecURLs, []string{"https://drafts.csswg.org/resize-observer/#dom-resizeobserver-resizeobserver"}) {
				t.Errorf("doc = %+v", d)
			}
		})
	}
}

func TestGetDocFromMDN(t *testing.T) {
	m := newMirror(t, true)
	var d webdocs.Doc
	if status, _, body := m.post(`{"action":"get_doc","path":"https://developer.mozilla.org/en-US/docs/Web/API/ResizeObserver/ResizeObserver"}`, &d); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	if d.Source != "mdn" || d.Note != "" {
		t.Errorf("source %q note %q", d.Source, d.Note)
	}
	for _, want := range []string{
		"# ResizeObserver: ResizeObserver() constructor",
		"The **`ResizeObserver()`** constructor creates a new [`ResizeObserver`](/en-US/docs/Web/API/ResizeObserver) object.",
		"## Syntax\n\n```js\nnew ResizeObserver(callback)\n```",
		"### Parameters\n\n- **`callback`**\n  The function called whenever an observed resize occurs.",
		"  - `entries`: an array of `ResizeObserverEntry` objects",
		"> **Note:** callbacks run after layout.",
		"| Box | Meaning |\n| --- | --- |\n| `content-box` | the content area |",
		"- [Resize Observer](https://drafts.csswg.org/resize-observer/#dom-resizeobserver-resizeobserver)",
		"Support table: action get_compat with key `api.ResizeObserver.ResizeObserver`.",
	} {
		if !strings.Contains(d.Content, want) {
			t.Errorf("content lacks %q:\n%s", want, d.Content)
		}
	}
	if !strings.Contains(d.IDL, "constructor(ResizeObserverCallback callback);") {
		t.Errorf("IDL missing next to MDN's prose: %q", d.IDL)
	}
	// Cached: a second read does not ask MDN again.
	if status, _, _ := m.post(`{"action":"get_doc","path":"/en-US/docs/Web/API/ResizeObserver/ResizeObserver"}`, &d); status != 200 || d.Source != "mdn" {
		t.Fatalf("second read: %d %+v", status, d)
	}
	if n := m.mdn.Requests("/en-US/docs/Web/API/ResizeObserver/ResizeObserver"); n != 1 {
		t.Errorf("MDN asked %d times for one page, want 1 (cached)", n)
	}
	// A page MDN does not have (row-gap is not seeded): the packages
	// answer, saying so.
	if status, _, body := m.post(`{"action":"get_doc","path":"/en-US/docs/Web/CSS/Reference/Properties/row-gap"}`, &d); status != 200 || d.Source != "packages" || !strings.Contains(d.Note, "404") {
		t.Errorf("page missing on MDN: %d %s", status, body)
	}
	// With MDN up, search summaries are MDN's own.
	var res webdocs.SearchResult
	if status, _, body := m.post(`{"action":"search","query":"ResizeObserver"}`, &res); status != 200 || !strings.HasPrefix(res.Documents[0].Summary, "The ResizeObserver interface reports changes") {
		t.Errorf("search with MDN up: %d %s", status, body)
	}
	if m.mdn.Requests("/api/v1/search") != 1 {
		t.Errorf("MDN search asked %d times", m.mdn.Requests("/api/v1/search"))
	}
}

// After MDN fails it is left alone for the cooldown, then asked again.
func TestMDNCooldown(t *testing.T) {
	m := newMirror(t, false)
	s := m.service(webdocs.MDNOptions{BaseURL: m.mdn.URL(), Cooldown: time.Nanosecond})
	m.mdn.SetDown(true)
	d, err := s.GetDoc(t.Context(), "/en-US/docs/Web/API/ResizeObserver")
	if err != nil || d.Source != "packages" {
		t.Fatalf("MDN down: %+v %v", d, err)
	}
	m.mdn.SetDown(false)
	// A nanosecond cooldown has passed by now.
	d, err = s.GetDoc(t.Context(), "/en-US/docs/Web/API/ResizeObserver")
	if err != nil || d.Source != "mdn" {
		t.Fatalf("MDN back: %+v %v", d, err)
	}
	long := m.service(webdocs.MDNOptions{BaseURL: m.mdn.URL(), Cooldown: time.Hour})
	m.mdn.SetDown(true)
	for range 3 {
		if d, err := long.GetDoc(t.Context(), "/en-US/docs/Web/CSS/Reference/Properties/gap"); err != nil || d.Source != "packages" {
			t.Fatalf("MDN down: %+v %v", d, err)
		}
	}
	if n := m.mdn.Requests("/en-US/docs/Web/CSS/Reference/Properties/gap"); n != 1 {
		t.Errorf("MDN asked %d times during its cooldown, want 1", n)
	}
}

func TestGetDocPathsAndRedirects(t *testing.T) {
	m := newMirror(t, false)
	for _, tc := range []struct {
		path, want, redirectedFrom, note string
	}{
		{"/en-US/docs/Web/CSS/gap", "/en-US/docs/Web/CSS/Reference/Properties/gap", "/en-US/docs/Web/CSS/gap", "redirects here"},
		{"https://developer.mozilla.org/en-US/docs/Web/CSS/grid-gap#syntax", "/en-US/docs/Web/CSS/Reference/Properties/gap", "/en-US/docs/Web/CSS/grid-gap", ""},
		{"https://developer.mozilla.org/docs/Web/API/ResizeObserver", "/en-US/docs/Web/API/ResizeObserver", "", ""},
		{"Web/API/ResizeObserver", "/en-US/docs/Web/API/ResizeObserver", "", ""},
		{"/en-us/docs/web/api/resizeobserver", "/en-US/docs/Web/API/ResizeObserver", "", ""},
		{"/fr/docs/Web/API/ResizeObserver", "/en-US/docs/Web/API/ResizeObserver", "", "only en-US pages"},
		{"/en-US/docs/Web/API/ResizeObserver/ResizeObserver()", "/en-US/docs/Web/API/ResizeObserver/ResizeObserver", "/en-US/docs/Web/API/ResizeObserver/ResizeObserver()", ""},
	} {
		var d webdocs.Doc
		status, _, body := m.post(fmt.Sprintf(`{"action":"get_doc","path":%q}`, tc.path), &d)
		if status != 200 || d.Path != tc.want || d.RedirectedFrom != tc.redirectedFrom || !strings.Contains(d.Note, tc.note) {
			t.Errorf("get_doc %s = %d %s", tc.path, status, body)
		}
	}
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/en-US/blog/some-post", 400, "outside /docs"},
		{"/en-US/play", 400, "outside /docs"},
		{"", 400, "missing"},
		{"ftp://example.com/en-US/docs/Web", 400, "http(s)"},
		{"/en-US/docs/Web/API/ResizeObserverr", 404, "closest pages: /en-US/docs/Web/API/ResizeObserver"},
		{"/en-US/docs/Mozilla/Add-ons/Distribution", 404, "moved off MDN, to https://example.com/documentation/publish/"},
		{"/en-US/docs/" + strings.Repeat("x", 600), 422, "webdocs-max-query-bytes"},
	} {
		status, e := m.postError(fmt.Sprintf(`{"action":"get_doc","path":%q}`, tc.path))
		if status != tc.status || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("get_doc %.50q = %d %q, want %d with %q", tc.path, status, e.Error.Message, tc.status, tc.want)
		}
	}
}

// Members from mixins and partial interfaces are found where the spec
// put them.
func TestGetDocIDLAcrossSpecs(t *testing.T) {
	m := newMirror(t, false)
	var d webdocs.Doc
	if status, _, body := m.post(`{"action":"get_doc","path":"/en-US/docs/Web/API/Element/append"}`, &d); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	// Extended attributes of a member are left out of its declaration.
	if !strings.Contains(d.IDL, "interface mixin ParentNode {\n  undefined append((Node or DOMString)... nodes);\n};\nElement includes ParentNode;") {
		t.Errorf("Element.append IDL = %q", d.IDL)
	}
	if status, _, body := m.post(`{"action":"get_doc","path":"/en-US/docs/Web/API/Element"}`, &d); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	for _, want := range []string{"interface Element : Node {", "// cssom-view: CSSOM View Module", "partial interface Element {", "getBoundingClientRect();", "Element includes ParentNode;", "interface mixin ParentNode {"} {
		if !strings.Contains(d.IDL, want) {
			t.Errorf("Element IDL lacks %q:\n%s", want, d.IDL)
		}
	}
	if strings.Index(d.IDL, "interface Element : Node") > strings.Index(d.IDL, "partial interface Element") {
		t.Error("the partial interface comes before the definition")
	}
	// gap has no IDL; its page is still built from BCD and web-features.
	var gap webdocs.Doc
	if status, _, body := m.post(`{"action":"get_doc","path":"/en-US/docs/Web/CSS/Reference/Properties/gap"}`, &gap); status != 200 || gap.IDL != "" ||
		!strings.Contains(gap.Content, "`css.properties.gap`: Baseline widely available since 2020-04-17 (status of the whole feature grid)") {
		t.Errorf("gap: %d %s", status, body)
	}
}

func TestRequestErrors(t *testing.T) {
	m := newMirror(t, false)
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"action":"fetch"}`, 400, "unknown action"},
		{`{}`, 400, "missing"},
		{`{"action":"search","query":"x","pattern":"y"}`, 400, `unknown field "pattern"`},
		{`{"action":"search","Query":"x"}`, 400, `unknown field "Query": did you mean "query"?`}, // encoding/json alone takes it
		{`{"action":"search","query":"   "}`, 400, "missing"},
		{`{"action":"search","query":"x","limit":-1}`, 400, "negative"},
		{`{"action":"search","query":"x","limit":51}`, 422, "webdocs-max-results"},
		{`{"action":"search","query":"` + strings.Repeat("q", 513) + `"}`, 422, "webdocs-max-query-bytes"},
		{`not json`, 400, "not valid JSON"},
		{`{"action":"search","query":"x"} {}`, 400, "trailing data"},
	} {
		status, e := m.postError(tc.body)
		if status != tc.status || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%.60s = %d %q, want %d with %q", tc.body, status, e.Error.Message, tc.status, tc.want)
		}
	}
}

// The data packages come through the mirror: one download each, however
// many callers wait on the first load; once warm, a fresh service loads
// them with the registry down (air-gapped).
func TestWarmThroughTheMirror(t *testing.T) {
	m := newMirror(t, false)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- m.app.WebDocs.Warm(t.Context())
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	v := webdocstest.Versions()
	for name, ver := range map[string]string{webdocs.PackageBCD: v.BCD, webdocs.PackageInventory: v.Inventory, webdocs.PackageIDL: v.IDL, webdocs.PackageFeatures: v.Features} {
		if n := m.reg.TarballDownloads(name, ver); n != 1 {
			t.Errorf("%s downloaded %d times, want 1", name, n)
		}
		m.reg.Fail(name, http.StatusServiceUnavailable, "")
	}
	fresh := m.service(webdocs.MDNOptions{})
	if err := fresh.Warm(t.Context()); err != nil {
		t.Fatalf("warm with the registry down after the packages were mirrored: %v", err)
	}
	c, err := fresh.GetCompat(t.Context(), "api.ResizeObserver")
	if err != nil || c.Baseline == nil {
		t.Fatalf("get_compat air-gapped: %+v %v", c, err)
	}
}

// A cold mirror with the registry down is a 503, never a 404; the next
// call after it recovers loads (a failed load is not kept).
func TestRegistryDownIsUnavailable(t *testing.T) {
	m := newMirror(t, false)
	m.reg.Fail(webdocs.PackageBCD, http.StatusInternalServerError, "")
	status, hdr, body := m.post(`{"action":"get_compat","key":"api.ResizeObserver"}`, nil)
	if status != 503 || hdr.Get("Retry-After") == "" || !strings.Contains(string(body), "upstream_unavailable") || !strings.Contains(string(body), "webdocs-bcd-version") {
		t.Errorf("registry down: %d %s (Retry-After %q)", status, body, hdr.Get("Retry-After"))
	}
	m.reg.Fail(webdocs.PackageBCD, 0, "")
	if status, _, body := m.post(`{"action":"get_compat","key":"api.ResizeObserver"}`, nil); status != 200 {
		t.Errorf("after recovery: %d %s", status, body)
	}
}

// A pinned version whose files are not what the parser expects is a 502
// naming the setting to fix, not an internal error.
func TestBadDataPackage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no data.json", map[string]string{"package.json": "{}"}, "has no data.json (setting webdocs-bcd-version)"},
		{"data.json not JSON", map[string]string{"data.json": "{not json"}, "browser-compat-data data.json"},
		{"no features", map[string]string{"data.json": `{"__meta":{},"browsers":{}}`}, "holds no features"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMirror(t, false, func(c *config.Config) { c.WebDocsBCDVersion = "9.9.9" })
			m.reg.Publish(webdocs.PackageBCD, "9.9.9", tarballtest.Package(t, tc.files))
			// Fill the other three first: a failed load answers at once,
			// while fills it started would go on past the test's end.
			v := webdocstest.Versions()
			for name, ver := range map[string]string{webdocs.PackageInventory: v.Inventory, webdocs.PackageIDL: v.IDL, webdocs.PackageFeatures: v.Features} {
				if _, err := m.app.Service.Open(t.Context(), explore.Target{PackageName: name, Version: ver}); err != nil {
					t.Fatal(err)
				}
			}
			status, e := m.postError(`{"action":"search","query":"gap"}`)
			if status != 502 || e.Error.Code != "upstream_bad_data" || !strings.Contains(e.Error.Message, tc.want) {
				t.Errorf("%d %+v, want 502 upstream_bad_data with %q", status, e, tc.want)
			}
		})
	}
}

func TestConfigDefaultsMatch(t *testing.T) {
	c, d := config.Default(), webdocs.DefaultVersions()
	if got := (webdocs.Versions{BCD: c.WebDocsBCDVersion, Inventory: c.WebDocsInventoryVersion, IDL: c.WebDocsIDLVersion, Features: c.WebDocsFeaturesVersion}); got != d {
		t.Errorf("config defaults %+v differ from webdocs.DefaultVersions %+v", got, d)
	}
	l := webdocs.DefaultLimits()
	if c.WebDocsMaxQueryBytes != l.MaxQueryBytes || c.WebDocsMaxResults != l.MaxResults || c.WebDocsMaxDocBytes != l.MaxDocBytes {
		t.Errorf("config limits differ from webdocs.DefaultLimits %+v", l)
	}
	if c.MDNBaseURL != webdocs.DefaultMDNOptions().BaseURL || c.MDNTimeout != webdocs.DefaultMDNOptions().Timeout || c.MDNCacheBytes != webdocs.DefaultMDNOptions().CacheBytes {
		t.Error("config MDN defaults differ from webdocs.DefaultMDNOptions")
	}
}

// A request that gives up does not fail the load for others.
func TestLoadOutlivesItsCaller(t *testing.T) {
	m := newMirror(t, false)
	release := m.reg.Hold(webdocs.PackageBCD)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := m.app.WebDocs.Search(ctx, webdocs.SearchRequest{Query: "gap"})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller got %v", err)
	}
	release()
	res, err := m.app.WebDocs.Search(t.Context(), webdocs.SearchRequest{Query: "gap"})
	if err != nil || res.Total == 0 {
		t.Fatalf("search after the abandoned load: %+v %v", res, err)
	}
	var in *explore.InputError
	if _, err := m.app.WebDocs.Search(t.Context(), webdocs.SearchRequest{}); !errors.As(err, &in) {
		t.Errorf("empty query: %v, want an InputError", err)
	}
}

// TestIDLOfMixinMembers: fetch is declared on the WindowOrWorkerGlobalScope
// mixin (by a partial in the Fetch spec) and MDN keys Window's fetch page
// api.fetch, a global: its IDL is found through the slug's interface and
// names the mixin it came from; search finds it as Window.fetch; the
// Window page's IDL holds the mixin's members under the mixin's name.
func TestIDLOfMixinMembers(t *testing.T) {
	m := newMirror(t, false)
	var d webdocs.Doc
	if status, _, body := m.post(`{"action":"get_doc","path":"/en-US/docs/Web/API/Window/fetch"}`, &d); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	want := "// fetch: Fetch Standard (https://fetch.spec.whatwg.org/)\npartial interface mixin WindowOrWorkerGlobalScope {\n" +
		"  Promise<Response> fetch(RequestInfo input, optional RequestInit init = {});\n};\nWindow includes WindowOrWorkerGlobalScope;"
	if !strings.Contains(d.IDL, want) {
		t.Errorf("Window.fetch IDL = %q\nwant it to hold %q", d.IDL, want)
	}
	for _, q := range []string{"Window.fetch", "fetch"} {
		var res webdocs.SearchResult
		if status, _, body := m.post(fmt.Sprintf(`{"action":"search","query":%q}`, q), &res); status != 200 || len(res.Documents) == 0 ||
			res.Documents[0].Path != "/en-US/docs/Web/API/Window/fetch" || !strings.HasPrefix(res.Documents[0].Summary, "IDL: Promise<Response> fetch(") {
			t.Errorf("search %q: %d %s", q, status, body)
		}
	}
	if status, _, body := m.post(`{"action":"get_doc","path":"/en-US/docs/Web/API/Window"}`, &d); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	for _, want := range []string{
		"interface Window : EventTarget {",
		"interface mixin WindowOrWorkerGlobalScope {\n  [Replaceable] readonly attribute USVString origin;\n  long setTimeout(",
		"partial interface mixin WindowOrWorkerGlobalScope {\n  [NewObject] Promise<Response> fetch(",
	} {
		if !strings.Contains(d.IDL, want) {
			t.Errorf("Window IDL lacks %q:\n%s", want, d.IDL)
		}
	}
	// The mixins are named before their text, so a cut answer names them.
	if i, j := strings.Index(d.IDL, "Window includes WindowOrWorkerGlobalScope;"), strings.Index(d.IDL, "interface mixin WindowOrWorkerGlobalScope"); i < 0 || j < i {
		t.Errorf("the includes line does not come before the mixin's blocks:\n%s", d.IDL)
	}
}
