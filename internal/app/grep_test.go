package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

type grepResult struct {
	Version string `json:"version"`
	Matches []struct {
		File       string   `json:"file"`
		Line       int      `json:"line"`
		Column     int      `json:"column"`
		Text       string   `json:"text"`
		TextOffset int      `json:"textOffset"`
		LineBytes  int      `json:"lineBytes"`
		Before     []string `json:"before"`
		After      []string `json:"after"`
	} `json:"matches"`
	FilesSearched int `json:"filesSearched"`
	FilesSkipped  int `json:"filesSkipped"`
	Skipped       []struct{ Path, Reason string }
	Truncated     bool   `json:"truncated"`
	TruncatedBy   string `json:"truncatedBy"`
}

func (g grepResult) lines() string {
	var b strings.Builder
	for _, m := range g.Matches {
		fmt.Fprintf(&b, "%s:%d:%s\n", m.File, m.Line, m.Text)
	}
	return b.String()
}

// grepPackage is an npm-shaped package: a one-line minified bundle far
// wider than codesearch's 2000-byte line limit, a d.ts, a binary, a CRLF
// file and a file with no trailing newline.
func grepPackage(t testing.TB) []byte {
	bundle := strings.Repeat("var a=1;", 5000) + "function ArrowLeft(){return 1}" + strings.Repeat(";b()", 5000)
	return tarballtest.TGZ(t,
		tarballtest.File("package/dist/icons.d.ts", "export declare const ArrowLeft: Icon;\nexport declare const ArrowRight: Icon;\n"),
		tarballtest.File("package/dist/index.min.js", bundle+"\n"),
		tarballtest.File("package/crlf.js", "const x = 1;\r\nconst ArrowLeftish = 2;\r\n"),
		tarballtest.File("package/README.md", "Use ArrowLeft.\nno newline ArrowLeft"),
		tarballtest.Bytes("package/logo.png", []byte("\x89PNG\x00ArrowLeft")),
	)
}

func TestGrep(t *testing.T) {
	forEachStore(t, func(t *testing.T, kind storeKind) {
		m := newMirror(t, kind)
		m.reg.Publish("icons", "1.0.0", grepPackage(t))
		var g grepResult
		if status, body := m.explore(`{"action":"grep","packageName":"icons","pattern":"ArrowLeft"}`, &g); status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		// Declarations first, then sources, bundles, docs.
		want := "dist/icons.d.ts:1:export declare const ArrowLeft: Icon;\ncrlf.js:2:const ArrowLeftish = 2;\r\n"
		if got := g.lines(); !strings.HasPrefix(got, want) || len(g.Matches) != 5 || !strings.HasSuffix(got, "README.md:1:Use ArrowLeft.\nREADME.md:2:no newline ArrowLeft\n") {
			t.Fatalf("grep ArrowLeft =\n%s\nwant first\n%s", got, want)
		}
		long := g.Matches[2]
		if long.File != "dist/index.min.js" || long.Line != 1 || long.Column != 40001+len("function ") ||
			!strings.Contains(long.Text, "function ArrowLeft()") || len(long.Text) > 600 || long.LineBytes != 40000+30+20000 {
			t.Errorf("match in the minified line = %+v (want a window around column %d)", long, 40001+len("function "))
		}
		if g.FilesSkipped != 1 || g.Skipped[0].Path != "logo.png" || g.Skipped[0].Reason != "binary" || g.FilesSearched != 4 {
			t.Errorf("searched %d, skipped %d %v", g.FilesSearched, g.FilesSkipped, g.Skipped)
		}

		g = grepResult{}
		m.explore(`{"action":"grep","packageName":"icons","pattern":"arrowleft","caseInsensitive":true,"wholeWord":true,"include":"dist/**","exclude":["**/*.js"],"contextLines":1}`, &g)
		if got := g.lines(); got != "dist/icons.d.ts:1:export declare const ArrowLeft: Icon;\n" || len(g.Matches[0].After) != 1 {
			t.Errorf("grep -iw with globs and context = %q %+v", got, g.Matches)
		}
		g = grepResult{}
		m.explore(`{"action":"grep","packageName":"icons","pattern":"Arrow","maxMatches":2}`, &g)
		if len(g.Matches) != 2 || !g.Truncated || g.TruncatedBy != "maxMatches" {
			t.Errorf("maxMatches 2: %d matches, truncated %v by %q", len(g.Matches), g.Truncated, g.TruncatedBy)
		}
		g = grepResult{}
		m.explore(`{"action":"grep","packageName":"icons","pattern":"a.b(c","fixedStrings":true}`, &g)
		if len(g.Matches) != 0 || g.Truncated {
			t.Errorf("fixed string with metacharacters: %+v", g)
		}
	})
}

// TestGrepNoMatchNoteInJSON: the JSON answer to a grep that matches
// nothing says what to try next, as the MCP text does: the same note.
func TestGrepNoMatchNoteInJSON(t *testing.T) {
	m := newMirror(t, embedded)
	m.reg.Publish("icons", "1.0.0", grepPackage(t))
	var g struct {
		Matches []any    `json:"matches"`
		Notes   []string `json:"notes"`
	}
	if status, body := m.explore(`{"action":"grep","packageName":"icons","pattern":"$ArrowUp"}`, &g); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	if len(g.Matches) != 0 || len(g.Notes) != 1 || !strings.HasPrefix(g.Notes[0], "no match in 4 files") ||
		!strings.Contains(g.Notes[0], "fixedStrings: true") || !strings.Contains(g.Notes[0], "caseInsensitive: true") {
		t.Errorf("grep $ArrowUp: matches %v, notes %q; want one note naming fixedStrings and caseInsensitive", g.Matches, g.Notes)
	}
}

func TestGrepErrors(t *testing.T) {
	m := newMirror(t, embedded)
	m.reg.Publish("icons", "1.0.0", grepPackage(t))
	for name, body := range map[string]string{
		"no pattern":      `{"action":"grep","packageName":"icons"}`,
		"bad regexp":      `{"action":"grep","packageName":"icons","pattern":"a(b"}`,
		"huge repetition": `{"action":"grep","packageName":"icons","pattern":"(a{1000}){1000}"}`,
		"bad include":     `{"action":"grep","packageName":"icons","pattern":"a","include":"[x"}`,
	} {
		status, out := m.explore(body, nil)
		var e struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal(out, &e)
		if status != 400 || e.Error.Code != "bad_request" || e.Error.Message == "" {
			t.Errorf("%s: %d %s, want 400 bad_request", name, status, out)
		}
	}
}

// TestGrepIndexIsStoredAndShared: the index built on one node is stored
// with the version, and a second node with an empty local cache fetches it
// from the store instead of building it again.
func TestGrepIndexIsStoredAndShared(t *testing.T) {
	var dbURL string
	m := newMirror(t, pg, func(c *config.Config) { dbURL = c.DatabaseURL })
	m.reg.Publish("icons", "1.0.0", grepPackage(t))
	var g grepResult
	if status, body := m.explore(`{"action":"grep","packageName":"icons","version":"1.0.0","pattern":"ArrowRight"}`, &g); status != 200 || len(g.Matches) != 1 {
		t.Fatalf("%d %s", status, body)
	}
	// The first grep of a version is answered from a scan index while the
	// full one builds behind it (search.Options.ScanFirst): join that
	// build before looking for it in the store.
	if err := m.app.EnsureIndex(t.Context(), "icons", "1.0.0"); err != nil {
		t.Fatalf("the full index build: %v", err)
	}
	m2 := newMirror(t, pg, func(c *config.Config) { c.DatabaseURL = dbURL })
	a2 := m2.app
	rec, err := a2.Store.Index(t.Context(), "icons", "1.0.0", index.FormatVersion)
	if err != nil {
		t.Fatalf("index not stored: %v", err)
	}
	var st index.Stats
	if err := json.Unmarshal(rec.Stats, &st); err != nil || st.Coverage < 0.99 || st.BinaryFiles != 1 || rec.Coverage != st.Coverage {
		t.Errorf("stored stats %+v (coverage column %v): %v", st, rec.Coverage, err)
	}
	g = grepResult{}
	if status, body := m2.explore(`{"action":"grep","packageName":"icons","version":"1.0.0","pattern":"ArrowRight"}`, &g); status != 200 || len(g.Matches) != 1 {
		t.Fatalf("second node: %d %s", status, body)
	}
	if n := m2.reg.TarballDownloads("icons", "1.0.0"); n != 0 {
		t.Errorf("second node downloaded the tarball %d times", n)
	}
}

// TestGrepCapsNameTheSetting: asking past a grep cap is a 422 that names
// the setting, as read's limit does.
func TestGrepCapsNameTheSetting(t *testing.T) {
	m := newMirror(t, embedded)
	m.reg.Publish("icons", "1.0.0", grepPackage(t))
	for body, setting := range map[string]string{
		`{"action":"grep","packageName":"icons","pattern":"a","maxMatches":100000000}`: "max-matches",
		`{"action":"grep","packageName":"icons","pattern":"a","contextLines":1000}`:    "max-context-lines",
	} {
		status, out := m.explore(body, nil)
		if status != 422 || !strings.Contains(string(out), setting) {
			t.Errorf("%s: %d %s, want 422 naming %s", body, status, out, setting)
		}
	}
}
