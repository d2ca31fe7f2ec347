package explore

import (
	"encoding/json"
	"math"
	"testing"
)

// TestGrepMatchCost: a match's counted cost is Cost's, for every shape a
// page gives (plain, windows, context, more in the line, a same-bytes
// entry) and for text that encoding/json escapes.
func TestGrepMatchCost(t *testing.T) {
	tricky := "a<b>&c\"d\\e\n\t\r\b\f\x01ünï\u2028\u2029\xff`"
	more := &Request{Action: "grep", PackageName: "p", Version: "1.0.0", Pattern: "x<y", Cursor: "gl3.9:a.js"}
	for _, m := range []GrepMatch{
		{},
		{File: "dist/index.d.ts", Line: 12, Column: 3, Text: "export declare function useRouter(): Router;"},
		{File: tricky, Line: math.MaxInt32, Column: 1, Text: tricky, TextOffset: 100, LineBytes: 2_000_000},
		{File: "a.js", Line: 1, Column: 600, Text: "x", Windows: []GrepWindow{{Column: 900, Text: tricky, TextOffset: 800}, {Column: 5000, Text: "", TextOffset: 0}},
			MoreInLine: 7, MoreColumn: 9000, MoreInLineCapped: true, MoreNext: more},
		{File: "b.js", Line: 4, Column: 2, Text: "", Before: []string{"", tricky}, After: []string{"z"}},
		{File: "c.js", Line: -1, Column: -20, Text: "neg", MatchingLines: 3},
		{File: "copy.d.ts", SameBytesAs: tricky, MatchingLines: 12},
		{File: "copy.d.ts", SameBytesAs: "x", MatchingLines: 0},
	} {
		if got, want := m.cost(), Cost(m); got != want {
			t.Errorf("%+v: cost %d, Cost %d", m, got, want)
		}
	}
	for _, f := range []GrepFile{{}, {Path: tricky}, {Path: "a.js", Count: 12}, {Path: "b", Count: -3}} {
		if got, want := f.cost(), Cost(f); got != want {
			t.Errorf("%+v: cost %d, Cost %d", f, got, want)
		}
	}
}

// FuzzGrepMatchCost holds the counted cost to Cost for any text.
func FuzzGrepMatchCost(f *testing.F) {
	f.Add("dist/index.d.ts", "export <T>", 3, 0, "", "\b\f")
	f.Add("<&>\xff", "\x00\u2028", -1, 7, "same", "")
	f.Fuzz(func(t *testing.T, file, text string, line, offset int, same, context string) {
		for _, m := range []GrepMatch{
			{File: file, Line: line, Column: line + 1, Text: text, TextOffset: offset, LineBytes: offset * 2,
				Windows: []GrepWindow{{Column: offset, Text: context, TextOffset: line}}, Before: []string{context}, After: []string{text, context}},
			{File: file, SameBytesAs: same, MatchingLines: line},
		} {
			if got, want := m.cost(), Cost(m); got != want {
				t.Errorf("%+v: cost %d, Cost %d", m, got, want)
			}
		}
		if g := (GrepFile{Path: file, Count: line}); g.cost() != Cost(g) {
			t.Errorf("%+v: cost %d, Cost %d", g, g.cost(), Cost(g))
		}
	})
}

// TestGrepMatchJSONShape: a same-bytes entry is {file, sameBytesAs,
// matchingLines} alone; a match keeps line and column, and text unless
// its line is empty.
func TestGrepMatchJSONShape(t *testing.T) {
	for _, c := range []struct {
		m    GrepMatch
		want string
	}{
		{GrepMatch{File: "b.d.ts", SameBytesAs: "a.d.ts", MatchingLines: 3}, `{"file":"b.d.ts","sameBytesAs":"a.d.ts","matchingLines":3}`},
		{GrepMatch{File: "a.js", Line: 4, Column: 1, Text: "x<y"}, `{"file":"a.js","line":4,"column":1,"text":"x\u003cy"}`},
		{GrepMatch{File: "a.js", Line: 7, Column: 1}, `{"file":"a.js","line":7,"column":1}`}, // ^$ on an empty line
	} {
		got, err := json.Marshal(c.m)
		if err != nil || string(got) != c.want {
			t.Errorf("%+v: %s (%v), want %s", c.m, got, err, c.want)
		}
	}
}
