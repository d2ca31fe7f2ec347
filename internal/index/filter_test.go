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
