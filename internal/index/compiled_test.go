package index

import (
	"errors"
	"testing"
)

// TestCompiledAcrossIndexes: one Compiled shared by every Search of a
// query over several indexes (a project grep's use) answers what a fresh
// compile does on each, compiles once per query, and a query whose pattern
// or flags changed is compiled again rather than searched with the last
// plan. The same index searched twice in a row evaluates its candidates
// once (a grep page's calls), and finds the files holding them once when
// it visits candidates only, and answers the same.
func TestCompiledAcrossIndexes(t *testing.T) {
	corpora := []struct {
		docs []Doc
		lim  BuildLimits
	}{
		{genCorpus(1, 20, 0), DefaultBuildLimits()},
		{genCorpus(2, 20, 0.995), smallBlocks()},
		{genCorpus(3, 20, 0.9), smallBlocks()},
	}
	ixs := make([]*Index, len(corpora))
	for i, c := range corpora {
		ixs[i] = buildBytes(t, c.docs, c.lim)
	}
	c := new(Compiled)
	for _, pat := range diffPatterns {
		for _, fl := range []struct{ ci, ww bool }{{}, {ci: true}, {ww: true}} {
			q := Query{Pattern: pat, CaseInsensitive: fl.ci, WholeWord: fl.ww, Compiled: c}
			var first *plan
			for i, ix := range ixs {
				want, werr := bruteForce(t, corpora[i].docs, q, corpora[i].lim.BinarySniffBytes)
				got, gerr := search(t, ix, q)
				if werr != nil {
					if !errors.Is(gerr, ErrBadPattern) {
						t.Errorf("%+v on index %d: reference rejects the pattern (%v), Search said %v", q, i, werr, gerr)
					}
					continue
				}
				if gerr != nil {
					t.Errorf("%+v on index %d: %v", q, i, gerr)
					continue
				}
				if msg, ok := sameMatches(got.Matches, want); !ok {
					t.Errorf("%+v on index %d: %s", q, i, msg)
				}
				// Searched again, the index's candidates are the kept ones.
				evals := c.evals
				again, err := search(t, ix, q)
				if msg, ok := sameMatches(again.Matches, want); !ok || err != nil || c.evals != evals {
					t.Errorf("%+v on index %d again (candidates evaluated again: %v): %s %v", q, i, c.evals != evals, msg, err)
				}
				// Visiting candidates only, the files holding them are
				// found once for the kept candidates.
				qc := q
				qc.CandidatesOnly = true
				for range 2 {
					byCand, err := search(t, ix, qc)
					if msg, ok := sameMatches(byCand.Matches, want); !ok || err != nil {
						t.Errorf("%+v on index %d, candidates only: %s %v", qc, i, msg, err)
					}
					if c.cand.cont == nil && !c.cand.units.all {
						t.Errorf("%+v on index %d: the candidates' files were not kept", qc, i)
					}
				}
				if cont := c.cand.cont; cont != nil {
					search(t, ix, qc)
					if &c.cand.cont[0] != &cont[0] {
						t.Errorf("%+v on index %d: the candidates' files were found again", qc, i)
					}
				}
				if i == 0 {
					first = c.p
				} else if c.p != first {
					t.Errorf("%+v: compiled again for index %d", q, i)
				}
			}
		}
	}
}

// TestCompiledFollowsLimits: a plan kept under roomy limits is not reused
// under limits it would break; the pattern is checked again.
func TestCompiledFollowsLimits(t *testing.T) {
	ix := buildBytes(t, genCorpus(1, 5, 0), DefaultBuildLimits())
	c := new(Compiled)
	q := Query{Pattern: "function readSync", Compiled: c}
	if _, err := search(t, ix, q); err != nil {
		t.Fatal(err)
	}
	lim := roomyLimits()
	lim.MaxPatternBytes = 4
	if _, err := ix.Search(t.Context(), q, lim); !errors.Is(err, ErrBadPattern) {
		t.Errorf("a 17-byte pattern under a 4-byte limit with a kept plan: %v, want ErrBadPattern", err)
	}
}
