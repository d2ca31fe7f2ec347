package closest

import (
	"slices"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b        string
		bound, want int
	}{
		{"kitten", "sitting", 10, 3},
		{"api.resizeobserverr", "api.resizeobserver", 5, 1},
		{"", "abc", 5, 3},
		{"abc", "abc", 0, 0},
		{"abcdef", "uvwxyz", 2, 3}, // gives up past the bound
		{"a", "abcdefgh", 3, 4},
	} {
		if got := Distance(tc.a, tc.b, tc.bound); got != tc.want {
			t.Errorf("Distance(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.bound, got, tc.want)
		}
	}
}

func TestStrings(t *testing.T) {
	paths := []string{"dist/index.d.ts", "dist/index.js", "src/index.ts", "README.md", "dist/esm/index.d.ts"}
	for _, tc := range []struct {
		s    string
		want []string
	}{
		{"index.d.ts", []string{"dist/index.d.ts", "dist/esm/index.d.ts"}}, // the name in another folder
		{"dist/indx.d.ts", []string{"dist/index.d.ts", "dist/index.js"}},   // a typo, nearest first
		{"Readme.md", []string{"README.md"}},                               // case
		{"zzzzzzzz", nil},
	} {
		if got := Strings(tc.s, paths, 2); !slices.Equal(got, tc.want) {
			t.Errorf("Strings(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
}
