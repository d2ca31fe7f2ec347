package index

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestFilterTimeCounts guards issue 11's grep whose include globs ran past
// the grep timeout while the answer said truncated:false: the time the
// filter takes counts in the search's, even when it drops every file.
// The filter here waits, on its first call, for a deadline to pass.
func TestFilterTimeCounts(t *testing.T) { inBothForms(t, testFilterTimeCounts) }

func testFilterTimeCounts(t *testing.T, build builder) {
	var docs []Doc
	for i := range 500 {
		docs = append(docs, Doc{Path: fmt.Sprintf("f%03d.js", i), Data: []byte("hit\n")})
	}
	ix := build(t, docs, DefaultBuildLimits())
	ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	first := true
	q := Query{Pattern: "hit", Filter: func(string) bool {
		if first {
			first = false
			<-ctx.Done()
		}
		return false
	}}
	res, err := ix.Search(ctx, q, DefaultSearchLimits())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.TruncatedBy != TruncTimeout {
		t.Fatalf("a search whose filter outlived the deadline answered truncated=%v by %q, want %q", res.Truncated, res.TruncatedBy, TruncTimeout)
	}
}

// TestCandidatesOnlyAsksAboutCandidates: with Query.CandidatesOnly a
// search asks Filter only about the files that may hold a match (so its
// cost follows them, not the file count) and answers the same matches,
// in the same order, with files sharing one body each given.
func TestCandidatesOnlyAsksAboutCandidates(t *testing.T) {
	inBothForms(t, testCandidatesOnlyAsksAboutCandidates)
}

func testCandidatesOnlyAsksAboutCandidates(t *testing.T, build builder) {
	var docs []Doc
	for i := range 300 {
		body := fmt.Sprintf("nothing here %d\n", i)
		switch {
		case i%50 == 7:
			body = fmt.Sprintf("one hit in %d\n", i)
		case i%50 == 8:
			body = "shared hit body\n" // several files, one content
		case i == 9:
			body = "bin\x00hit"
		}
		docs = append(docs, Doc{Path: fmt.Sprintf("f%03d.js", i), Data: []byte(body)})
	}
	ix := build(t, docs, DefaultBuildLimits())
	for _, pattern := range []string{"hit", `h.t`, `\w+`} {
		var asked []string
		q := Query{Pattern: pattern, MaxMatches: 1000, Filter: func(p string) bool { asked = append(asked, p); return p != "f057.js" }}
		want, err := ix.Search(t.Context(), q, DefaultSearchLimits())
		if err != nil {
			t.Fatal(err)
		}
		all := len(asked)
		asked = nil
		q.CandidatesOnly = true
		got, err := ix.Search(t.Context(), q, DefaultSearchLimits())
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := sameMatches(got.Matches, want.Matches); !ok {
			t.Errorf("%q: CandidatesOnly changed the matches: %s", pattern, d)
		}
		if pattern == "hit" && len(asked) != 12 {
			t.Errorf("%q: Filter was asked about %d files (%v), want the 12 holding a hit (of %d)", pattern, len(asked), asked, all)
		}
	}
}

// TestClassesSelectAsFilter: a search whose Classes and ClassMask select
// files (and TallyMask tallies some) answers as one whose Filter selects
// the same files (and Tally tallies them), with and
// without CandidatesOnly, in both index forms, and asks its own Filter
// only about the files in the mask's classes; the table is made once per
// index (one classify call a file), again for another index.
func TestClassesSelectAsFilter(t *testing.T) { inBothForms(t, testClassesSelectAsFilter) }

func testClassesSelectAsFilter(t *testing.T, build builder) {
	var docs []Doc
	for i := range 200 {
		body := fmt.Sprintf("nothing %d\n", i)
		if i%3 != 0 {
			body = fmt.Sprintf("a hit in %d\nand another hit\n", i)
		}
		docs = append(docs, Doc{Path: fmt.Sprintf("f%03d.js", i), Data: []byte(body)})
	}
	ix := build(t, docs, DefaultBuildLimits())
	classified := 0
	class := func(p string) int { // f007.js: 7 % 5; f010.js and the like: none
		classified++
		var n int
		fmt.Sscanf(p, "f%03d.js", &n)
		if n%10 == 0 {
			return -1
		}
		return n % 5
	}
	cs := NewClasses(class)
	for _, mask := range []uint64{0, 1 << 0, 1<<1 | 1<<3, 1<<5 - 1, 1<<64 - 1} {
		for _, candidates := range []bool{false, true} {
			in := func(p string) bool { k := class(p); return k >= 0 && mask&(1<<k) != 0 }
			const tallied = 1<<1 | 1<<4 // files of these classes are counted, not listed
			tally := func(p string) bool { k := class(p); return k >= 0 && tallied&(1<<k) != 0 }
			want, err := ix.Search(t.Context(), Query{Pattern: "hit", MaxMatches: 1000, CandidatesOnly: candidates, Filter: in, Tally: tally}, DefaultSearchLimits())
			if err != nil {
				t.Fatal(err)
			}
			var asked []string
			q := Query{Pattern: "hit", MaxMatches: 1000, CandidatesOnly: candidates, Classes: cs, ClassMask: mask, TallyMask: tallied,
				Filter: func(p string) bool { asked = append(asked, p); return true }}
			got, err := ix.Search(t.Context(), q, DefaultSearchLimits())
			if err != nil {
				t.Fatal(err)
			}
			d, ok := sameMatches(got.Matches, want.Matches)
			for i := range min(len(got.Matches), len(want.Matches)) {
				if got.Matches[i].Count != want.Matches[i].Count {
					d, ok = fmt.Sprintf("%s counted %d lines, want %d", got.Matches[i].File, got.Matches[i].Count, want.Matches[i].Count), false
				}
			}
			if !ok || got.FilesSearched != want.FilesSearched {
				t.Errorf("mask %b, candidatesOnly %v: %s; %d files searched, want %d", mask, candidates, d, got.FilesSearched, want.FilesSearched)
			}
			for _, p := range asked {
				if !in(p) {
					t.Errorf("mask %b: Filter asked about %s, of a class the mask leaves out", mask, p)
				}
			}
		}
	}
	classified = 0
	cs.of(ix)
	if classified != 0 {
		t.Errorf("the table of an index was made again (%d files classified)", classified)
	}
	cs.of(build(t, docs, DefaultBuildLimits()))
	if classified != len(docs) {
		t.Errorf("another index: %d files classified, want %d", classified, len(docs))
	}
}
