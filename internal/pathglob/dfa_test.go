package pathglob

import (
	"fmt"
	"regexp"
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
