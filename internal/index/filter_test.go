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
