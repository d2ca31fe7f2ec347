package index

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/race"
)

// genCorpus generates files from fragments chosen to exercise the engine:
// words that patterns look for, case variants (including the Kelvin sign,
// which folds to k), invalid UTF-8, CR, and files whose newline rate
// ranges from every few bytes to none at all, so that lines cross many
// 64-byte blocks.
//
// filler is the chance that a fragment is a filler letter that no pattern
// looks for: high filler makes matches rare, so the index must pick the
// right blocks rather than every block.
func genCorpus(seed uint64, files int, filler float64) []Doc {
	rng := rand.New(rand.NewPCG(seed, 1))
	frags := []string{
		"ab", "ba", "abc", "x", "xy", "yx", "Ab", "AB", "é", "K", "\u212a", "k",
		"\xff", "\xc3", "\xe2\x82", " ", " ", " ", "\t", "_", "-", ".", "(", ")", "{", "}",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "Sync", "function", "function readSync(",
		"useRouter", "\r", "0", "42", "\ufffd",
	}
	var docs []Doc
	for i := range files {
		nlRate := []float64{0, 0.005, 0.05, 0.2, 0.5}[rng.IntN(5)]
		size := rng.IntN(3000)
		if filler > 0 {
			size *= 4
		}
		if i%7 == 0 {
			size = 0
		}
		var sb strings.Builder
		for sb.Len() < size {
			if rng.Float64() < nlRate {
				sb.WriteByte('\n')
				continue
			}
			if rng.Float64() < filler {
				sb.WriteByte("qwzvmnoprt"[rng.IntN(10)])
				continue
			}
			sb.WriteString(frags[rng.IntN(len(frags))])
		}
		text := sb.String()
		switch i % 5 {
		case 1:
			text += "\n"
		case 2:
			text = "\ufeff" + text
		}
		docs = append(docs, Doc{Path: fmt.Sprintf("d%d/f%02d.js", i%3, i), Data: []byte(text)})
	}
	docs = append(docs, Doc{Path: "bin/blob", Data: []byte("ab\x00ab\nab\n")})
	return docs
}

// diffPatterns cover literals (pure, short, and longer than Overlap+3),
// classes, anchors, word boundaries, alternation, bounded and unbounded
// repetition, empty matches, case folding and U+FFFD.
var diffPatterns = []string{
	"ab", "a", "b+a", "a.b", "^ab", "ab$", `\bab\b`, "a[bc]+", "[^a ]+x", "ab|ba", "x*", "",
	"^$", `\Aa`, `b\z`, "(ab){2,}", "é", `\x{212A}`, "k", `a\s+b`, `\w+x`, `c\W`, ".", `\r$`,
	"a.{20}b", "a.{0,100}b", "[a-c]{3}", "(a|b)(c|A)", `\.`, "aaaaaaaaaaaaaaaaaaaaaaaaa", "x{3,}y",
	`\bx`, `_\b`, `\x{FFFD}`, `[\x{FFFD}a]b`, `function\s+\w+Sync`, `use[A-Z]\w+`, `\(\)`, `xy\b`,
	"Sync", "function readSync", `\d+`, `[[:upper:]]b`, `(?s:a.b)`, `(?m:^x)`, `b(?i:AB)`, `\pL{4}`,
	`[^\x00-\x7f]`, `yx|\bab`, `(?U)a+b`, `\Bb`, `^\s*$`, `^(ab|yx)`, `^.{3}$`, `^[^a]`, `^$|x$`,
}

// diffCorpus is one corpus of TestDifferential, built with lim.
type diffCorpus struct {
	name string
	docs []Doc
	lim  BuildLimits
}

func diffCorpora() []diffCorpus {
	return []diffCorpus{
		{"dense", genCorpus(1, 40, 0), DefaultBuildLimits()},
		{"dense/smallBlocks", genCorpus(1, 40, 0), smallBlocks()},
		{"sparse/smallBlocks", genCorpus(2, 40, 0.995), smallBlocks()},
		{"medium/smallBlocks", genCorpus(3, 40, 0.9), smallBlocks()},
	}
}

// diffQueries returns each of diffPatterns with each set of flags.
func diffQueries() []Query {
	var qs []Query
	for _, pat := range diffPatterns {
		for _, fl := range []struct{ ci, ww, fixed bool }{{}, {ci: true}, {ww: true}, {fixed: true}, {ci: true, ww: true}} {
			qs = append(qs, Query{Pattern: pat, CaseInsensitive: fl.ci, WholeWord: fl.ww, FixedStrings: fl.fixed})
		}
	}
	return qs
}

// TestDifferential: Search finds the lines a brute-force scan finds, for
// every pattern of diffPatterns on every corpus, and an index opened from
// its stored form gives the very same Result.
func TestDifferential(t *testing.T) {
	for i, lim := range diffCorpora() {
		docs := lim.docs
		ix, stored, _ := openBoth(t, docs, lim.lim)
		checked := 0
		for _, q := range diffQueries() {
			want, werr := bruteForce(t, docs, q, lim.lim.BinarySniffBytes)
			got, gerr := search(t, ix, q)
			if i == 0 || !race.Enabled { // see inBothFormsUnlessRace
				q.MaxMatches = roomyLimits().MaxMatches // as search asked
				agree(t, lim.name, stored, q, roomyLimits(), got, gerr)
			}
			if werr != nil {
				if !errors.Is(gerr, ErrBadPattern) {
					t.Errorf("%s %+v: reference rejects the pattern (%v), Search said %v", lim.name, q, werr, gerr)
				}
				continue
			}
			if gerr != nil {
				t.Errorf("%s %+v: %v", lim.name, q, gerr)
				continue
			}
			if msg, ok := sameMatches(got.Matches, want); !ok {
				t.Errorf("%s %+v: %s (got %d matches, want %d)", lim.name, q, msg, len(got.Matches), len(want))
			}
			checked++
		}
		if checked < len(diffPatterns)*4 {
			t.Errorf("%s: only %d of %d queries compared", lim.name, checked, len(diffPatterns)*5)
		}
	}
}
