package pathglob

import (
	"errors"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	paths := []string{"README.md", "dist/index.js", "dist/index.d.ts", "dist/esm/icons/arrow.d.ts", "src/a.ts", "package.json"}
	cases := []struct {
		name     string
		patterns []string
		want     []string
	}{
		{"none selects all", nil, paths},
		{"doublestar", []string{"dist/**/*.d.ts"}, []string{"dist/index.d.ts", "dist/esm/icons/arrow.d.ts"}},
		{"or-ed", []string{"*.md", "*.json"}, []string{"README.md", "package.json"}},
		{"exclude only", []string{"!dist/**"}, []string{"README.md", "src/a.ts", "package.json"}},
		{"include minus exclude", []string{"dist/**", "!**/*.d.ts"}, []string{"dist/index.js"}},
		{"leading slash", []string{"/src/*.ts"}, []string{"src/a.ts"}},
		{"braces", []string{"{src,dist}/*.{ts,js}"}, []string{"dist/index.js", "dist/index.d.ts", "src/a.ts"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Compile(tc.patterns, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range paths {
				if m.Match(p) {
					got = append(got, p)
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCompileRejects(t *testing.T) {
	lim := DefaultLimits()
	cases := map[string][]string{
		"unclosed bracket":         {"dist/[a"},
		"unclosed brace":           {"dist/{a,b"},
		"empty pattern":            {""},
		"exponential brace groups": {strings.Repeat("{a,b}", 9)},
		"too many alternatives":    {"{a,b,c,d,e,f,g,h}{a,b,c,d,e,f,g,h}{a,b,c,d,e}"},
		"nested alternatives blow": {"{a,{b,c,d,e,f,g,h,i}}{a,{b,c,d,e,f,g,h,i}}{a,{b,c,d,e,f}}"},
		"overlong pattern":         {strings.Repeat("a", lim.MaxPatternBytes+1)},
		"too many patterns":        make([]string, lim.MaxPatterns+1),
	}
	for name, patterns := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Compile(patterns, lim)
			if !errors.Is(err, ErrBadPattern) {
				t.Fatalf("Compile(%q) = %v, want ErrBadPattern", patterns, err)
			}
		})
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{"dist/**/*.d.ts", "!a", "{a,b}", "[a-z]", "\\{", "**/{x,{y,z}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		m, err := Compile([]string{p}, DefaultLimits())
		if err != nil {
			return
		}
		m.Match("dist/index.js")
	})
}
