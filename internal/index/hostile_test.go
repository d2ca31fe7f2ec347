package index

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/race"
)

// searchAllocBound is the memory bound this package states for one search
// over any index, with default limits apart from the timeout: Go's regexp
// needs memory proportional to the program (at most MaxProgramSize
// instructions), the scanner 4 bytes per candidate block, and the result
// at most MaxOutputBytes (8 MiB). Text is read from the mapping, never
// copied. 16 MiB is what the hostile patterns below must stay under, in
// bytes allocated (which bounds the heap growth from above).
const searchAllocBound = 16 << 20

// TestHostilePatterns: patterns that blow up other engines answer with a
// bounded result (or ErrBadPattern), within the memory bound. codesearch's
// own DFA used 327 MB for a[ab]{16}c on 4 MB of text.
func TestHostilePatterns(t *testing.T) {
	ab := bytes.Repeat([]byte("ab"), 2<<20) // 4 MB, one line
	xs := bytes.Repeat([]byte("x"), 10<<20) // 10 MB, one line
	ix := buildBytes(t, []Doc{{Path: "ab.txt", Data: ab}, {Path: "x.txt", Data: xs}}, DefaultBuildLimits())
	for _, tc := range []struct {
		name    string
		q       Query
		matches int // exact count, or -1 for "none or cut by the timeout"
		bad     bool
	}{
		{"dfa blow-up", Query{Pattern: `a[ab]{16}c`}, -1, false},
		{"dfa blow-up, case folded", Query{Pattern: `(?i)a[ab]{20}c`}, -1, false},
		{"nested counted repetition", Query{Pattern: `(?:[ab]{2,30}){10}c`}, -1, false},
		{"catastrophic backtracking shape", Query{Pattern: `(x+x+)+y`}, -1, false},
		{"empty match on every line", Query{Pattern: `x*`}, 2, false},
		{"empty pattern", Query{Pattern: ``}, 2, false},
		{"match everywhere", Query{Pattern: `[ax]`, MaxMatches: 10_000}, 2, false},
		{"huge repetition count", Query{Pattern: `(a{1000}){1000}`}, 0, true},
		{"repetition over the parser limit", Query{Pattern: `a{100000}`}, 0, true},
		{"program over MaxProgramSize", Query{Pattern: `[ab]{1000}[ab]{1000}[ab]{1000}[ab]{1000}[ab]{1000}c`}, 0, true},
	} {
		// The patterns marked -1 may finish or be cut by the deadline; the
		// 583-instruction one (about 35 s of regexp work on 4 MB) always
		// is. The others must finish: x* matches all of the 10 MB line,
		// which takes Go's regexp about 0.2 s.
		lim := DefaultSearchLimits()
		switch {
		case tc.matches < 0:
			lim.Timeout = 500 * time.Millisecond
		case race.Enabled:
			lim.Timeout = raceTimeout
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := ix.Search(context.Background(), tc.q, lim)
		runtime.ReadMemStats(&after)
		if tc.bad {
			if !errors.Is(err, ErrBadPattern) {
				t.Errorf("%s: err %v, want ErrBadPattern", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		switch {
		case tc.matches >= 0 && len(res.Matches) != tc.matches:
			t.Errorf("%s: %d matches (truncated by %q), want %d", tc.name, len(res.Matches), res.TruncatedBy, tc.matches)
		case tc.matches < 0 && (len(res.Matches) != 0 || (res.Truncated && res.TruncatedBy != TruncTimeout)):
			t.Errorf("%s: %d matches, truncated by %q", tc.name, len(res.Matches), res.TruncatedBy)
		}
		for _, m := range res.Matches {
			if len(m.Text) > lim.MaxLineWindow {
				t.Errorf("%s: %d bytes of text, over MaxLineWindow", tc.name, len(m.Text))
			}
		}
		// Under -race regexp's machine pool drops one in four, so each
		// call may allocate a machine again (48 MB measured over these
		// cases): the bound is checked without it.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > searchAllocBound && !race.Enabled {
			t.Errorf("%s: allocated %d bytes, over the bound of %d", tc.name, alloc, searchAllocBound)
		}
	}
}

// TestTimeoutStopsLongRegexpCall: one regexp call over a 4 MB line that
// would take tens of seconds is interrupted by the deadline: the result
// says "timeout" instead of the request hanging.
func TestTimeoutStopsLongRegexpCall(t *testing.T) { inBothForms(t, testTimeoutStopsLongRegexpCall) }

func testTimeoutStopsLongRegexpCall(t *testing.T, build builder) {
	ab := bytes.Repeat([]byte("ab"), 2<<20)
	ix := build(t, []Doc{{Path: "ab.txt", Data: ab}}, DefaultBuildLimits())
	lim := DefaultSearchLimits()
	lim.Timeout = 50 * time.Millisecond
	res, err := ix.Search(context.Background(), Query{Pattern: `(?:[ab]{2,30}){10}c`}, lim)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.TruncatedBy != TruncTimeout {
		t.Fatalf("result %+v, want truncated by timeout", res)
	}
}
