package pathglob

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"
)

// TestDFAAgreesWithRegexp runs translated patterns through the automaton,
// with a cache so small it hands over to the NFA after a few states, and
// through Go's regexp: the answers are the same.
func TestDFAAgreesWithRegexp(t *testing.T) {
	t.Parallel()
	patterns := []string{"dist/**/*.d.ts", "**/[a-z]*/**/*.js", "{a,b}?c/**", "**/*é*", "*/**/x*y*z", "**"}
	paths := []string{"", "a", "dist/x.d.ts", "dist/a/b/c.d.ts", "q/ab/c/d.js", "aac/x", "bbc/y/z", "é", "x/é/q", "u/v/xayaz", "dist/\n.d.ts", "\xff/a.js"}
	for i := range 200 {
		paths = append(paths, fmt.Sprintf("p%d/q%d/r-%d.js", i%7, i%13, i))
	}
	for _, p := range patterns {
		b := budget{bytes: 1 << 20, wildcards: 1 << 20}
		src, err := translate(p, &b)
		if err != nil {
			t.Fatal(err)
		}
		want := regexp.MustCompile(`(?s)^(?:` + src + `)$`)
		d, err := compileDFA(src)
		if err != nil {
			t.Fatal(err)
		}
		d.maxBytes = 8192
		for round := range 2 {
			for _, path := range paths {
				if got := d.match(path); got != want.MatchString(path) {
					t.Errorf("round %d: %q on %q: automaton %v, regexp %v", round, p, path, got, !got)
				}
			}
		}
	}
}

// TestWalkAgreesWithMatch matches a package's tree (files and folders,
// in byte order, then shuffled) through a Walk and through Match, with
// exclusions, patterns that die at a folder, at a '/' and inside a name,
// and a cache so small that the walk sees it dropped and handed to the
// NFA: the answers are the same.
func TestWalkAgreesWithMatch(t *testing.T) {
	t.Parallel()
	var paths []string
	for i := range 300 {
		paths = append(paths, fmt.Sprintf("p%d/q%d/r-%d.js", i%7, i%13, i), fmt.Sprintf("p%d/q%d", i%7, i%13), fmt.Sprintf("p%d", i%7))
	}
	paths = append(paths, "", "a", "p1", "p1/", "p1/q", "é/x/y.d.ts", "x/é/q", "p10/q1/x.js", "dist/\n/a.js", "\xff/a.js")
	slices.Sort(paths)
	paths = slices.Compact(paths)
	shuffled := slices.Clone(paths)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	requests := [][]string{
		{"p1/**"}, {"p1/q1*/*.js"}, {"**/r-1*.js", "!p2/**"}, {"**/*.js", "!**/q1/**"}, {"p[1-3]/q?/r-*"},
		{"**/*é*/**"}, {"*"}, {"**"}, {"!p1/**"}, {"p1/q1"}, {"**/[a-z]*/**/*.js", "{p1,p4}/**/r-*[02468].js"},
	}
	for _, ps := range requests {
		for _, maxBytes := range []int{maxDFABytes, 6000} {
			want, err := Compile(ps, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			for _, order := range [][]string{paths, shuffled} {
				m, _ := Compile(ps, DefaultLimits())
				for _, d := range []*dfa{m.include, m.exclude} {
					if d != nil {
						d.maxBytes = maxBytes
					}
				}
				w := m.Walk()
				for _, p := range order {
					if got := w.Match(p); got != want.Match(p) {
						t.Errorf("%q with a %d-byte cache: Walk.Match(%q) = %v, Match %v", ps, maxBytes, p, got, !got)
					}
				}
			}
		}
	}
}
