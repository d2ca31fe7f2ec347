package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/version"
	"github.com/pkgscope/pkgscope/internal/warm"
)

func files(paths ...string) []store.File {
	var fs []store.File
	for i, p := range paths {
		fs = append(fs, store.File{Path: p, Size: int64(10 * (i + 1))})
	}
	slices.SortFunc(fs, func(a, b store.File) int { return strings.Compare(a.Path, b.Path) })
	return fs
}

func TestListFolder(t *testing.T) {
	fs := files("README.md", "dist/a.js", "dist/esm/b.js", "dist/esm/c.js", "dist-extra/x.js", "package.json", "src/index.ts")
	var got []string
	es, n, total := listFolder(fs, "", "/browse/p@1.0.0/")
	for _, e := range es {
		got = append(got, fmt.Sprintf("%s %v %d %d %s", e.Name, e.Dir, e.Files, e.Bytes, e.Href))
	}
	want := []string{
		"dist true 3 90 /browse/p@1.0.0/dist/",
		"dist-extra true 1 50 /browse/p@1.0.0/dist-extra/",
		"src true 1 70 /browse/p@1.0.0/src/",
		"README.md false 1 10 /browse/p@1.0.0/README.md",
		"package.json false 1 60 /browse/p@1.0.0/package.json",
	}
	if !slices.Equal(got, want) || n != 7 || total != 280 {
		t.Errorf("root = %d files, %d bytes:\n%s\nwant 7, 280:\n%s", n, total, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// "dist" must not take "dist-extra"'s files.
	es, n, _ = listFolder(fs, "dist", "/b/")
	if len(es) != 2 || es[0].Name != "esm" || es[0].Files != 2 || es[1].Name != "a.js" || n != 3 {
		t.Errorf("dist = %+v (%d files)", es, n)
	}
	if !hasFolder(fs, "dist/esm") || hasFolder(fs, "dist/es") || hasFolder(fs, "README.md") {
		t.Error("hasFolder answers wrong")
	}
}

func TestPageOfKeepsToTheBudget(t *testing.T) {
	body := strings.Repeat("abcdefghij\n", 100) + strings.Repeat("x", 5000) + "\nlast"
	page := func(start int, lim Limits) ([]pageLine, int, string) {
		t.Helper()
		lines, total, cut, err := pageOf(strings.NewReader(body), start, lim)
		if err != nil {
			t.Fatal(err)
		}
		return lines, total, cut
	}
	lim := Limits{PageLines: 40, PageBytes: 1 << 20, LineWidth: 100}
	lines, total, cut := page(1, lim)
	if len(lines) != 40 || total != 102 || cut != "lines" {
		t.Errorf("first page: %d lines of %d, cut by %q", len(lines), total, cut)
	}
	lines, _, cut = page(81, lim)
	if len(lines) != 22 || cut != "" || lines[21].Text != "last" || len(lines[20].Text) != 100 || lines[20].Cut != 4900 {
		t.Errorf("last page: %d lines, cut %q, long line %d bytes shown + %d cut", len(lines), cut, len(lines[20].Text), lines[20].Cut)
	}
	// The byte budget counts a long line only up to the line width.
	lim = Limits{PageLines: 1000, PageBytes: 55, LineWidth: 100}
	if lines, _, cut = page(1, lim); len(lines) != 5 || cut != "bytes" {
		t.Errorf("byte budget: %d lines, cut %q", len(lines), cut)
	}
}

// TestPageOfLongLinesAndEnds: a line far longer than the read buffer is
// cut at a rune boundary and counted whole; CRs and the last newline are
// read as cat -n does.
func TestPageOfLongLinesAndEnds(t *testing.T) {
	for _, tc := range []struct {
		body  string
		total int
		shown []pageLine
	}{
		{"", 0, nil},
		{"a\n", 1, []pageLine{{Text: "a"}}},
		{"a\r\nb", 2, []pageLine{{Text: "a"}, {Text: "b"}}},
		{"\n\n", 2, []pageLine{{}, {}}},
		{strings.Repeat("é", 200<<10) + "\nz", 2, []pageLine{{Text: strings.Repeat("é", 25), Cut: 400<<10 - 50}, {Text: "z"}}},
	} {
		lines, total, _, err := pageOf(strings.NewReader(tc.body), 1, Limits{PageLines: 10, PageBytes: 1 << 20, LineWidth: 50})
		if err != nil || total != tc.total || !slices.Equal(lines, tc.shown) {
			t.Errorf("pageOf(%.20q…): %d lines %.80v (%v), want %d %.80v", tc.body, total, lines, err, tc.total, tc.shown)
		}
	}
}

func TestHighlightEscapes(t *testing.T) {
	lines := []pageLine{{Text: `const a = "<script>alert(1)</script>";`}, {Text: strings.Repeat("é", 25), Cut: 70}}
	out, lexed := highlight("x.js", lines, 7)
	if !lexed || out[0].N != 7 || out[1].N != 8 || out[1].Cut != 70 {
		t.Fatalf("highlight: lexed %v, numbers %d %d, cut %d", lexed, out[0].N, out[1].N, out[1].Cut)
	}
	if strings.Contains(string(out[0].HTML), "<script>") || !strings.Contains(string(out[0].HTML), "&lt;script&gt;") {
		t.Errorf("markup in a package file reached the page: %s", out[0].HTML)
	}
	plain, lexed := highlight("LICENSE", []pageLine{{Text: "<b>"}}, 1)
	if lexed || string(plain[0].HTML) != "&lt;b&gt;" {
		t.Errorf("plain text: %v %s", lexed, plain[0].HTML)
	}
}

func TestLocalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/browse/a@1/": "/browse/a@1/", "": "/", "https://evil.example/": "/", "//evil.example/": "/", `/\evil.example`: "/", "browse": "/",
		"/\t/evil.example": "/", "/\n/evil.example": "/", "/a\\b": "/", "/browse/a@1/x?y=1": "/browse/a@1/x?y=1",
	} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTemplatesParse(t *testing.T) {
	tm := parseTemplates()
	for _, name := range []string{"home", "folder", "file", "login", "error", "docs", "docpage", "compat", "warm", "package", "fetch"} {
		if tm[name] == nil {
			t.Errorf("no template %q", name)
		}
	}
}

// TestCountsAreSingularForOne: a page counting one thing says "1 package",
// not "1 packages".
func TestCountsAreSingularForOne(t *testing.T) {
	tm := parseTemplates()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, tc := range []struct {
		name string
		data any
		want string
	}{
		{"warm", warm.Progress{ID: "r1", Total: 1, Done: 1, Finished: true}, "1 package: 1 done"},
		{"project", &project.Status{ID: strings.Repeat("a", 64), Format: "package-lock@3", Total: 1, Warm: 1}, "1 folder: 1 warm"},
	} {
		var b strings.Builder
		if err := tm[tc.name].ExecuteTemplate(&b, "layout", page{Title: tc.name, Data: tc.data, Request: req}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("%s page does not say %q:\n%s", tc.name, tc.want, b.String())
		}
	}
}

// TestFooterSaysWhichBuild: every page's footer names the build that
// rendered it, as --version and /healthz do.
func TestFooterSaysWhichBuild(t *testing.T) {
	tm := parseTemplates()
	var b strings.Builder
	if err := tm["warm"].ExecuteTemplate(&b, "layout", page{Title: "warm", Data: warm.Progress{ID: "r1"}, Request: httptest.NewRequest(http.MethodGet, "/", nil)}); err != nil {
		t.Fatal(err)
	}
	if want := "<footer>pkgscope " + version.Get().Short() + "</footer>"; !strings.Contains(b.String(), want) {
		t.Errorf("the page has no %q:\n%s", want, b.String())
	}
}
