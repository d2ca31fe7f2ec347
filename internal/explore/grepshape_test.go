package explore_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/explore"
)

// TestGrepFoldsFilesWithTheSameBytes: a file with the same bytes as one
// before it in the answer costs one entry naming that file and how many
// matching lines it holds, not a copy of them; files_with_matches and
// count still list every path.
func TestGrepFoldsFilesWithTheSameBytes(t *testing.T) {
	decl := "export declare function hit(): void;\nexport type Hit = 1;\n// hit\n"
	svc := newService(t, map[string]string{
		"package.json":     `{"name":"paged"}`,
		"dist/index.d.ts":  decl,
		"dist/index.d.cts": decl,
		"dist/index.js":    "exports.hit = 1;\n",
	})
	r := explore.Request{Action: "grep", PackageName: "paged", Version: "1.0.0", Pattern: "hit", CaseInsensitive: true}
	res, err := svc.Grep(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range res.Matches {
		if m.SameBytesAs != "" {
			got = append(got, m.File+" = "+m.SameBytesAs+" "+strconv.Itoa(m.MatchingLines))
			continue
		}
		got = append(got, m.File+":"+strconv.Itoa(m.Line))
	}
	// Relevance order: .d.cts sorts before .d.ts, so it is the one shown.
	want := "dist/index.d.cts:1 dist/index.d.cts:2 dist/index.d.cts:3 dist/index.d.ts = dist/index.d.cts 3 dist/index.js:1"
	if strings.Join(got, " ") != want {
		t.Errorf("matches\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	for _, mode := range []string{explore.OutputFilesWithMatches, explore.OutputCount} {
		r.OutputMode = mode
		res, err := svc.Grep(t.Context(), r)
		if err != nil || len(res.Files) != 3 {
			t.Errorf("%s: %+v, %v; want the 3 files", mode, res.Files, err)
		}
	}
}

// TestGrepCountHasATotal: count mode sums the matching lines of its files.
func TestGrepCountHasATotal(t *testing.T) {
	svc := newService(t, map[string]string{
		"package.json": `{"name":"paged"}`,
		"a.js":         "hit\nhit\nno\n",
		"b.js":         "hit hit\n",
	})
	res, err := svc.Grep(t.Context(), explore.Request{Action: "grep", PackageName: "paged", Version: "1.0.0", Pattern: "hit", OutputMode: explore.OutputCount})
	if err != nil || len(res.Files) != 2 || res.PageMatches != 3 {
		t.Fatalf("count = %+v (total %d), %v; want 2 files, 3 lines in all", res.Files, res.PageMatches, err)
	}
}

// TestGrepLongLineShowsEachMatch: a match of a minified line past the
// first window comes in the answer, with where the rest of the line's
// matches start.
func TestGrepLongLineShowsEachMatch(t *testing.T) {
	line := []byte(strings.Repeat("x", 100_000))
	for _, p := range []int{10, 30_000, 60_000, 70_000, 80_000, 90_000, 95_000} {
		copy(line[p:], "useState")
	}
	svc := newService(t, map[string]string{"package.json": `{"name":"paged"}`, "dist/index.min.js": string(line)})
	res, err := svc.Grep(t.Context(), explore.Request{Action: "grep", PackageName: "paged", Version: "1.0.0", Pattern: "useState"})
	if err != nil || len(res.Matches) != 1 {
		t.Fatalf("grep = %+v, %v", res, err)
	}
	m := res.Matches[0]
	if len(m.Windows) != 4 || m.Windows[0].Column != 30_001 || m.MoreInLine != 2 || m.MoreColumn != 90_001 {
		t.Errorf("windows %d (first at %d), %d more from %d; want 4 from 30001, 2 more from 90001",
			len(m.Windows), m.Windows[0].Column, m.MoreInLine, m.MoreColumn)
	}
}

// TestGrepRanksGeneratedFilesLast: the files an agent reads get all their
// matches (both passes, past the per-file cap) before any match of a
// generated file (a source map, a build info, a lockfile, a snapshot),
// and a README's before them too; with an explicit per-file cap the
// overview of the read files comes first, then theirs.
func TestGrepRanksGeneratedFilesLast(t *testing.T) {
	many := strings.Repeat("hit\n", 30) // past the per-file cap (two files, not the same bytes)
	svc := newService(t, map[string]string{
		"package.json":                   `{"name":"paged"}`,
		"README.md":                      "hit\n",
		"dist/a.d.ts":                    many,
		"dist/a.js":                      many + "// hit\n",
		"dist/a.js.map":                  `{"sourcesContent":["hit"]}`,
		"dist/a.d.ts.map":                `{"mappings":"hit"}`,
		"tsconfig.tsbuildinfo":           `{"hit":1}`,
		"test/__snapshots__/a.test.snap": "hit\n",
	})
	r := explore.Request{Action: "grep", PackageName: "paged", Version: "1.0.0", Pattern: "hit"}
	res, err := svc.Grep(t.Context(), r)
	if err != nil || res.Truncated {
		t.Fatalf("grep = %+v, %v", res.Answer, err)
	}
	var files []string
	for _, m := range res.Matches {
		if len(files) == 0 || files[len(files)-1] != m.File {
			files = append(files, m.File)
		}
	}
	want := "dist/a.d.ts dist/a.js dist/a.d.ts dist/a.js README.md dist/a.d.ts.map dist/a.js.map test/__snapshots__/a.test.snap tsconfig.tsbuildinfo"
	if got := strings.Join(files, " "); got != want {
		t.Errorf("files in order\n%s\nwant\n%s", got, want)
	}
	r.MaxMatchesPerFile = 2
	res, err = svc.Grep(t.Context(), r)
	if err != nil || res.Next == nil || len(res.Matches) != 4 || res.Matches[3].File != "dist/a.js" {
		t.Fatalf("maxMatchesPerFile 2: %d matches, next %v, %v; want the two read files' first two lines each", len(res.Matches), res.Next, err)
	}
}

// TestGrepLongLineMoreNext: a long line's matches past its last window
// come through the match's moreNext, page after page along the line,
// each match once, in order; the grep's own next is left as it was.
func TestGrepLongLineMoreNext(t *testing.T) {
	line := []byte(strings.Repeat("x", 400_000))
	var want []int
	for p := 10; p+8 < len(line); p += 1500 {
		copy(line[p:], "useState")
		want = append(want, p+1)
	}
	svc := newService(t, map[string]string{"package.json": `{"name":"paged"}`, "dist/index.min.js": string(line) + "\nuseState\n"})
	res, err := svc.Grep(t.Context(), explore.Request{Action: "grep", PackageName: "paged", Version: "1.0.0", Pattern: "useState", MaxBytes: explore.MinAnswerBytes})
	if err != nil || len(res.Matches) == 0 || res.Matches[0].MoreNext == nil {
		t.Fatalf("grep = %+v, %v; want a first line with moreNext", res, err)
	}
	var got []int
	columns := func(m explore.GrepMatch) {
		for _, c := range append([]int{m.Column}, func() (cs []int) {
			for _, w := range m.Windows {
				cs = append(cs, w.Column)
			}
			return cs
		}()...) {
			got = append(got, c)
		}
	}
	m := res.Matches[0]
	columns(m)
	pages := 1
	for next := m.MoreNext; next != nil; pages++ {
		if next.Cursor == "" || next.Version != "1.0.0" || next.Include != nil {
			t.Fatalf("moreNext %+v: want the version pinned and a line cursor", next)
		}
		more, err := svc.Grep(t.Context(), *next)
		if err != nil || len(more.Matches) != 1 || more.Matches[0].Line != 1 {
			t.Fatalf("page %d: %+v, %v; want line 1's matches", pages+1, more, err)
		}
		if b, _ := json.Marshal(more); len(b) > explore.MinAnswerBytes {
			t.Errorf("page %d is %d bytes, over its budget", pages+1, len(b))
		}
		m = more.Matches[0]
		columns(m)
		if (m.MoreNext == nil) != (more.Next == nil) {
			t.Fatalf("page %d: moreNext %v but next %v", pages+1, m.MoreNext, more.Next)
		}
		next = m.MoreNext
	}
	// The windows are 512 bytes, so each shows one match: every match
	// is some window's.
	if fmt.Sprint(got) != fmt.Sprint(want) || pages < 3 {
		t.Errorf("%d pages gave columns\n%v\nwant\n%v", pages, got, want)
	}
}

// TestGrepContextLinesCutWithAMarker: a context line longer than the
// line window is cut as read cuts a line, with a marker naming the read
// that goes on with it; a context line that fits has none.
func TestGrepContextLinesCutWithAMarker(t *testing.T) {
	long := strings.Repeat("y", 600)
	svc := newService(t, map[string]string{"package.json": `{"name":"paged"}`, "a.js": long + "\nshort\nhit\n" + long + "é\n"})
	two := 2
	res, err := svc.Grep(t.Context(), explore.Request{Action: "grep", PackageName: "paged", Version: "1.0.0", Pattern: "hit", ContextLines: &two})
	if err != nil || len(res.Matches) != 1 {
		t.Fatalf("grep = %+v, %v", res, err)
	}
	m := res.Matches[0]
	want := []string{long[:512] + " [… line cut at 512 of 600 bytes; read the rest with offset=1, column=513]", "short"}
	if fmt.Sprint(m.Before) != fmt.Sprint(want) {
		t.Errorf("before %q\nwant %q", m.Before, want)
	}
	if want := long[:512] + " [… line cut at 512 of 602 bytes; read the rest with offset=4, column=513]"; len(m.After) != 1 || m.After[0] != want {
		t.Errorf("after %q\nwant %q", m.After, want)
	}
}

// TestGrepPlaceCountsEveryPage: the first page of a cut grep says how many
// matching lines and files the grep has in all, and that is what its
// pages give: a same-bytes entry's lines counted, include applied, the
// count split over searches when one search's max-matches of files cannot
// hold it, made after the page or beside it; later pages carry the same
// totals.
func TestGrepPlaceCountsEveryPage(t *testing.T) {
	files, _ := pagedFiles()
	for i := range 6 { // copies of one declaration: folded on the pages, counted in the place
		files[fmt.Sprintf("types/copy-%d.d.ts", i)] = files["dist/cjs/file-001.d.ts"]
	}
	defer explore.SetBesideAfter(0)()    // a count beside starts at once
	for _, beside := range []int{0, 4} { // the count after the page, or beside it
		svc, _ := newServiceReg(t, files, func(c *config.Config) {
			c.GrepCountTime = 0                      // exact: no time bound
			c.DefaultMaxMatches, c.MaxMatches = 7, 7 // a count of 80-odd files takes many searches
			c.GrepCountsBeside = beside
		})
		started := explore.BesideStarts()
		placeOnEveryPage(t, svc)
		if n := explore.BesideStarts() - started; (beside == 0) != (n == 0) {
			t.Errorf("grep-counts-beside %d: %d counts started beside their pages", beside, n)
		}
	}
}

func placeOnEveryPage(t *testing.T, svc *explore.Service) {
	for _, include := range [][]string{nil, {"*.d.ts", "*.js"}} {
		r := explore.Request{Action: "grep", PackageName: "paged", Version: "1.0.0", Pattern: "hit", Include: include, MaxBytes: explore.MinAnswerBytes}
		pages := walk(t, func(r explore.Request) (*explore.GrepResult, error) { return svc.Grep(t.Context(), r) }, r, explore.MinAnswerBytes,
			func(g *explore.GrepResult) explore.Answer { return g.Answer })
		lines, inFiles := 0, map[string]bool{}
		for _, g := range pages {
			for _, m := range g.Matches {
				inFiles[m.File] = true
				if m.SameBytesAs != "" {
					lines += m.MatchingLines
				} else {
					lines++
				}
			}
		}
		if len(pages) < 2 {
			t.Fatalf("include %v: %d page; want a cut grep", include, len(pages))
		}
		for i, g := range pages {
			if p := g.Place; p == nil || p.Lines != lines || p.Files != len(inFiles) || p.AtLeast {
				t.Errorf("include %v, page %d: place %+v; want %d lines in %d files, exact", include, i+1, g.Place, lines, len(inFiles))
			}
		}
	}
}
