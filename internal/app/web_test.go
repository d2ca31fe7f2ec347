package app

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/proto"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// chrome is the package's one headless Chromium (Debian's; scripts/test.sh
// installs it), started by the first test that asks for a browser and
// stopped by TestMain: starting it took about a second of CPU per test on
// the shared 2-core machine. Each test gets its own incognito context of
// it (browser), so cookies, storage and cache never carry over.
var chrome struct {
	once sync.Once
	l    *launcher.Launcher
	b    *rod.Browser
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if chrome.b != nil {
		chrome.b.Close()
	}
	if chrome.l != nil {
		chrome.l.Kill()
	}
	if chrome.dir != "" {
		os.RemoveAll(chrome.dir)
	}
	os.Exit(code)
}

// startChrome starts the shared browser; an error says what failed.
func startChrome() {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		chrome.err = fmt.Errorf("chromium is not installed (Debian: apt-get install chromium; scripts/test.sh does it): %w", err)
		return
	}
	if chrome.dir, err = os.MkdirTemp("", "pkgscope-chromium-"); err != nil {
		chrome.err = err
		return
	}
	chrome.l = launcher.New().Bin(bin).Headless(true).NoSandbox(true).Leakless(false).UserDataDir(chrome.dir).
		Set("disable-gpu").Set("disable-quic").Set("no-first-run").Set("disable-background-networking").
		Set("disable-component-update").Set("disable-sync").Set("window-size", "1280,900")
	u, err := chrome.l.Launch()
	if err != nil {
		chrome.err = fmt.Errorf("starting chromium: %w", err)
		return
	}
	b := rod.New().ControlURL(u)
	if err := b.Connect(); err != nil {
		chrome.err = fmt.Errorf("connecting to chromium: %w", err)
		return
	}
	chrome.b = b
}

// browser is a fresh incognito context of the package's Chromium for one
// test, closed when it ends; a failed step fails the test. A missing
// browser fails the test too: it is never skipped.
func browser(t *testing.T) *rod.Browser {
	t.Helper()
	chrome.once.Do(startChrome)
	if chrome.err != nil {
		t.Fatal(chrome.err)
	}
	inc, err := chrome.b.Incognito()
	if err != nil {
		t.Fatalf("opening an incognito context: %v", err)
	}
	t.Cleanup(func() { inc.Close() })
	// Waits are on the page (an element, a condition), never on a
	// clock; the timeout bounds a browser that stops answering.
	return inc.Context(t.Context()).Timeout(90 * time.Second).WithPanic(func(v any) { t.Fatalf("browser: %v\n%s", v, debug.Stack()) })
}

// navigating runs act, which makes p load another page, and returns once
// that page has loaded: a query in between would meet a document going
// away ("Inspected target navigated or closed").
func navigating(p *rod.Page, act func()) {
	wait := p.MustWaitNavigation()
	act()
	wait()
}

// webPackage is a small package with a folder, a long file and a match.
func webPackage(t *testing.T) []byte {
	var long strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&long, "export const line%d = %d;\n", i, i)
	}
	return tarballtest.Package(t, map[string]string{
		"package.json":     `{"name":"demo","version":"1.1.0"}`,
		"index.js":         "window.leaked = 'secret';\n",
		"lib/util.ts":      long.String() + "export function needle(): string { return 'found'; }\n",
		"types/index.d.ts": "export declare function needle(): string;\n",
		"README.md":        "# demo\n\nA demo. See [the util](lib/util.ts).\n\n<script>window.pwned = 1</script>\n",
		"lib/long.js":      longFile(1500),
	})
}

// longFile is n numbered lines: past the page's 1,000 lines.
func longFile(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "const l%d = %d;\n", i, i)
	}
	return b.String()
}

// fetch presses the Fetch button of name@version's page, as the page's
// form does (a same-origin POST), and fails unless the version is then
// shown.
func (m *mirror) fetch(spec string) {
	m.t.Helper()
	resp, err := http.Post(m.srv.URL+"/browse/"+spec+"/", "application/x-www-form-urlencoded", nil)
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `class="tree"`) {
		m.t.Fatalf("fetching %s: %d %.300s", spec, resp.StatusCode, b)
	}
}

// TestWebPagesInBrowser follows the pages as a person does: log in,
// open a package by range (redirected to the exact version), walk the
// tree, open a file, select a line range, grep and follow a result to its
// highlighted line; keyboard order and labels; logging out.
func TestWebPagesInBrowser(t *testing.T) {
	m := newMirror(t, embedded, func(c *config.Config) { c.Tokens = "web-t0ken" })
	m.reg.Publish("demo", "1.0.0", tarballtest.Package(t, map[string]string{"index.js": "old\n"}))
	m.reg.Publish("demo", "1.1.0", webPackage(t))
	b := browser(t)
	p := b.MustPage(m.srv.URL + "/browse/demo@^1/")
	p.MustElement("#login-token")
	if loc := p.MustInfo().URL; !strings.Contains(loc, "/login?next=") {
		t.Fatalf("without a token the page went to %s, want the login form", loc)
	}
	navigating(p, func() { p.MustElement("#login-token").MustInput("wrong").MustType(input.Enter) })
	if text := p.MustElement("p.error").MustText(); !strings.Contains(text, "not valid") {
		t.Errorf("wrong token: %q", text)
	}
	navigating(p, func() { p.MustElement("#login-token").MustInput("web-t0ken").MustType(input.Enter) })
	// Not stored yet: following the link offers a button, and only the
	// button fetches.
	p.MustElement("form.fetch button")
	if loc := p.MustInfo().URL; !strings.HasSuffix(loc, "/browse/demo@1.1.0/") {
		t.Errorf("after login at %s, want the exact version's page", loc)
	}
	navigating(p, func() { p.MustElement("form.fetch button").MustClick() })
	p.MustElement("table.tree")

	// Follow the tree to a file: numbered, highlighted lines.
	navigating(p, func() { p.MustElementX(`//table[contains(@class,"tree")]//a[text()="lib/"]`).MustClick() })
	navigating(p, func() { p.MustElementX(`//a[text()="util.ts"]`).MustClick() })
	line := p.MustElement("#L31 td.src")
	if text, spans := line.MustText(), p.MustEval(`() => document.querySelectorAll("#L31 td.src span").length`).Int(); !strings.Contains(text, "export function needle()") || spans == 0 {
		t.Errorf("line 31 reads %q with %d highlighted tokens", text, spans)
	}

	// The raw link works with the login cookie, as plain text.
	raw := p.MustElementR("p.meta a", "raw").MustProperty("href").Str()
	rp := b.MustPage(raw)
	if text := rp.MustElement("body").MustText(); !strings.Contains(text, "export function needle()") {
		t.Errorf("the raw link %s shows %q", raw, text)
	}
	rp.MustClose()
	p.MustActivate()

	// A line-range anchor marks the range.
	p.MustNavigate(m.srv.URL + "/browse/demo@1.1.0/lib/util.ts#L2-L4")
	p.MustElement("#L4")
	p.MustWait(`() => document.querySelectorAll("tr.hl").length == 3`)
	if ids := p.MustEval(`() => Array.from(document.querySelectorAll("tr.hl")).map(r => r.id).join(",")`).Str(); ids != "L2,L3,L4" {
		t.Errorf("#L2-L4 marked %q", ids)
	}

	// A line past the first page: the page holding it, the line marked
	// and in view; line numbers are links outside the tab order.
	// The page's script replaces the first page with ?line=1137: wait for
	// that second navigation before asking the page anything.
	paged := p.EachEvent(func(e *proto.PageFrameNavigated) bool { return strings.Contains(e.Frame.URL, "line=1137") })
	p.MustNavigate(m.srv.URL + "/browse/demo@1.1.0/lib/long.js#L1137")
	paged()
	p.MustWaitLoad()
	p.MustElement("tr.hl#L1137")
	if loc := p.MustInfo().URL; !strings.Contains(loc, "?line=1137#L1137") {
		t.Errorf("#L1137 led to %s, want ?line=1137#L1137", loc)
	}
	if !p.MustEval(`() => { const r = document.getElementById("L1137").getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }`).Bool() {
		t.Error("line 1137 is marked but not in view")
	}
	if n := p.MustEval(`() => document.querySelectorAll('td.ln a:not([tabindex="-1"])').length`).Int(); n != 0 {
		t.Errorf("%d line numbers are tab stops", n)
	}
	// Click a line, shift-click another: the range.
	p.MustElement("#L1140 td.ln a").MustClick()
	p.MustWait(`() => location.hash === "#L1140"`)
	if err := p.Keyboard.Press(input.ShiftLeft); err != nil {
		t.Fatal(err)
	}
	p.MustElement("#L1143 td.ln a").MustClick()
	if err := p.Keyboard.Release(input.ShiftLeft); err != nil {
		t.Fatal(err)
	}
	p.MustWait(`() => location.hash === "#L1140-L1143"`)
	if ids := p.MustEval(`() => Array.from(document.querySelectorAll("tr.hl")).map(r => r.id).join(",")`).Str(); ids != "L1140,L1141,L1142,L1143" {
		t.Errorf("shift-click marked %q", ids)
	}

	// Grep from the page and follow a result to its line.
	p.MustNavigate(m.srv.URL + "/browse/demo@1.1.0/")
	navigating(p, func() { p.MustElement("#grep-q").MustInput("needle").MustType(input.Enter) })
	p.MustElement("ol.hits")
	if n := p.MustEval(`() => document.querySelectorAll("ol.hits li").length`).Int(); n != 2 {
		t.Errorf("grep needle: %d hits, want 2", n)
	}
	navigating(p, func() { p.MustElementX(`//h3/a[text()="lib/util.ts"]/../following-sibling::ol[1]//a`).MustClick() })
	p.MustElement("#L31")
	p.MustWaitLoad()
	if err := p.Timeout(10 * time.Second).Wait(rod.Eval(`() => !!document.querySelector("tr:target#L31")`)); err != nil {
		t.Errorf("the grep result led to %s, where line 31 is not the :target: %v", p.MustInfo().URL, err)
	}

	// Compare two versions from the versions picker.
	p.MustNavigate(m.srv.URL + "/browse/demo@1.1.0/")
	p.MustElement("details.versions summary").MustClick()
	navigating(p, func() { p.MustElement("#cmp-to").MustInput("1.0.0").MustType(input.Enter) })
	navigating(p, func() { p.MustElement("form.fetch button").MustClick() })
	p.MustElement("table.diff")
	if n := p.MustEval(`() => document.querySelectorAll("table.diff tr.d-file").length`).Int(); n != 6 {
		t.Errorf("diff 1.1.0 → 1.0.0 shows %d files, want 6 (five deleted, index.js changed)", n)
	}
	if text := p.MustElement("table.diff").MustText(); !strings.Contains(text, "-window.leaked = 'secret';") || !strings.Contains(text, "+old") {
		t.Errorf("the diff page lacks index.js's change:\n%s", text)
	}

	// Labels on every field; the keyboard reaches the search third.
	p.MustNavigate(m.srv.URL + "/")
	p.MustElement("#warm-specs")
	if !p.MustEval(`() => Array.from(document.querySelectorAll("input:not([type=hidden]),select,textarea")).every(e => e.labels && e.labels.length > 0)`).Bool() {
		t.Error("a form field has no label")
	}
	p.Keyboard.MustType(input.Tab, input.Tab, input.Tab)
	if id := p.MustEval(`() => document.activeElement.id`).Str(); id != "find-q" {
		t.Errorf("the third Tab focused %q, want the package search (skip link, brand, search)", id)
	}
	p.Keyboard.MustType([]input.Key("dem")...)
	navigating(p, func() { p.Keyboard.MustType(input.Enter) })
	if text := p.MustElement("ul.names").MustText(); !strings.Contains(text, "demo") {
		t.Errorf("search for dem lists %q", text)
	}

	// Login CSRF: another site's form cannot log this browser in.
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/login"><input name="token" value="web-t0ken"><button id="go">go</button></form>`, m.srv.URL)
	}))
	defer attacker.Close()
	p.MustNavigate(strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1)).MustWaitLoad()
	navigating(p, func() { p.MustElement("#go").MustClick() })
	p.MustElementR("h1", "Forbidden")

	// Logging out ends it.
	navigating(p, func() { p.MustElement("form.logout button").MustClick() })
	p.MustElement("#login-token")
	p.MustNavigate(m.srv.URL + "/browse/demo@1.1.0/")
	p.MustElement("#login-token")
}

// TestWebCrossSiteCannotRead: a page of another site that the logged-in
// developer visits can neither run a package file as a script, nor frame
// a page, nor read one: the login cookie is SameSite=Strict and the pages
// forbid framing.
func TestWebCrossSiteCannotRead(t *testing.T) {
	m := newMirror(t, embedded, func(c *config.Config) { c.Tokens = "web-t0ken" })
	m.reg.Publish("demo", "1.1.0", webPackage(t))
	// The mirror is at 127.0.0.1; the attacker's page at localhost is
	// another site (for IP addresses and localhost, the host is the site).
	victim := m.srv.URL
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><script src="%[1]s/v1/npm/demo@1.1.0/index.js"></script>
<script src="%[1]s/browse/demo@1.1.0/index.js"></script>
<iframe id="f" src="%[1]s/browse/demo@1.1.0/index.js"></iframe>
<script>window.done = false; fetch("%[1]s/browse/demo@1.1.0/index.js", {credentials: "include"}).then(r => r.text()).then(t => { window.read = t; }, () => {}).finally(() => { window.done = true; });</script>`, victim)
	}))
	t.Cleanup(attacker.Close)
	attackerURL := strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1)
	b := browser(t)
	p := b.MustPage(victim + "/login")
	navigating(p, func() { p.MustElement("#login-token").MustInput("web-t0ken").MustType(input.Enter) })
	p.MustElement("#find-q")
	p.MustNavigate(victim + "/browse/demo@1.1.0/")
	navigating(p, func() { p.MustElement("form.fetch button").MustClick() })
	p.MustElement("table.tree")
	p.MustNavigate(attackerURL).MustWaitLoad()
	p.MustWait(`() => window.done === true`)
	leaked := p.MustEval(`() => String(window.leaked)`).Str()
	read := p.MustEval(`() => String(window.read)`).Str()
	if leaked != "undefined" || read != "undefined" {
		t.Errorf("a cross-site page read the package: leaked=%q read=%q", leaked, read)
	}
}

// TestWebProjectPage: a registered project's page lists its node_modules
// folders and links each warm one to its package page at the locked
// version; it refreshes itself until every package is warm.
func TestWebProjectPage(t *testing.T) {
	m := newMirror(t, embedded)
	publishProject(t, m.reg)
	status, b := m.do(http.MethodPost, "/v1/projects", "", lockUpload(projectLock))
	var reg struct{ ID string }
	if status != http.StatusCreated || json.Unmarshal(b, &reg) != nil || reg.ID == "" {
		t.Fatalf("registering: %d %s", status, b)
	}
	p := browser(t).MustPage(m.srv.URL + "/projects/" + reg.ID)
	// The meta refresh reloads the page until the warm jobs are done.
	p.MustElementR("p.meta", "ready")
	navigating(p, func() {
		p.MustElementX(`//td/code[text()="node_modules/a/node_modules/ms"]/../following-sibling::td[1]/a`).MustClick()
	})
	p.MustElement("table.tree")
	if loc := p.MustInfo().URL; !strings.HasSuffix(loc, "/browse/ms@2.1.3/") {
		t.Errorf("the nested ms folder links to %s, want ms@2.1.3", loc)
	}
}

// TestAnswersLinkToTheWebPage: with public-url, an answer names the web
// page of what it answered, and that page shows the lines read.
func TestAnswersLinkToTheWebPage(t *testing.T) {
	const public = "http://mirror.example"
	m := newMirror(t, embedded, func(c *config.Config) { c.PublicURL = public + "/" })
	m.reg.Publish("demo", "1.1.0", webPackage(t))
	var read struct{ Browse string }
	if status, b := m.explore(`{"action":"read","packageName":"demo","version":"^1","path":"lib/util.ts","offset":31}`, &read); status != http.StatusOK {
		t.Fatalf("read: %d %s", status, b)
	}
	if want := public + "/browse/demo@1.1.0/lib/util.ts?offset=31#L31"; read.Browse != want {
		t.Fatalf("read links to %q, want %q", read.Browse, want)
	}
	// The answer may come from the verified download before the commit;
	// the page shows stored versions only (it never fills).
	if err := m.app.EnsureIndex(t.Context(), "demo", "1.1.0"); err != nil {
		t.Fatal(err)
	}
	page, _, _ := strings.Cut(strings.TrimPrefix(read.Browse, public), "#")
	resp, body := m.get(page)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `id="L31"`) || strings.Contains(string(body), `id="L30"`) {
		t.Errorf("GET %s: %d; the page should start at line 31", page, resp.StatusCode)
	}
	var grep struct{ Browse string }
	if status, b := m.explore(`{"action":"grep","packageName":"demo","version":"1.1.0","pattern":"needle"}`, &grep); status != http.StatusOK || grep.Browse != public+"/browse/demo@1.1.0/" {
		t.Errorf("grep: %d, browse %q: %s", status, grep.Browse, b)
	}
}

func TestLoopbackURL(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:7878": "http://127.0.0.1:7878", "localhost:80": "http://localhost:80", "[::1]:7878": "http://[::1]:7878",
		":7878": "", "0.0.0.0:7878": "", "10.0.0.5:7878": "", "bad": "",
	} {
		if got := loopbackURL(addr); got != want {
			t.Errorf("loopbackURL(%q) = %q, want %q", addr, got, want)
		}
	}
}

// TestTokenlessCrossSiteScriptCannotRun: a laptop mirror (no tokens)
// holds packages fetched with the developer's registry credentials. A
// page of another site that loads one of its files as a script must not
// run it: the browser marks the request Sec-Fetch-Site: cross-site and the
// mirror refuses it, and its Cross-Origin-Resource-Policy: same-origin
// would stop the browser using the bytes anyway (with both removed, this
// test fails). The mirror's own pages can run it: the control shows the
// test would see a script that ran.
func TestTokenlessCrossSiteScriptCannotRun(t *testing.T) {
	m := newMirror(t, embedded)
	m.reg.Publish("demo", "1.1.0", webPackage(t))
	raw := m.srv.URL + "/v1/npm/demo@1.1.0/index.js"
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><script>window.done = false;</script><script src="%s" onload="window.done = 'loaded'" onerror="window.done = 'refused'"></script>`, raw)
	}))
	t.Cleanup(attacker.Close)
	p := browser(t).MustPage(strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1))
	p.MustWait(`() => window.done !== false`)
	if leaked, done := p.MustEval(`() => String(window.leaked)`).Str(), p.MustEval(`() => String(window.done)`).Str(); leaked != "undefined" || done != "refused" {
		t.Errorf("a cross-site page loaded the package's script: leaked=%q, script %s", leaked, done)
	}
	// Control: the same script from the mirror's own origin runs.
	p.MustNavigate(m.srv.URL + "/").MustWaitLoad()
	p.MustEval(`src => new Promise((ok, fail) => { const s = document.createElement("script"); s.src = src; s.onload = ok; s.onerror = () => fail(new Error("refused")); document.head.appendChild(s); })`, raw)
	if leaked := p.MustEval(`() => String(window.leaked)`).Str(); leaked != "secret" {
		t.Errorf("control: the mirror's own page could not run the script (leaked=%q): the test sees nothing", leaked)
	}
}

// TestWebRawStreams: a page's raw link streams the body like the API's raw
// route does, Range requests included, as plain text.
func TestWebRawStreams(t *testing.T) {
	m := newMirror(t, embedded)
	m.reg.Publish("demo", "1.1.0", webPackage(t))
	m.fetch("demo@1.1.0")
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, m.srv.URL+"/browse/demo@1.1.0/index.js?raw=1", nil)
	req.Header.Set("Range", "bytes=7-12")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusPartialContent || string(b) != "leaked" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("raw with Range: %d %q %q", resp.StatusCode, b, resp.Header.Get("Content-Type"))
	}
}

// TestWebGrepPages: a grep page's "More matches" link continues with the
// API's next until every match was shown once; an include without a slash
// names files at any depth under the folder, as the API reads it.
func TestWebGrepPages(t *testing.T) {
	m := newMirror(t, embedded)
	var many strings.Builder
	for i := range 450 {
		fmt.Fprintf(&many, "const needle%d = %d;\n", i, i)
	}
	m.reg.Publish("hay", "1.0.0", tarballtest.Package(t, map[string]string{
		"src/deep/stack.js": many.String(), "src/top.ts": "export const needle = 1;\n",
	}))
	m.fetch("hay@1.0.0")
	hit := regexp.MustCompile(`<li><a href="([^"]+)"><span class="ln">`)
	next := regexp.MustCompile(`<a rel="next" href="([^"]+)">More matches`)
	seen := map[string]bool{}
	url := "/browse/hay@1.0.0/?grep=needle"
	for pages := 0; url != ""; pages++ {
		if pages > 10 {
			t.Fatal("more than 10 pages for 451 matches")
		}
		resp, body := m.get(url)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", url, resp.StatusCode)
		}
		for _, h := range hit.FindAllStringSubmatch(string(body), -1) {
			if seen[h[1]] {
				t.Errorf("%s shown twice", h[1])
			}
			seen[h[1]] = true
		}
		url = ""
		if n := next.FindStringSubmatch(string(body)); n != nil {
			url = html.UnescapeString(n[1])
		}
	}
	if len(seen) != 451 {
		t.Errorf("the pages showed %d matches, want 451", len(seen))
	}
	_, body := m.get("/browse/hay@1.0.0/src/?grep=needle&include=*.js")
	hits := hit.FindAllStringSubmatch(string(body), -1)
	if len(hits) == 0 {
		t.Error("include *.js under src/ found nothing; src/deep/stack.js matches")
	}
	for _, h := range hits {
		if !strings.Contains(h[1], "/src/deep/stack.js") {
			t.Errorf("include *.js under src/ gave %s", h[1])
		}
	}
}

// TestWebGrepSameBytes: a file with the same bytes as one shown before it
// on the grep page is one line naming that file, not a list of line 0.
func TestWebGrepSameBytes(t *testing.T) {
	m := newMirror(t, embedded)
	decl := "export declare const needle: 1;\nexport declare const needle2: 2;\n"
	m.reg.Publish("twin", "1.0.0", tarballtest.Package(t, map[string]string{"index.d.cts": decl, "index.d.ts": decl}))
	m.fetch("twin@1.0.0")
	resp, body := m.get("/browse/twin@1.0.0/?grep=needle")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	page := string(body)
	if strings.Contains(page, "#L0") || !strings.Contains(page, `Same bytes as <a href="/browse/twin@1.0.0/index.d.cts">index.d.cts</a>: its 2 matching lines, not repeated.`) {
		t.Errorf("the grep page does not fold index.d.ts into index.d.cts:\n%s", page)
	}
}
