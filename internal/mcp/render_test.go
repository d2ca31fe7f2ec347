package mcp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/explore"
)

// TestRenderGrepContext: context groups print like rg --heading -C: each
// path once, on its own line, shared lines once, "--" only between groups
// of a file that do not touch, a blank line between files.
func TestRenderGrepContext(t *testing.T) {
	res := &explore.GrepResult{Answer: explore.Answer{PackageName: "p", Version: "1.0.0"}, FilesSearched: 2, Matches: []explore.GrepMatch{
		{File: "a.js", Line: 2, Column: 1, Text: "m2", Before: []string{"l1"}, After: []string{"m3"}},
		{File: "a.js", Line: 3, Column: 2, Text: "m3", Before: []string{"m2"}, After: []string{"l4"}},
		{File: "a.js", Line: 5, Column: 1, Text: "m5", Before: []string{"l4"}},
		{File: "a.js", Line: 9, Column: 1, Text: "m9", Before: []string{"l8"}, After: []string{"l10"}},
		{File: "b.js", Line: 1, Column: 4, Text: "m1", After: []string{"l2"}},
	}}
	want := `p@1.0.0 grep: 5 matching lines in 2 files (2 files searched)
a.js
1-l1
2:1:m2
3:2:m3
4-l4
5:1:m5
--
8-l8
9:1:m9
10-l10

b.js
1:4:m1
2-l2`
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

// TestRenderGrepWindowsPerMatch: a long line prints a line per window,
// as ripgrep's --vimgrep prints one per match, then how many more it
// holds and how to read them.
func TestRenderGrepWindowsPerMatch(t *testing.T) {
	res := &explore.GrepResult{Answer: explore.Answer{PackageName: "p", Version: "1.0.0"}, FilesSearched: 1, Matches: []explore.GrepMatch{
		{File: "min.js", Line: 1, Column: 11, Text: "useState(a)", LineBytes: 90000,
			Windows:    []explore.GrepWindow{{Column: 50001, Text: "useState(b)", TextOffset: 50000}},
			MoreInLine: 3, MoreColumn: 70001,
			MoreNext: &explore.Request{Action: "grep", PackageName: "p", Version: "1.0.0", Pattern: "useState", Cursor: "gl1.70001:min.js"}},
	}}
	want := "p@1.0.0 grep: 1 matching line in 1 file (1 file searched)\n" +
		"min.js:1:11:[bytes 1-11 of 90000] useState(a)\n" +
		"min.js:1:50001:[bytes 50001-50011 of 90000] useState(b)\n" +
		`[min.js:1: 3 more matches in this line from byte 70001; to see them, a window each, call explore_npm with {"action":"grep","packageName":"p","version":"1.0.0","pattern":"useState","cursor":"gl1.70001:min.js"}]`
	if got := renderGrep(res); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A project's grep gives no such request: read the line from there.
	res.Matches[0].MoreNext = nil
	want = strings.Replace(want, want[strings.Index(want, "; to see"):], ": read offset 1, column 70001 to see them]", 1)
	if got := renderGrep(res); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestRenderGrepSameBytes: a file with the same bytes as one before costs
// one line, and the header counts it apart from the lines shown.
func TestRenderGrepSameBytes(t *testing.T) {
	res := &explore.GrepResult{Answer: explore.Answer{PackageName: "p", Version: "1.0.0"}, FilesSearched: 3, Matches: []explore.GrepMatch{
		{File: "a.d.ts", Line: 1, Column: 1, Text: "hit"},
		{File: "a.d.cts", SameBytesAs: "a.d.ts", MatchingLines: 1},
		{File: "b.js", Line: 2, Column: 1, Text: "hit"},
	}}
	want := "p@1.0.0 grep: 2 matching lines in 2 files, and 1 file with the same bytes as one before (1 matching line not repeated) (3 files searched)\n" +
		"a.d.ts:1:1:hit\n[a.d.cts: same bytes as a.d.ts; its 1 matching line not repeated]\nb.js:2:1:hit"
	if got := renderGrep(res); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestRenderGrepSkippedOnOneLine: the binary files grep did not search
// take one line naming the first few (next's 13 fonts and .wasm took 13
// lines the header already counted); structuredContent lists them all.
func TestRenderGrepSkippedOnOneLine(t *testing.T) {
	res := &explore.GrepResult{Answer: explore.Answer{PackageName: "p", Version: "1.0.0"}, FilesSearched: 2, FilesSkipped: 25,
		Matches: []explore.GrepMatch{{File: "a.js", Line: 1, Column: 1, Text: "hit"}}}
	for i := range 20 { // explore lists 20 of 25
		res.Skipped = append(res.Skipped, explore.SkippedFile{Path: fmt.Sprintf("f%d.wasm", i), Reason: "binary"})
	}
	want := "p@1.0.0 grep: 1 matching line in 1 file (2 files searched, 25 binary skipped)\na.js:1:1:hit\n" +
		"[not searched: f0.wasm, f1.wasm, f2.wasm and 22 more (binary)]"
	if got := renderGrep(res); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	res.FilesSkipped, res.Skipped = 1, res.Skipped[:1]
	if got := renderGrep(res); !strings.HasSuffix(got, "\n[not searched: f0.wasm (binary)]") {
		t.Errorf("one skipped file: got\n%s", got)
	}
}

// TestRenderGrepRepeatedRuns: a file whose matching lines on the page are
// an earlier file's, numbers and text alike (lucide-react's .d.ts and its
// .prefixed.d.ts), takes one line naming it; a run that differs, or is
// shorter printed than named, is printed.
func TestRenderGrepRepeatedRuns(t *testing.T) {
	decl := func(file string, line int, name string) explore.GrepMatch {
		return explore.GrepMatch{File: file, Line: line, Column: 15, Text: "declare const " + name + ": LucideIcon;"}
	}
	res := &explore.GrepResult{Answer: explore.Answer{PackageName: "p", Version: "1.0.0"}, FilesSearched: 4, Matches: []explore.GrepMatch{
		decl("dist/a.d.ts", 10, "ArrowRight"), decl("dist/a.d.ts", 20, "ArrowRightLeft"),
		decl("dist/a.prefixed.d.ts", 10, "ArrowRight"), decl("dist/a.prefixed.d.ts", 20, "ArrowRightLeft"),
		decl("dist/a.suffixed.d.ts", 10, "ArrowRight"), decl("dist/a.suffixed.d.ts", 21, "ArrowRightLeft"),
		{File: "x.js", Line: 1, Column: 1, Text: "a"}, {File: "y.js", Line: 1, Column: 1, Text: "a"},
	}}
	want := "p@1.0.0 grep: 8 matching lines in 5 files (4 files searched)\n" +
		"dist/a.d.ts:10:15:declare const ArrowRight: LucideIcon;\n" +
		"dist/a.d.ts:20:15:declare const ArrowRightLeft: LucideIcon;\n" +
		"[dist/a.prefixed.d.ts:10-20: the same 2 matching lines as dist/a.d.ts above]\n" +
		"dist/a.suffixed.d.ts:10:15:declare const ArrowRight: LucideIcon;\n" +
		"dist/a.suffixed.d.ts:21:15:declare const ArrowRightLeft: LucideIcon;\n" +
		"x.js:1:1:a\ny.js:1:1:a"
	if got := renderGrep(res); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestRenderGrepCountTotal: count's header sums the matching lines.
func TestRenderGrepCountTotal(t *testing.T) {
	res := &explore.GrepResult{Answer: explore.Answer{PackageName: "p", Version: "1.0.0"}, OutputMode: explore.OutputCount, FilesSearched: 4,
		Files: []explore.GrepFile{{Path: "a.js", Count: 2}, {Path: "b.js", Count: 5}}, PageMatches: 7}
	want := "p@1.0.0 grep: 7 matching lines in 2 files (4 files searched)\na.js:2\nb.js:5"
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

// TestRenderDiff: a diff on one page says how much changed; a page of a
// longer diff says the totals "in all", which files it shows (naming the
// one it starts inside) and whether it is the last, so that no page's
// count reads as the whole diff's; nameOnly prints each path's status.
func TestRenderDiff(t *testing.T) {
	n := func(v int) *int { return &v }
	x := explore.DiffFile{Path: "x.js", Status: "modified", Added: n(2), Removed: n(1)}
	r := &explore.DiffResult{
		PackageName: "pkg", From: "1.0.0", To: "1.1.0",
		Diff:       "diff --git a/x.js b/x.js\nindex v1.0.0..v1.1.0 100644\n",
		Files:      []explore.DiffFile{x},
		TotalFiles: 1, TotalByStatus: map[string]int{"modified": 1}, FirstFile: 1, LastFile: 1,
	}
	if got, want := renderDiff(r, "", false), "pkg@1.0.0 → 1.1.0: 1 file changed (1 modified), +2 -1 lines\n"+r.Diff; got != want {
		t.Errorf("whole diff:\n%s\nwant:\n%s", got, want)
	}
	next := &explore.Request{Action: "diff", PackageName: "pkg", From: "1.0.0", To: "1.1.0", Cursor: "diff:5:120"}
	const again = `[the diff goes on (cut by maxBytes): call again with {"action":"diff","packageName":"pkg","from":"1.0.0","to":"1.1.0","cursor":"diff:5:120"}]`
	lib := explore.DiffFile{Path: "lib/types.d.ts", Status: "modified", Added: n(300), Removed: n(40)}
	added := explore.DiffFile{Path: "new.js", Status: "added", Added: n(7), Removed: n(0)}
	for _, c := range []struct {
		name string
		page explore.DiffResult
		head string
	}{
		{"first page", explore.DiffResult{Files: []explore.DiffFile{x, lib}, FirstFile: 1, LastFile: 2, GoesOn: true, Truncated: true, Next: next},
			"19 files changed in all (2 added, 17 modified); this page: files 1–2 (+302 -41 lines); file 2 continues on the next page; " +
				"to see less, narrow it with include/exclude or list its files with nameOnly"},
		{"inside one file", explore.DiffResult{Continues: &lib, FirstFile: 2, LastFile: 2, GoesOn: true, Truncated: true, Next: next},
			"19 files changed in all (2 added, 17 modified); this page: more of file 2, lib/types.d.ts, continued on the next page"},
		{"end of a file, then others", explore.DiffResult{Continues: &lib, Files: []explore.DiffFile{added, x}, FirstFile: 2, LastFile: 4, Truncated: true, Next: next},
			"19 files changed in all (2 added, 17 modified); this page: the rest of file 2, lib/types.d.ts, then files 3–4 (+9 -1 lines)"},
		{"last page", explore.DiffResult{Files: []explore.DiffFile{added}, FirstFile: 19, LastFile: 19},
			"19 files changed in all (2 added, 17 modified); this page: file 19 (+7 -0 lines); this is the last page"},
	} {
		p := c.page
		p.PackageName, p.From, p.To, p.TotalFiles, p.TotalByStatus = "pkg", "1.0.0", "1.1.0", 19, map[string]int{"added": 2, "modified": 17}
		if p.Truncated {
			p.TruncatedBy = "maxBytes"
		}
		p.Diff = "@@ -1 +1 @@\n-a\n+b\n"
		got := renderDiff(&p, "", false)
		want := "pkg@1.0.0 → 1.1.0: " + c.head + "\n" + p.Diff
		if p.Truncated {
			want += "\n" + again
		}
		if got != want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.name, got, want)
		}
	}
	names := &explore.DiffResult{PackageName: "pkg", From: "1.0.0", To: "1.1.0", Diff: "x.js\nnew.js\n",
		Files: []explore.DiffFile{{Path: "x.js", Status: "modified", OldBytes: ptr(int64(812)), NewBytes: ptr(int64(4210))},
			{Path: "new.js", Status: "added", NewBytes: ptr(int64(0))}}, Unprinted: []string{"bytes.bin"},
		TotalFiles: 3, TotalByStatus: map[string]int{"added": 1, "modified": 2}, FirstFile: 1, LastFile: 3}
	want := "pkg@1.0.0 → 1.1.0: 3 files changed (1 added, 2 modified)\n" +
		"[note: npm diff prints nothing for 1 file, whose bytes differ only where they are not UTF-8 and decode alike: bytes.bin]\n" +
		"modified x.js (812 B → 4.2 KB)\nadded    new.js (0 B)\n"
	if got := renderDiff(names, "", true); got != want {
		t.Errorf("nameOnly:\n%s\nwant:\n%s", got, want)
	}
}

// TestRenderListCounts: one of a thing is singular ("1 file", not "1
// files"), in the header, a folder's entry and the depth shown.
func TestRenderListCounts(t *testing.T) {
	a := explore.Answer{PackageName: "p", Version: "1.0.0"}
	r := &explore.ListResult{Answer: a, Depth: 1, TotalFiles: 1, TotalBytes: 10,
		Entries: []explore.Entry{{Path: "dist/", Type: explore.EntryFolder, Bytes: 10, Files: 1}}}
	if got, want := renderList(r, "list"), "p@1.0.0 1 file, 10 B; 1 level shown, deeper folders summed up\ndist/ (1 file, 10 B)"; got != want {
		t.Errorf("list:\n%q\nwant\n%q", got, want)
	}
	r = &explore.ListResult{Answer: a, TotalFiles: 1, Entries: []explore.Entry{{Path: "a.js", Type: explore.EntryFile, Bytes: 10}}}
	if got, want := renderList(r, "glob"), "p@1.0.0 1 matching file or folder\na.js (10 B)"; got != want {
		t.Errorf("glob:\n%q\nwant\n%q", got, want)
	}
	r.TotalFiles = 2
	if got, want := renderList(r, "glob"), "p@1.0.0 2 matching files and folders\na.js (10 B)"; got != want {
		t.Errorf("glob of 2:\n%q\nwant\n%q", got, want)
	}
}

func ptr[T any](v T) *T { return &v }

// TestFoldBuildVariants: a stem's build variants and folder share a line
// as the shell's braces write them, stems with the same variants share
// one too, names alone keep theirs; the header counts what is listed.
func TestFoldBuildVariants(t *testing.T) {
	f := func(p string, n int64) explore.Entry {
		return explore.Entry{Path: p, Type: explore.EntryFile, Bytes: n}
	}
	d := func(p string, files int, n int64) explore.Entry {
		return explore.Entry{Path: p, Type: explore.EntryFolder, Files: files, Bytes: n}
	}
	r := &explore.ListResult{Answer: explore.Answer{PackageName: "date-fns", Version: "4.1.0"}, Path: "locale", TotalFiles: 13, TotalBytes: 4000, Depth: 1,
		Entries: []explore.Entry{
			d("locale/_lib/", 2, 100),
			f("locale/af.cjs", 10), f("locale/af.d.ts", 10), f("locale/af.js", 10), d("locale/af/", 2, 100),
			f("locale/ar.cjs", 10), f("locale/ar.d.ts", 10), f("locale/ar.js", 10), d("locale/ar/", 2, 100),
			f("locale/cdn.min.js", 1000), f("locale/cdn.js", 2000),
			f("locale/README", 5), f("locale/types.d.ts", 7),
		}}
	want := "date-fns@4.1.0 locale/: 13 files, 4.0 KB; 1 level shown, deeper folders summed up; listed: 10 files, 3 folders\n" +
		"locale/_lib/ (2 files, 100 B)\n" +
		"locale/{af,ar}{.cjs,.d.ts,.js,/} (6 files, 60 B; 2 folders: 4 files, 200 B)\n" +
		"locale/cdn.{js,min.js} (2 files, 3.0 KB)\n" +
		"locale/README (5 B)\n" +
		"locale/types.d.ts (7 B)"
	if got := renderList(r, "list"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
