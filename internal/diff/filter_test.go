package diff

import (
	"github.com/pkgscope/pkgscope/internal/pathglob"

	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

var filterPaths = []string{
	"package.json", "index.js", "index.d.ts", "README.md", ".npmignore", "lib/a.js", "lib/a.d.ts",
	"lib/sub/b.js", "lib/.hidden/c.js", "library.js", "dist/esm/x.mjs", "dist/cjs/x.cjs", ".github/w.yml",
	"src/[x].js", "a b/c.js", "lib/sub/deep/d.d.ts", "types/index.d.ts", "x.min.js",
}

var filterArgs = [][]string{
	{}, {"lib"}, {"lib/"}, {"./lib"}, {"*.d.ts"}, {"*.js"}, {"lib/*.js"}, {"lib/**"}, {"lib/**/*.js"},
	{"**/*.d.ts"}, {"index.js"}, {"package/index.js"}, {"{lib,dist}/**"}, {"*.{js,mjs}"}, {"?ndex.js"},
	{"lib/[ab].js"}, {"lib/[!a].js"}, {".npmignore"}, {".github"}, {"dist"}, {"*"}, {"**"}, {"lib/*"},
	{"src/\\[x\\].js"}, {"a b"}, {"*.min.js", "README.md"}, {"lib/sub/../a.js"}, {"**/sub/**"},
	{"lib\\a.js"}, {"*.D.TS"}, {"x*"}, {"*/*.js"}, {"lib/**/"}, {"{a,b{c,d}}"}, {".*"}, {"*/"},
}

// TestFilterMatchesLibnpmdiff compares Filter with libnpmdiff's own filter
// (npm's minimatch) on every argument list × path above.
func TestFilterMatchesLibnpmdiff(t *testing.T) {
	t.Parallel()
	in, _ := json.Marshal(map[string]any{"args": filterArgs, "paths": filterPaths})
	cmd := exec.Command("node", "testdata/filter.js")
	cmd.Env = append(cmd.Environ(), "NODE_PATH="+npmNodePath(t))
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node filter.js: %v", err)
	}
	var want [][]bool
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, args := range filterArgs {
		f, err := NewFilter(args, pathglob.DefaultLimits())
		if err != nil {
			t.Errorf("NewFilter(%q): %v", args, err)
			continue
		}
		for j, p := range filterPaths {
			if got := f.Match(p); got != want[i][j] {
				t.Errorf("args %q, path %q: Match = %v, libnpmdiff %v", args, p, got, want[i][j])
			}
		}
	}
}

func TestFilterRefusesExtglobAndBraceBombs(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"+(a|b).js", "lib/@(x|y)", "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"} {
		if _, err := NewFilter([]string{arg}, pathglob.DefaultLimits()); !errors.Is(err, ErrPattern) {
			t.Errorf("NewFilter(%q) = %v, want ErrPattern", arg, err)
		}
	}
}

// FuzzFilter: any argument compiles or fails with ErrPattern, and
// matching never panics.
func FuzzFilter(f *testing.F) {
	for _, args := range filterArgs {
		for _, a := range args {
			f.Add(a, "lib/a.js")
		}
	}
	f.Add("[", ".x")
	f.Add("{,}", "")
	f.Add("\\", "a\\b")
	f.Fuzz(func(t *testing.T, arg, path string) {
		flt, err := NewFilter([]string{arg}, pathglob.DefaultLimits())
		if err != nil {
			if !errors.Is(err, ErrPattern) {
				t.Fatalf("NewFilter(%q): %v, want ErrPattern", arg, err)
			}
			return
		}
		flt.Match(path)
	})
}

// TestFilterLimits: the pattern count, a pattern's length, the expanded
// bytes and the wildcards are the glob settings, named in the error.
func TestFilterLimits(t *testing.T) {
	t.Parallel()
	lim := pathglob.DefaultLimits()
	many := make([]string, lim.MaxPatterns+1)
	for i := range many {
		many[i] = "lib/" + strings.Repeat("x", i+1)
	}
	for _, c := range []struct {
		args    []string
		setting string
	}{
		{many, "--max-glob-patterns"},
		{[]string{strings.Repeat("a", lim.MaxPatternBytes+1)}, "--max-glob-pattern-bytes"},
		{[]string{strings.Repeat("*a", 70)}, "--max-glob-wildcards"},
		{[]string{strings.Repeat("{a,b}", 7) + strings.Repeat("x", 200)}, "--max-glob-expanded-bytes"},
	} {
		_, err := NewFilter(c.args, lim)
		if !errors.Is(err, ErrPattern) || !strings.Contains(err.Error(), c.setting) {
			t.Errorf("%d args of %d bytes: %v, want ErrPattern naming %s", len(c.args), len(c.args[0]), err, c.setting)
		}
	}
	if _, err := NewFilter(many[:lim.MaxPatterns], lim); err != nil {
		t.Errorf("%d patterns: %v", lim.MaxPatterns, err)
	}
}

// TestFilterManyGlobstars: "**" segments that all fail on a deep path
// are tried once per depth, not once per way of spreading them over the
// path (which here would be more than 10^12 tries).
func TestFilterManyGlobstars(t *testing.T) {
	t.Parallel()
	flt, err := NewFilter([]string{strings.Repeat("**/a/", 20) + "b"}, pathglob.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat("a/", 60) + "c"
	if flt.Match(deep) {
		t.Errorf("matched %q", deep)
	}
	if !flt.Match(strings.Repeat("a/", 60) + "b") {
		t.Error("does not match a path ending in b")
	}
}
