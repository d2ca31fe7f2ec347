package mcp

import (
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/explore"
)

// TestRenderGrepContext: context groups print like grep -C: shared lines
// once, "--" only between groups that do not touch.
func TestRenderGrepContext(t *testing.T) {
	res := &explore.GrepResult{Answer: explore.Answer{PackageName: "p", Version: "1.0.0"}, FilesSearched: 2, Matches: []explore.GrepMatch{
		{File: "a.js", Line: 2, Column: 1, Text: "m2", Before: []string{"l1"}, After: []string{"m3"}},
		{File: "a.js", Line: 3, Column: 2, Text: "m3", Before: []string{"m2"}, After: []string{"l4"}},
		{File: "a.js", Line: 5, Column: 1, Text: "m5", Before: []string{"l4"}},
		{File: "a.js", Line: 9, Column: 1, Text: "m9", Before: []string{"l8"}, After: []string{"l10"}},
		{File: "b.js", Line: 1, Column: 4, Text: "m1", After: []string{"l2"}},
	}}
	want := `p@1.0.0 grep: 5 matching lines in 2 files (2 files searched)
a.js-1-l1
a.js:2:1:m2
a.js:3:2:m3
a.js-4-l4
a.js:5:1:m5
--
a.js-8-l8
a.js:9:1:m9
a.js-10-l10
--
b.js:1:4:m1
b.js-2-l2`
	if got := renderGrep(res); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	next := &explore.Request{Action: "grep", PackageName: "p", Version: "1.0.0", Pattern: "x", Cursor: "g0.0.0.7:a.js"}
	one := &explore.GrepResult{Answer: explore.Answer{PackageName: "p", Version: "1.0.0", ResolvedFrom: "range ^1",
		Notes: []string{"a note"}, Truncated: true, TruncatedBy: "maxBytes", Next: next}, FilesSearched: 1,
		Matches: []explore.GrepMatch{{File: "a.js", Line: 1, Column: 1, Text: "x"}, {File: "a.js", Line: 7, Column: 1, Text: "x"}}}
	want = "p@1.0.0 (range ^1) grep: 2 matching lines in 1 file on this page (1 file searched)\n[note: a note]\na.js:1:1:x\na.js:7:1:x\n" +
		`[truncated by maxBytes; to continue, call explore_npm with {"action":"grep","packageName":"p","version":"1.0.0","pattern":"x","cursor":"g0.0.0.7:a.js"}]`
	if got := renderGrep(one); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestRenderGrepLongLineWindow: a window of a long line says which bytes
// of how long a line it shows, so a model knows it is not the whole line.
func TestRenderGrepLongLineWindow(t *testing.T) {
	res := &explore.GrepResult{Answer: explore.Answer{PackageName: "p", Version: "1.0.0"}, FilesSearched: 1, Matches: []explore.GrepMatch{
		{File: "min.js", Line: 1, Column: 40010, Text: "function ArrowLeft(){}", TextOffset: 40000, LineBytes: 60030},
	}}
	want := "p@1.0.0 grep: 1 matching line in 1 file (1 file searched)\nmin.js:1:40010:[bytes 40001-40022 of 60030] function ArrowLeft(){}"
	if got := renderGrep(res); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestFromSource(t *testing.T) {
	if got := fromSource("", "x"); got != "x" {
		t.Errorf("registry answer annotated: %q", got)
	}
	if got := fromSource(explore.SourceJSDelivr, "x"); got != "x\n[answered from jsdelivr because the registry could not serve this version in time]" {
		t.Errorf("jsDelivr answer: %q", got)
	}
}

func TestRenderDiff(t *testing.T) {
	two, one := 2, 1
	r := &explore.DiffResult{
		PackageName: "pkg", From: "1.0.0", To: "1.1.0",
		Diff:  "diff --git a/x.js b/x.js\nindex v1.0.0..v1.1.0 100644\n",
		Files: []explore.DiffFile{{Path: "x.js", Status: "modified", Added: &two, Removed: &one}},
	}
	got := renderDiff(r, "")
	if want := "pkg@1.0.0 → 1.1.0: 1 file changed (+2 -1 lines)\n" + r.Diff; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	r.Truncated, r.TruncatedBy = true, "maxBytes"
	r.Next = &explore.Request{Action: "diff", PackageName: "pkg", From: "1.0.0", To: "1.1.0", Cursor: "diff:1:0"}
	got = renderDiff(r, "")
	if !strings.Contains(got, "1 file changed (+2 -1 lines) on this page\n") ||
		!strings.HasSuffix(got, `[the diff goes on (cut by maxBytes): call again with {"action":"diff","packageName":"pkg","from":"1.0.0","to":"1.1.0","cursor":"diff:1:0"}]`) {
		t.Errorf("truncated:\n%s", got)
	}
}
