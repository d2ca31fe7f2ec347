package index

import (
	"errors"
	"testing"
)

// FuzzSearch: for any pattern and flags, Search never panics and agrees
// with the brute-force line-by-line reference, over a corpus of small
// blocks where lines cross many block boundaries.
func FuzzSearch(f *testing.F) {
	docs := genCorpus(7, 12, 0.6)
	ix := buildBytes(f, docs, smallBlocks())
	for _, p := range diffPatterns {
		f.Add(p, uint8(0))
	}
	f.Add(`(?i)\bAB|k+`, uint8(4))
	f.Add(`a[ab]{16}c`, uint8(1))
	f.Fuzz(func(t *testing.T, pattern string, flags uint8) {
		if len(pattern) > 64 {
			return // keep the reference scan fast
		}
		q := Query{Pattern: pattern, CaseInsensitive: flags&1 != 0, WholeWord: flags&2 != 0, FixedStrings: flags&4 != 0}
		got, err := search(t, ix, q)
		if errors.Is(err, ErrBadPattern) {
			return // includes patterns with \n and over-large programs, which the reference accepts
		}
		want, werr := bruteForce(t, docs, q, DefaultBuildLimits().BinarySniffBytes)
		if werr != nil {
			t.Fatalf("%+v: reference rejects (%v) what Search accepted", q, werr)
		}
		if msg, ok := sameMatches(got.Matches, want); !ok {
			t.Fatalf("%+v: %s", q, msg)
		}
	})
}
