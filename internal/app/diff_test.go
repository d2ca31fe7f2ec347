package app

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/diff/difftest"
	"github.com/pkgscope/pkgscope/internal/explore"
)

type diffAnswer struct {
	PackageName string `json:"packageName"`
	From, To    string
	Diff        string           `json:"diff"`
	Files       []map[string]any `json:"files"`
	Truncated   bool             `json:"truncated"`
	TruncatedBy string           `json:"truncatedBy"`
	Next        *explore.Request `json:"next"`
}

// diffRequest is the diff action's request for a difftest case.
func diffRequest(c difftest.Case, maxBytes int) explore.Request {
	return explore.Request{
		Action: "diff", PackageName: difftest.Package, From: c.From, To: c.To,
		Include: c.Paths, NameOnly: c.NameOnly, ContextLines: c.Context, IgnoreAllSpace: c.IgnoreAllSpace,
		NoPrefix: c.NoPrefix, SrcPrefix: c.SrcPrefix, DstPrefix: c.DstPrefix, MaxBytes: maxBytes,
	}
}

// diffPages follows next from req and returns the pages' diffs
// concatenated and the files listed, checking each page keeps its budget.
func diffPages(t *testing.T, m *mirror, req explore.Request) (string, []string, int) {
	t.Helper()
	var text strings.Builder
	var files []string
	pages := 0
	for {
		body, _ := json.Marshal(req)
		var a diffAnswer
		status, raw := m.explore(string(body), &a)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", body, status, raw)
		}
		if req.MaxBytes > 0 && len(raw) > req.MaxBytes+1024 {
			// A single line longer than the budget is the one overflow
			// (a page always advances); the fixture has none.
			t.Errorf("page of %d bytes over maxBytes %d", len(raw), req.MaxBytes)
		}
		pages++
		text.WriteString(a.Diff)
		for _, f := range a.Files {
			files = append(files, f["path"].(string)+" "+f["status"].(string))
		}
		if !a.Truncated {
			if a.Next != nil {
				t.Errorf("an answer that is not truncated has next %+v", a.Next)
			}
			return text.String(), files, pages
		}
		if a.Next == nil || a.TruncatedBy != "maxBytes" {
			t.Fatalf("truncated by %q with next %+v", a.TruncatedBy, a.Next)
		}
		req = *a.Next
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
	}
}

// TestDiffMatchesNpmDiff runs every difftest case through the whole
// mirror — fake registry, fill, store, the diff action — on both stores,
// whole and in pages of 4 KiB (every page's text concatenated), and
// through the REST route, and compares each with what the real npm diff
// prints (difftest.Want: internal/diff runs npm and checks those files).
func TestDiffMatchesNpmDiff(t *testing.T) {
	t.Parallel()
	m := newMirror(t, embedded)
	mpg := newMirror(t, pg)
	for _, reg := range []*mirror{m, mpg} {
		difftest.Publish(t, reg.reg)
	}
	for _, c := range difftest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			// What npm diff prints, as internal/diff's TestMatchesNpmDiff
			// checks against npm itself.
			want := difftest.Want(t, c)
			whole, files, pages := diffPages(t, m, diffRequest(c, 0))
			if whole != want {
				t.Errorf("diff action differs from npm diff:\n--- got:\n%s\n--- npm diff:\n%s", whole, want)
			}
			if pages != 1 && c.Context == nil {
				t.Errorf("the fixture's diff took %d pages at the default budget, want 1", pages)
			}
			paged, pagedFiles, n := diffPages(t, mpg, diffRequest(c, explore.MinAnswerBytes))
			if c.Name == "default" && n < 4 {
				t.Errorf("the default case took %d pages of 4 KiB: the paging is not exercised", n)
			}
			if paged != want {
				t.Errorf("4 KiB pages (Postgres) concatenated differ from npm diff:\n--- got:\n%s\n--- npm diff:\n%s", paged, want)
			}
			if strings.Join(pagedFiles, "\n") != strings.Join(files, "\n") {
				t.Errorf("paged files %q, whole %q", pagedFiles, files)
			}
			if rest := restDiff(t, m, c); rest != want {
				t.Errorf("REST diff differs from npm diff:\n--- got:\n%s\n--- npm diff:\n%s", rest, want)
			}
		})
	}
}

// restDiff GETs the case from /v1/npm/{name}/-/diff, following Link
// rel=next with a small page.
func restDiff(t *testing.T, m *mirror, c difftest.Case) string {
	t.Helper()
	q := url.Values{"from": {c.From}, "to": {c.To}, "include": c.Paths, "maxBytes": {"4096"}}
	if c.NameOnly {
		q.Set("nameOnly", "true")
	}
	if c.Context != nil {
		q.Set("contextLines", strconv.Itoa(*c.Context))
	}
	if c.IgnoreAllSpace {
		q.Set("ignoreAllSpace", "1")
	}
	if c.NoPrefix {
		q.Set("noPrefix", "true")
	}
	if c.SrcPrefix != "" {
		q.Set("srcPrefix", c.SrcPrefix)
		q.Set("dstPrefix", c.DstPrefix)
	}
	path := "/v1/npm/" + difftest.Package + "/-/diff?" + q.Encode()
	var out strings.Builder
	for range 1000 {
		resp, body := m.get(path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		out.Write(body)
		link := resp.Header.Get("Link")
		if link == "" {
			return out.String()
		}
		path = strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`)
	}
	t.Fatal("REST paging does not end")
	return ""
}

// TestDiffBadInput: each side that does not resolve is a 404 naming it; a
// malformed spec or option is a 400; a page larger than the setting is a
// 422; no error carries the registry's address.
func TestDiffBadInput(t *testing.T) {
	t.Parallel()
	m := newMirror(t, embedded, func(c *config.Config) { c.MaxAnswerBytes = 64 << 10 })
	difftest.Publish(t, m.reg)
	tests := []struct {
		name, body string
		status     int
		says       string
	}{
		{"from does not resolve", `{"action":"diff","packageName":"diff-fixture","from":"1.0.9","to":"1.1.0"}`, 404, "from: latest is 1.1.1; nearest versions: 1.0.0"},
		{"to does not resolve", `{"action":"diff","packageName":"diff-fixture","from":"1.0.0","to":"^7"}`, 404, "matching to"},
		{"no such package", `{"action":"diff","packageName":"no-such-pkg","from":"1.0.0","to":"1.1.0"}`, 404, "from:"},
		{"invalid from", `{"action":"diff","packageName":"diff-fixture","from":"git+https://x","to":"1.1.0"}`, 400, "from"},
		{"missing to", `{"action":"diff","packageName":"diff-fixture","from":"1.0.0"}`, 400, "to"},
		{"bad name", `{"action":"diff","packageName":"Bad Name","from":"1.0.0","to":"1.1.0"}`, 400, "packageName"},
		{"negative context", `{"action":"diff","packageName":"diff-fixture","from":"1.0.0","to":"1.1.0","contextLines":-1}`, 400, "contextLines"},
		{"extglob include", `{"action":"diff","packageName":"diff-fixture","from":"1.0.0","to":"1.1.0","include":"+(a|b)"}`, 400, "include"},
		{"forged cursor", `{"action":"diff","packageName":"diff-fixture","from":"1.0.0","to":"1.1.0","cursor":"diff:999:0"}`, 400, "cursor"},
		{"tiny page", `{"action":"diff","packageName":"diff-fixture","from":"1.0.0","to":"1.1.0","maxBytes":100}`, 400, "maxBytes"},
		{"page over the setting", `{"action":"diff","packageName":"diff-fixture","from":"1.0.0","to":"1.1.0","maxBytes":1000000}`, 422, "max-answer-bytes"},
	}
	host := strings.TrimSuffix(strings.TrimPrefix(m.reg.URL(), "http://"), "/")
	for _, tt := range tests {
		status, body := m.explore(tt.body, nil)
		if status != tt.status || !strings.Contains(string(body), tt.says) {
			t.Errorf("%s: %d %s, want %d saying %q", tt.name, status, body, tt.status, tt.says)
		}
		if strings.Contains(string(body), host) {
			t.Errorf("%s: the error names the registry: %s", tt.name, body)
		}
	}
	if resp, body := m.get("/v1/npm/diff-fixture@1.0.0/-/diff?from=1.0.0&to=1.1.0"); resp.StatusCode != 400 {
		t.Errorf("REST diff with a version in the path: %d %s, want 400", resp.StatusCode, body)
	}
	if resp, body := m.get("/v1/npm/diff-fixture/-/diff?from=1.0.0&to=2.0.0"); resp.StatusCode != 404 || !strings.Contains(string(body), "matching to") {
		t.Errorf("REST diff to a missing version: %d %s, want 404 naming to", resp.StatusCode, body)
	}
}

// TestDiffChecksAccess: the diff reads both versions through the read
// chain, so a token may diff only packages it may read, on either route.
func TestDiffChecksAccess(t *testing.T) {
	t.Parallel()
	m := newAuthedMirror(t)
	body := `{"action":"diff","packageName":"lib","from":"1.0.0","to":"1.0.0"}`
	if rec := m.do("POST", "/v1/explore", scopedToken, body); rec.Code != http.StatusForbidden {
		t.Errorf("scoped token diffing outside its scopes: %d %s, want 403", rec.Code, rec.Body)
	}
	if rec := m.do("GET", "/v1/npm/lib/-/diff?from=1.0.0&to=1.0.0", scopedToken, ""); rec.Code != http.StatusForbidden {
		t.Errorf("REST: %d %s, want 403", rec.Code, rec.Body)
	}
	if rec := m.do("POST", "/v1/explore", goodToken, body); rec.Code != http.StatusOK {
		t.Errorf("valid token: %d %s", rec.Code, rec.Body)
	}
}

// TestDiffTotalsOnRESTAndWeb: the REST diff's pages and the web page say
// the whole diff's totals and which files a page shows, as MCP's text
// does (explore.DiffResult.Summary): a page's own files never read as
// the whole diff's.
func TestDiffTotalsOnRESTAndWeb(t *testing.T) {
	t.Parallel()
	m := newMirror(t, embedded)
	difftest.Publish(t, m.reg)
	var whole diffAnswer
	var all struct {
		TotalFiles int `json:"totalFiles"`
	}
	body, _ := json.Marshal(diffRequest(difftest.Cases()[0], 0))
	if status, raw := m.explore(string(body), &whole); status != http.StatusOK || json.Unmarshal(raw, &all) != nil || all.TotalFiles < 3 {
		t.Fatalf("the fixture's diff: %d %s, want 3 or more files", status, raw)
	}
	total := strconv.Itoa(all.TotalFiles)

	path := "/v1/npm/" + difftest.Package + "/-/diff?" + url.Values{"from": {difftest.Cases()[0].From}, "to": {difftest.Cases()[0].To}, "maxBytes": {"4096"}}.Encode()
	for page := 1; path != ""; page++ {
		resp, b := m.get(path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		h := resp.Header
		if h.Get("X-Pkgscope-Total-Files") != total || !strings.HasPrefix(h.Get("X-Pkgscope-Summary"), total+" files changed in all") {
			t.Errorf("page %d: X-Pkgscope-Total-Files %q, X-Pkgscope-Summary %q; want %s files changed in all",
				page, h.Get("X-Pkgscope-Total-Files"), h.Get("X-Pkgscope-Summary"), total)
		}
		if page == 1 && (!strings.HasPrefix(h.Get("X-Pkgscope-Files"), "1-") || !strings.Contains(h.Get("X-Pkgscope-Summary"), "this page: file") ||
			!strings.Contains(h.Get("X-Pkgscope-Summary"), "to see less")) {
			t.Errorf("first page: X-Pkgscope-Files %q, summary %q; want files 1-… and how to see less", h.Get("X-Pkgscope-Files"), h.Get("X-Pkgscope-Summary"))
		}
		link := h.Get("Link")
		if link == "" && !strings.Contains(h.Get("X-Pkgscope-Summary"), "this is the last page") {
			t.Errorf("last page's summary %q does not say so", h.Get("X-Pkgscope-Summary"))
		}
		path = strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`)
		if page > 1000 {
			t.Fatal("REST paging does not end")
		}
	}

	resp, b := m.get("/diff/" + difftest.Package + "?" + url.Values{"from": {whole.From}, "to": {whole.To}}.Encode())
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `id="diff-summary">`+total+" files changed (") {
		t.Errorf("web diff page: %d, want the summary %q…:\n%s", resp.StatusCode, total+" files changed (", b)
	}
	if sized := regexp.MustCompile(`<td class="num">\d+(\.\d)? [KM]?B → \d+(\.\d)? [KM]?B</td>`); !strings.Contains(string(b), `<th scope="col">Size</th>`) || !sized.Match(b) {
		t.Errorf("web diff page: no size column with a modified file's two sizes:\n%s", b)
	}
}

// TestRESTDiffNamesFilesWithoutHunks: a file whose line diff passed
// max-diff-work is printed without hunks, which is where the REST body
// stops being npm diff's bytes; the page that holds it says so in an
// X-Pkgscope-Note naming the file and what to do instead. The JSON answer
// always said it in the file's note; the REST diff said nothing.
func TestRESTDiffNamesFilesWithoutHunks(t *testing.T) {
	t.Parallel()
	m := newMirror(t, embedded, func(c *config.Config) { c.MaxDiffWork = 50 })
	difftest.Publish(t, m.reg)
	c := difftest.Cases()[0]
	var whole diffAnswer
	body, _ := json.Marshal(diffRequest(c, 1<<20))
	if status, raw := m.explore(string(body), &whole); status != http.StatusOK || whole.Next != nil {
		t.Fatalf("the fixture's diff: %d %s, want one page", status, raw)
	}
	var want []string
	for _, f := range whole.Files {
		if note, _ := f["note"].(string); note != "" {
			want = append(want, f["path"].(string)+": "+note)
		}
	}
	if len(want) == 0 {
		t.Fatal("with max-diff-work 50 some file of the fixture should be shown without hunks")
	}
	var got []string
	path := "/v1/npm/" + difftest.Package + "/-/diff?" + url.Values{"from": {c.From}, "to": {c.To}, "maxBytes": {"4096"}}.Encode()
	for page := 1; path != ""; page++ {
		resp, b := m.get(path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		for _, n := range resp.Header.Values("X-Pkgscope-Note") {
			if strings.Contains(n, "hunks not shown") {
				got = append(got, n)
			}
		}
		path = strings.TrimSuffix(strings.TrimPrefix(resp.Header.Get("Link"), "<"), `>; rel="next"`)
		if page > 1000 {
			t.Fatal("REST paging does not end")
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("REST notes of files without hunks:\n%q\nwant (the JSON files' notes):\n%q", got, want)
	}
}
