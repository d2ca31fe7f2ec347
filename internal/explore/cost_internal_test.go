package explore

import (
	"math"
	"testing"
)

// TestEntryCost: the counted cost of a list entry is what Cost, which
// encodes it, says, so that pages cut where they did before.
func TestEntryCost(t *testing.T) {
	for _, e := range []Entry{
		{},
		{Path: "index.js", Type: EntryFile, Bytes: 2640},
		{Path: "dist/", Type: EntryFolder, Bytes: 183_000_000, Files: 8711},
		{Path: "a<b>&c\"d\\e\n\t\x01.js", Type: EntryFile, Bytes: 9},
		{Path: "ünï/\u2028\xff.md", Type: EntryFile, Bytes: 10},
		{Path: "x", Type: EntryFolder, Bytes: -12, Files: -3},
		{Path: "y", Type: EntryFile, Bytes: math.MaxInt64, Files: math.MinInt32},
		{Path: "z", Type: EntryFile, Bytes: math.MinInt64},
	} {
		if got, want := e.cost(), Cost(e); got != want {
			t.Errorf("%+v: cost %d, Cost %d", e, got, want)
		}
	}
}

// FuzzEntryCost holds the counted cost to Cost for any path and sizes.
func FuzzEntryCost(f *testing.F) {
	f.Add("dist/index.d.ts", int64(1234), 0)
	f.Add("<&>\xff", int64(-1), 7)
	f.Fuzz(func(t *testing.T, path string, bytes int64, files int) {
		e := Entry{Path: path, Type: EntryFile, Bytes: bytes, Files: files}
		if got, want := e.cost(), Cost(e); got != want {
			t.Errorf("%+v: cost %d, Cost %d", e, got, want)
		}
	})
}
