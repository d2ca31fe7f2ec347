package pathglob

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

func TestMatch(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
		"too many wildcards":       {strings.Repeat("*a", 33), strings.Repeat("?", 32)},
		"not UTF-8":                {"a\xffb"},
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

// TestLimitErrorsNameTheFlag: a refusal by a limit names the setting as
// an operator sets it (--max-glob-…), not the Go field.
func TestLimitErrorsNameTheFlag(t *testing.T) {
	t.Parallel()
	lim := DefaultLimits()
	for flag, patterns := range map[string][]string{
		"--max-glob-patterns":      make([]string, lim.MaxPatterns+1),
		"--max-glob-pattern-bytes": {strings.Repeat("a", lim.MaxPatternBytes+1)},
		"--max-glob-brace-groups":  {strings.Repeat("{a,b}", lim.MaxBraceGroups+1)},
		"--max-glob-wildcards":     {strings.Repeat("*a", lim.MaxWildcards+1)},
	} {
		if _, err := Compile(patterns, lim); err == nil || !strings.Contains(err.Error(), "(setting "+flag+")") {
			t.Errorf("refusal = %v, want it to name %s", err, flag)
		}
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

// expandAll writes out every brace group of p, as doublestar reads them.
func expandAll(p string) []string {
	out := []string{p}
	walk(p, func(i int) int {
		if p[i] != '{' {
			return i
		}
		end := matchingBrace(p, i)
		out = nil
		for _, a := range alternatives(p[i+1 : end]) {
			out = append(out, expandAll(p[:i]+a+p[end+1:])...)
		}
		return -1
	})
	return out
}

// realPath reports whether path could name a file in a package: not
// empty, no empty segment, no leading or trailing slash.
func realPath(path string) bool {
	return path != "" && path[0] != '/' && path[len(path)-1] != '/' && !strings.Contains(path, "//")
}

// FuzzMatch checks the compiled matcher against doublestar.Match, the
// reference, on every pattern doublestar reads consistently: where
// doublestar's answer for a pattern differs from its answers for the
// pattern's brace expansions ("a*{,}" does not match "a" though "a*"
// does), doublestar contradicts itself and the pattern is skipped.
func FuzzMatch(f *testing.F) {
	seeds := [][2]string{
		{"dist/**/*.d.ts", "dist/a/b.d.ts"}, {"**", "a/b"}, {"a/**", "a"}, {"a/**/", "a/b/"},
		{"a***", "a"}, {"*/**", "ab"}, {"{a,b}/*.js", "b/x.js"}, {"{a/,b}**/c", "bx/c"},
		{"[!a-c]?", "d/"}, {"[\\]-]", "]"}, {"**/{x,{y,z}}", "q/z"}, {"*.{js,ts}", "a.ts"},
		{"{*,*}{*,*}{*,*}***", "abc"}, {"a/**/b/**", "a/b"}, {"**/*", "a"}, {"\\*a", "*a"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, p, path string) {
		if len(p) > 40 || len(path) > 40 || p == "" || p[0] == '!' || p[0] == '/' || !realPath(path) {
			return
		}
		m, err := Compile([]string{p}, DefaultLimits())
		if err != nil {
			return
		}
		want, err := doublestar.Match(p, path)
		if err != nil {
			return
		}
		expanded := false
		for _, e := range expandAll(p) {
			if strings.HasSuffix(e, "/") {
				// Names a directory. doublestar's "a**/" matches "a" and
				// "x/**/" matches "x" when the name ends right there, but
				// not when an earlier star or doublestar could have eaten
				// more ("*a**/" and "xaa", "**/*/**/" and "0/0"): no
				// reading of its own is consistent with that.
				return
			}
			if ok, _ := doublestar.Match(e, path); ok {
				expanded = true
				break
			}
		}
		if expanded != want {
			return // doublestar disagrees with itself
		}
		if got := m.Match(path); got != want {
			t.Fatalf("Match(%q, %q) = %v, doublestar says %v ", p, path, got, want)
		}
	})
}

// TestBombIsLinear guards issue 11's glob bomb: brace groups of stars and
// a long run of stars. doublestar rebuilt the pattern for every brace
// alternative of every path (2^8 strings per Match); the compiled matcher
// allocates nothing per path, and answers as doublestar does.
func TestBombIsLinear(t *testing.T) {
	bomb := strings.Repeat("{*,*}", 8) + strings.Repeat("*", 400)
	m, err := Compile([]string{bomb, bomb + "x"}, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"index.js", "dist/index.js", "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x"} {
		want, _ := doublestar.Match(bomb, p)
		if got := m.Match(p); got != want {
			t.Errorf("Match(%q) = %v, doublestar says %v", p, got, want)
		}
		if n := testing.AllocsPerRun(10, func() { m.Match(p) }); n != 0 {
			t.Errorf("Match(%q) allocates %v times per call", p, n)
		}
	}
}

// TestSelectStopsWhenCancelled guards the work going on after the client
// left: Select looks at its context between paths.
func TestSelectStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	m, err := Compile([]string{"**/*.js"}, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	paths := make([]string, 10*checkEvery)
	for i := range paths {
		paths[i] = "a.js"
	}
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	got, err := Select(ctx, m, paths, func(p string) string {
		if calls++; calls == checkEvery/2 {
			cancel()
		}
		return p
	})
	if !errors.Is(err, context.Canceled) || len(got) > checkEvery {
		t.Fatalf("Select after cancel: %d paths, %v; want at most %d and context.Canceled", len(got), err, checkEvery)
	}
}

func TestExpandedBytesBounded(t *testing.T) {
	t.Parallel()
	lim := DefaultLimits()
	lim.MaxExpandedBytes = 4096
	// 2^8 distinct alternatives next to stars, each ~300 bytes written out.
	p := strings.Repeat("{a*,b*}", 8) + strings.Repeat("x", 250)
	if _, err := Compile([]string{p}, lim); !errors.Is(err, ErrBadPattern) || !strings.Contains(err.Error(), "--max-glob-expanded-bytes") {
		t.Fatalf("Compile = %v, want ErrBadPattern naming --max-glob-expanded-bytes", err)
	}
}
