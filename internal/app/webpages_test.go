package app

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-rod/rod/lib/proto"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/webdocs/webdocstest"
)

// demoAt is webPackage's files at version v, depending on dep.
func demoAt(t *testing.T, v string) []byte {
	return tarballtest.Package(t, map[string]string{
		"package.json": fmt.Sprintf(`{"name":"demo","version":%q,"description":"A demo package","license":"MIT","dependencies":{"dep":"^1.0.0"}}`, v),
		"index.js":     "window.leaked = 'secret';\n",
		"lib/util.ts":  "export function needle(): string { return 'found'; }\n",
		"lib/long.js":  longFile(1500),
		"README.md":    "# demo\n\nA demo. See [the util](lib/util.ts) and ![ci](https://badge.example/ci.svg).\n\n<script>window.pwned = 1</script>\n",
	})
}

// demoMirror holds demo at 1.0.0, 1.1.0 (latest, deprecated) and
// 2.0.0-beta.1 (next) on its registry and dep@1.0.0; tweak adjusts the
// mirror's config.
func demoMirror(t *testing.T, tweak ...func(*config.Config)) *mirror {
	m := newMirror(t, embedded, tweak...)
	for _, v := range []string{"1.0.0", "2.0.0-beta.1", "1.1.0"} {
		m.reg.Publish("demo", v, demoAt(t, v))
	}
	m.reg.SetDistTag("demo", "latest", "1.1.0")
	m.reg.SetDistTag("demo", "next", "2.0.0-beta.1")
	m.reg.Deprecate("demo", "1.1.0", "use 2.x")
	m.reg.Publish("dep", "1.0.0", tarballtest.Package(t, map[string]string{"package.json": `{"name":"dep","version":"1.0.0"}`}))
	return m
}

// demoDocsMirror is demoMirror with web docs (the fixture data packages,
// MDN off) and demo 1.0.0 and 1.1.0 stored.
func demoDocsMirror(t *testing.T) *mirror {
	v := webdocstest.Versions()
	m := demoMirror(t, func(c *config.Config) {
		c.WebDocsBCDVersion, c.WebDocsInventoryVersion, c.WebDocsIDLVersion, c.WebDocsFeaturesVersion = v.BCD, v.Inventory, v.IDL, v.Features
		c.MDNBaseURL = ""
	})
	webdocstest.Publish(t, m.reg)
	m.fetch("demo@1.1.0")
	m.fetch("demo@1.0.0")
	return m
}

// storedVersions lists what the mirror's store holds.
func storedVersions(t *testing.T, m *mirror) []string {
	t.Helper()
	vs, err := m.app.Store.Recent(t.Context(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vs {
		out = append(out, v.Name+"@"+v.Version)
	}
	slices.Sort(out)
	return out
}

var hrefs = regexp.MustCompile(`<a [^>]*href="([^"]*)"`)

// getHTML GETs path as a browser does (Accept: text/html), following
// redirects.
func getHTML(t *testing.T, m *mirror, path string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, m.srv.URL+path, nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestWebCrawlDoesNotFill: a crawler following every link of the pages
// (to depth 2 from a package page, its files, a file and a grep) fetches
// nothing: the store holds what it held, the registry served no tarball.
// Version links carry rel="nofollow" and robots.txt keeps crawlers off
// browse, grep and diff. Before: each version link of a browse page
// started a download and an index build.
func TestWebCrawlDoesNotFill(t *testing.T) {
	m := demoMirror(t)
	m.fetch("demo@1.1.0")
	before := storedVersions(t, m)
	if !slices.Equal(before, []string{"demo@1.1.0"}) {
		t.Fatalf("before the crawl the store holds %v", before)
	}
	type visit struct {
		u     string
		depth int
	}
	queue := []visit{{"/", 0}, {"/browse/demo@1.1.0", 0}, {"/browse/demo@1.1.0/", 0}, {"/browse/demo@1.1.0/lib/util.ts", 0}, {"/browse/demo@1.1.0/?grep=needle", 0}}
	seen := map[string]bool{}
	nofollow := 0
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if seen[v.u] {
			continue
		}
		seen[v.u] = true
		if len(seen) > 3000 {
			t.Fatal("the crawl passed 3,000 pages")
		}
		resp, body := getHTML(t, m, v.u)
		if resp.StatusCode >= 500 {
			t.Errorf("GET %s: %d", v.u, resp.StatusCode)
		}
		if v.depth == 2 {
			continue
		}
		base, _ := url.Parse(resp.Request.URL.String())
		for _, h := range hrefs.FindAllStringSubmatch(body, -1) {
			if strings.Contains(h[0], `rel="nofollow`) {
				nofollow++
			}
			ref, err := url.Parse(html.UnescapeString(h[1]))
			if err != nil {
				continue
			}
			abs := base.ResolveReference(ref)
			if abs.Host != base.Host {
				continue
			}
			abs.Fragment = ""
			queue = append(queue, visit{abs.RequestURI(), v.depth + 1})
		}
	}
	if len(seen) < 20 {
		t.Errorf("the crawl saw only %d pages: it tests nothing", len(seen))
	}
	if after := storedVersions(t, m); !slices.Equal(after, before) {
		t.Errorf("after crawling %d pages the store holds %v, want %v", len(seen), after, before)
	}
	for _, v := range []string{"demo@1.0.0", "demo@2.0.0-beta.1", "dep@1.0.0"} {
		name, ver, _ := strings.Cut(v, "@")
		if n := m.reg.TarballDownloads(name, ver); n != 0 {
			t.Errorf("the crawl downloaded %s %d times", v, n)
		}
	}
	if nofollow == 0 {
		t.Error("no link carries rel=nofollow")
	}
	_, body := m.get("/browse/demo@1.1.0")
	for _, h := range hrefs.FindAllStringSubmatch(string(body), -1) {
		if strings.Contains(h[1], "/browse/demo@") && !strings.Contains(h[1], "/browse/demo@1.1.0/") && !strings.Contains(h[0], "nofollow") {
			t.Errorf("a version link without rel=nofollow: %s", h[0])
		}
	}
	resp, robots := m.get("/robots.txt")
	for _, want := range []string{"Disallow: /browse/", "Disallow: /diff/"} {
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(robots), want) {
			t.Errorf("robots.txt: %d %q lacks %q", resp.StatusCode, robots, want)
		}
	}
	// The button does fetch, and a cross-site form cannot press it.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, m.srv.URL+"/browse/demo@1.0.0/", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site fetch: %v %v, want 403", resp, err)
	}
	m.fetch("demo@1.0.0")
	if after := storedVersions(t, m); !slices.Equal(after, []string{"demo@1.0.0", "demo@1.1.0"}) {
		t.Errorf("after the button the store holds %v", after)
	}
}

// TestWebPackagePage: /browse/name@version is the package page: the
// README as sanitised HTML, description, deprecation, size and files,
// dependencies linked, the versions with dist-tags first and prereleases
// folded, the current one marked; ?versions= lists every version.
func TestWebPackagePage(t *testing.T) {
	m := demoMirror(t)
	m.fetch("demo@1.1.0")
	resp, page := getHTML(t, m, "/browse/demo@~1.1")
	if resp.StatusCode != http.StatusOK || !strings.HasSuffix(resp.Request.URL.Path, "/browse/demo@1.1.0") {
		t.Fatalf("/browse/demo@~1.1: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	for _, want := range []string{
		"<title>demo@1.1.0 · pkgscope</title>", `<p class="desc">A demo package</p>`, "<strong>Deprecated:</strong> use 2.x",
		"<h2>demo</h2>", `<a href="/browse/demo@1.1.0/lib/util.ts">the util</a>`, `rel="nofollow noopener noreferrer">ci</a>`,
		`>dep</a>`, "<dd>MIT</dd>", "in 5 files", `<a class="button" href="/browse/demo@1.1.0/">Browse 5 files</a>`,
		`aria-current="page" class="current">1.1.0</a>`, `<details class="pre"><summary>1 prerelease</summary>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the package page lacks %s", want)
		}
	}
	for _, bad := range []string{"<script>window.pwned", "<img", "KiB"} {
		if strings.Contains(page, bad) {
			t.Errorf("the package page holds %s", bad)
		}
	}
	if tags, rel := strings.Index(page, ">latest: 1.1.0<"), strings.Index(page, "<h3>Releases</h3>"); tags < 0 || rel < tags {
		t.Errorf("dist-tags (at %d) do not come before the releases (at %d)", tags, rel)
	}
	_, all := getHTML(t, m, "/browse/demo@1.1.0?versions=1.0")
	if !strings.Contains(all, ">1.0.0</a>") || strings.Contains(all, ">2.0.0-beta.1</a>") {
		t.Errorf("?versions=1.0 should list 1.0.0 alone:\n%s", all)
	}
}

// TestWebPagesForPeople: every page has one <h1> and a title naming what
// it shows; unknown routes and missing files answer a page with the
// closest paths (API clients still get JSON); a grep with no match links
// the widenings; the docs page renders markdown.
func TestWebPagesForPeople(t *testing.T) {
	m := demoDocsMirror(t)
	for _, tc := range []struct {
		path   string
		status int
		title  string
		has    string
	}{
		{"/", 200, "pkgscope", ""},
		{"/?q=dem", 200, "Packages matching dem", ""},
		{"/browse/demo@1.1.0", 200, "demo@1.1.0", ""},
		{"/browse/demo@1.1.0/lib/", 200, "demo@1.1.0/lib", ""},
		{"/browse/demo@1.1.0/lib/util.ts", 200, "demo@1.1.0/lib/util.ts", ""},
		{"/browse/demo@1.1.0/?grep=needle", 200, "grep needle in demo@1.1.0", ""},
		{"/browse/demo@1.1.0/?grep=NEEDLE", 200, "grep NEEDLE", `>ignoring case</a>`},
		{"/diff/demo?from=1.0.0&to=1.1.0", 200, "demo 1.0.0 → 1.1.0", ""},
		{"/browse/demo@2.0.0-beta.1/", 200, "demo@2.0.0-beta.1", `<form class="fetch"`},
		{"/browse/demo@1.1.0/lib/utl.ts", 404, "lib/utl.ts", `<a href="/browse/demo@1.1.0/lib/util.ts">lib/util.ts</a>`},
		{"/demo", 404, "Not found: /demo", `<a href="/browse/demo">`},
		{"/docs", 200, "Web docs", ""},
		{"/docs/page?path=/en-US/docs/Web/API/ResizeObserver", 200, "ResizeObserver", `<div class="md doc">`},
	} {
		resp, page := getHTML(t, m, tc.path)
		if resp.StatusCode != tc.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %s, want %d HTML", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.status)
		}
		if n := strings.Count(page, "<h1"); n != 1 {
			t.Errorf("%s has %d <h1>", tc.path, n)
		}
		title := regexp.MustCompile(`<title>(.*?)</title>`).FindStringSubmatch(page)
		if title == nil || !strings.Contains(html.UnescapeString(title[1]), tc.title) {
			t.Errorf("%s: title %q, want it to name %q", tc.path, title, tc.title)
		}
		if !strings.Contains(page, tc.has) {
			t.Errorf("%s lacks %s:\n%.3000s", tc.path, tc.has, page)
		}
	}
	// An API client gets the API's JSON for an unknown route.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, m.srv.URL+"/v1/nope", nil)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Error struct{ Code string } }
	if resp.StatusCode != http.StatusNotFound || json.NewDecoder(resp.Body).Decode(&body) != nil || body.Error.Code != "not_found" {
		t.Errorf("GET /v1/nope as JSON: %d %+v", resp.StatusCode, body)
	}
}

// axeScript is axe-core, installed by scripts/test.sh (npm ci --prefix
// e2e/axe).
func axeScript(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "e2e", "axe", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core is not installed (npm ci --prefix e2e/axe; scripts/test.sh does it): %v", err)
	}
	return string(b)
}

// TestWebPagesAccessible runs axe-core in Chromium on each kind of page,
// light and dark: no serious or critical violation. With
// PKGSCOPE_SCREENSHOTS set to a folder, it also saves each page there at
// 1280 and 390 px wide.
func TestWebPagesAccessible(t *testing.T) {
	m := demoDocsMirror(t)
	axe := axeScript(t)
	shots := os.Getenv("PKGSCOPE_SCREENSHOTS")
	p := browser(t).MustPage("")
	for _, scheme := range []string{"light", "dark"} {
		if err := (proto.EmulationSetEmulatedMedia{Features: []*proto.EmulationMediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}).Call(p); err != nil {
			t.Fatal(err)
		}
		for _, pg := range []struct{ name, path string }{
			{"home", "/"}, {"package", "/browse/demo@1.1.0"}, {"tree", "/browse/demo@1.1.0/lib/"},
			{"file", "/browse/demo@1.1.0/lib/long.js?line=1137#L1137-L1140"}, {"grep", "/browse/demo@1.1.0/?grep=needle"},
			{"diff", "/diff/demo?from=1.0.0&to=1.1.0"}, {"docs", "/docs/page?path=/en-US/docs/Web/API/ResizeObserver"},
			{"fetch", "/browse/demo@2.0.0-beta.1/"}, {"notfound", "/browse/demo@1.1.0/lib/utl.ts"},
		} {
			p.MustNavigate(m.srv.URL + pg.path).MustWaitLoad()
			// Runtime.evaluate: the page's CSP forbids eval, not the
			// debugger.
			if _, err := (proto.RuntimeEvaluate{Expression: axe}).Call(p); err != nil {
				t.Fatal(err)
			}
			res := p.MustEval(`() => axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v => ({id: v.id, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.html)}))))`).Str()
			if res != "[]" {
				t.Errorf("%s (%s, %s): axe finds %s", pg.name, pg.path, scheme, res)
			}
			if shots != "" {
				for _, w := range []int{1280, 390} {
					p.MustSetViewport(w, 900, 1, w < 500)
					p.MustWaitStable()
					b := p.MustScreenshot()
					if err := os.WriteFile(filepath.Join(shots, fmt.Sprintf("%s-%s-%d.png", pg.name, scheme, w)), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				p.MustSetViewport(1280, 900, 1, false)
			}
		}
	}
}

// TestWebDiffPage: the diff page lists every changed file, those whose
// text is on a later page linked to their own diff; lines carry their old
// and new numbers; file headers link the next file; the split view puts
// a removed line beside the line that replaced it.
func TestWebDiffPage(t *testing.T) {
	m := newMirror(t, embedded)
	for _, v := range []string{"1.0.0", "2.0.0"} {
		files := map[string]string{"package.json": fmt.Sprintf(`{"name":"many","version":%q}`, v)}
		// 40 files of 300 changed lines: about 400 KB of diff, four
		// pages of 100 KB.
		for i := range 40 {
			files[fmt.Sprintf("z/f%02d.js", i)] = fmt.Sprintf("keep\nconst v = %q;\nkeep too\n", v) + strings.Repeat(fmt.Sprintf("// filler of version %s\n", v), 300)
		}
		m.reg.Publish("many", v, tarballtest.Package(t, files))
		m.fetch("many@" + v)
	}
	_, page := getHTML(t, m, "/diff/many?from=1.0.0&to=2.0.0")
	rows := regexp.MustCompile(`<tr><td><a href="([^"]+)">([^<]+)</a></td><td>modified</td>`).FindAllStringSubmatch(page, -1)
	if len(rows) != 41 {
		t.Fatalf("the changed files list %d files, want 41:\n%.2000s", len(rows), page)
	}
	later := 0
	for _, r := range rows {
		if strings.Contains(r[1], "include=") {
			later++
			if !strings.Contains(html.UnescapeString(r[1]), "include="+url.QueryEscape(r[2])) {
				t.Errorf("%s links to %s, not its own diff", r[2], r[1])
			}
		}
	}
	if later == 0 {
		t.Error("every file's text is on the first page: the test shows nothing")
	}
	_, one := getHTML(t, m, "/diff/many?from=1.0.0&to=2.0.0&include=z%2Ff07.js")
	for _, want := range []string{
		`<tr class="d-del"><td class="ln">2</td><td class="ln"></td><td>-const v = &#34;1.0.0&#34;;</td></tr>`,
		`<tr class="d-ctx"><td class="ln">3</td><td class="ln">3</td><td> keep too</td></tr>`,
		`<td class="num">301</td><td class="num">301</td>`,
		`<a href="/diff/many?from=1.0.0&amp;include=z%2Ff07.js&amp;to=2.0.0&amp;view=split">split</a>`,
	} {
		if !strings.Contains(one, want) {
			t.Errorf("the diff of z/f07.js lacks %s:\n%s", want, one)
		}
	}
	_, split := getHTML(t, m, "/diff/many?from=1.0.0&to=2.0.0&include=z%2Ff0*.js&view=split")
	if want := `<tr><td class="ln">2</td><td class="d-del">-const v = &#34;1.0.0&#34;;</td><td class="ln">2</td><td class="d-add">&#43;const v = &#34;2.0.0&#34;;</td></tr>`; !strings.Contains(split, want) {
		_, tbl, _ := strings.Cut(split, `<table class="diff`)
		t.Errorf("the split view lacks %s:\n%.3000s", want, tbl)
	}
	if !strings.Contains(split, `<a href="#f1">↓ next file</a>`) {
		t.Error("the first file's header does not link the next file")
	}
}
