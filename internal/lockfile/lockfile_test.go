package lockfile

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*/deps.golden")

// fixtures are the folders of testdata/ that generate.sh wrote, with the
// format each lockfile must be read as.
var fixtures = []struct {
	dir, file, format string
	workspace         bool // generated with the packages/app workspace
}{
	{"package-lock-v1", "package-lock.json", "package-lock@1", false}, // npm 6 predates workspaces
	{"package-lock-v2", "package-lock.json", "package-lock@2", true},
	{"package-lock-v3", "package-lock.json", "package-lock@3", true},
	{"npm-shrinkwrap-v3", "npm-shrinkwrap.json", "npm-shrinkwrap@3", true},
	{"pnpm-v6", "pnpm-lock.yaml", "pnpm@6", true},
	{"pnpm-v6-single", "pnpm-lock.yaml", "pnpm@6", false},
	{"pnpm-v9", "pnpm-lock.yaml", "pnpm@9", true},
	{"yarn-v1", "yarn.lock", "yarn@1", true},
	{"yarn-berry-v6", "yarn.lock", "yarn-berry@6", true},
	{"yarn-berry-v10", "yarn.lock", "yarn-berry@10", true},
	{"bun-v1", "bun.lock", "bun@1", true},
	{"bun-v2", "bun.lock", "bun@2", true},
	{"package-json", "package.json", "package.json", false},
}

// render prints deps one a line, for golden files and failure messages.
func render(lf *Lockfile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "format %s\n", lf.Format)
	for _, d := range lf.Deps {
		var flags []string
		if d.Direct {
			flags = append(flags, "direct")
		}
		if d.Dev {
			flags = append(flags, "dev")
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Name, d.Version, d.Kind, d.Target, strings.Join(flags, ","), d.Reason)
	}
	return b.String()
}

// TestFixtures replays every lockfile the tools wrote against its golden
// dep list (go test -update rewrites them; review the diff).
func TestFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.dir, func(t *testing.T) {
			lf, err := ParseFile(filepath.Join("testdata", fx.dir, fx.file))
			if err != nil {
				t.Fatal(err)
			}
			if lf.Format != fx.format {
				t.Errorf("Format = %q, want %q", lf.Format, fx.format)
			}
			got := render(lf)
			golden := filepath.Join("testdata", fx.dir, "deps.golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update once)", err)
			}
			if got != string(want) {
				t.Errorf("deps differ from %s:\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}

// TestFixturesAgree checks every lockfile against one explicit answer:
// they were all generated from the same package.json, so they must agree
// on what to warm, on what to skip and why, and on which deps are direct
// and dev, whatever the format.
func TestFixturesAgree(t *testing.T) {
	warm := []string{
		"@tootallnate/once@2.0.1", "debug@4.4.3", "es-errors@1.3.0", "escape-string-regexp@4.0.0",
		"function-bind@1.1.2", "hasown@2.0.4", "is-core-module@2.18.0", "is-number@7.0.0",
		"js-tokens@4.0.0", "left-pad@1.3.0", "loose-envify@1.4.0", "ms@2.0.0", "ms@2.1.3",
		"path-parse@1.0.7", "react-dom@18.3.1", "react@18.3.1", "resolve@1.22.14",
		"scheduler@0.23.2", "supports-preserve-symlinks-flag@1.0.0",
	}
	wsWarm := "is-number@6.0.0" // the packages/app workspace's own
	direct := []string{"@tootallnate/once", "debug", "escape-string-regexp", "git-dep", "is-number", "left", "local-pkg", "ms", "react", "react-dom", "remote-tar", "resolve"}
	dev := []string{"es-errors@1.3.0", "function-bind@1.1.2", "hasown@2.0.4", "is-core-module@2.18.0", "is-number@7.0.0", "path-parse@1.0.7", "resolve@1.22.14", "supports-preserve-symlinks-flag@1.0.0"}
	skipped := map[string]Kind{"git-dep": Git, "local-pkg": File, "remote-tar": Tarball}

	for _, fx := range fixtures {
		if fx.format == "package.json" {
			continue
		}
		t.Run(fx.dir, func(t *testing.T) {
			lf, err := ParseFile(filepath.Join("testdata", fx.dir, fx.file))
			if err != nil {
				t.Fatal(err)
			}
			var gotWarm, gotDirect, gotDev []string
			gotSkipped := map[string]Kind{}
			for _, d := range lf.Deps {
				if name, v, ok := d.Warm(); ok {
					gotWarm = append(gotWarm, name+"@"+v)
					if d.Dev {
						gotDev = append(gotDev, name+"@"+v)
					}
				} else if d.Kind != Workspace {
					gotSkipped[d.Name] = d.Kind
					if d.Reason == "" || d.Target == "" {
						t.Errorf("%s: skipped without a reason or target: %+v", d.Name, d)
					}
				}
				if d.Direct {
					gotDirect = append(gotDirect, d.Name)
				}
				if d.Kind == Alias && (d.Name != "left" || d.Target != "left-pad") {
					t.Errorf("alias %+v, want left → left-pad", d)
				}
			}
			wantWarm := slices.Clone(warm)
			if fx.workspace {
				wantWarm = append(wantWarm, wsWarm)
			}
			for _, s := range []*[]string{&wantWarm, &gotWarm, &gotDirect, &gotDev} {
				slices.Sort(*s)
				*s = slices.Compact(*s)
			}
			if !slices.Equal(gotWarm, wantWarm) {
				t.Errorf("warm:\n got %v\nwant %v", gotWarm, wantWarm)
			}
			if !slices.Equal(gotDirect, direct) {
				t.Errorf("direct:\n got %v\nwant %v", gotDirect, direct)
			}
			if !slices.Equal(gotDev, dev) {
				t.Errorf("dev:\n got %v\nwant %v", gotDev, dev)
			}
			if fmt.Sprint(gotSkipped) != fmt.Sprint(skipped) {
				t.Errorf("skipped = %v, want %v", gotSkipped, skipped)
			}
		})
	}
}

func TestLocked(t *testing.T) {
	locked := map[string]string{
		"ms":                "2.0.0", // the root's, though debug nests 2.1.3
		"debug":             "4.4.3",
		"is-number":         "7.0.0", // the root's, though the workspace has 6.0.0
		"left-pad":          "1.3.0", // through the alias "left"
		"@tootallnate/once": "2.0.1",
		"react-dom":         "18.3.1",
		"resolve":           "1.22.14",
		"scheduler":         "0.23.2", // transitive, but the only version
	}
	notLocked := []string{"git-dep", "local-pkg", "remote-tar", "left", "app", "not-a-dep", ""}
	ranges := map[string]string{"ms": "2.0.0", "debug": "^4.3.4", "is-number": "^7.0.0", "left-pad": "^1.3.0", "@tootallnate/once": "^2.0.0", "react-dom": "^18.2.0", "resolve": "^1.22.0"}

	for _, fx := range fixtures {
		t.Run(fx.dir, func(t *testing.T) {
			lf, err := ParseFile(filepath.Join("testdata", fx.dir, fx.file))
			if err != nil {
				t.Fatal(err)
			}
			want, not := locked, notLocked
			if fx.format == "package.json" {
				want, not = ranges, append(slices.Clone(notLocked), "scheduler")
			}
			for name, v := range want {
				if got, ok := lf.Locked(name); !ok || got != v {
					t.Errorf("Locked(%q) = %q, %v; want %q", name, got, ok, v)
				}
			}
			for _, name := range not {
				if got, ok := lf.Locked(name); ok {
					t.Errorf("Locked(%q) = %q, want not locked", name, got)
				}
			}
		})
	}
}

// TestLockedWithoutManifest: read alone, the formats that do not record
// the root's declarations still answer for direct dependencies, by the
// guess that an entry nothing requires is the root's.
func TestLockedWithoutManifest(t *testing.T) {
	for _, fx := range fixtures {
		if fx.format == "package.json" {
			continue
		}
		t.Run(fx.dir, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", fx.dir, fx.file))
			if err != nil {
				t.Fatal(err)
			}
			lf, err := Parse(fx.file, data)
			if err != nil {
				t.Fatal(err)
			}
			for name, v := range map[string]string{"ms": "2.0.0", "debug": "4.4.3", "left-pad": "1.3.0", "react-dom": "18.3.1"} {
				if got, ok := lf.Locked(name); !ok || got != v {
					t.Errorf("Locked(%q) = %q, %v; want %q", name, got, ok, v)
				}
			}
			if fx.format == "yarn@1" {
				for _, d := range lf.Deps {
					if d.Dev {
						t.Errorf("%s@%s is Dev, but yarn.lock alone does not say", d.Name, d.Version)
					}
				}
			}
		})
	}
}

// TestSniff: a lockfile uploaded under a name that says nothing is read
// as the same format, to the same deps.
func TestSniff(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.dir, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", fx.dir, fx.file))
			if err != nil {
				t.Fatal(err)
			}
			byName, err := Parse(fx.file, data)
			if err != nil {
				t.Fatal(err)
			}
			bySniff, err := Parse("upload", data)
			if err != nil {
				t.Fatal(err)
			}
			want := byName.Format
			if strings.HasPrefix(want, "npm-shrinkwrap@") { // the content is package-lock's
				want = "package-lock@" + strings.TrimPrefix(want, "npm-shrinkwrap@")
			}
			if bySniff.Format != want || !slices.Equal(bySniff.Deps, byName.Deps) {
				t.Errorf("sniffed %s:\n%s\nwant %s:\n%s", bySniff.Format, render(bySniff), want, render(byName))
			}
		})
	}
}

func TestFind(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   map[string]string
		want    string // "" means ErrNoLockfile
		comment string
	}{
		{"nothing", nil, "", ""},
		{"manifest only", map[string]string{"package.json": `{}`}, "package.json", ""},
		{"each lockfile", map[string]string{"package.json": `{}`, "bun.lock": "{}"}, "bun.lock", ""},
		{"shrinkwrap first", map[string]string{"package.json": `{}`, "package-lock.json": "{}", "npm-shrinkwrap.json": "{}"}, "npm-shrinkwrap.json", "npm prefers it"},
		{"fixed order", map[string]string{"package-lock.json": "{}", "yarn.lock": "", "pnpm-lock.yaml": ""}, "package-lock.json", ""},
		{"packageManager wins", map[string]string{"package.json": `{"packageManager": "yarn@4.1.0"}`, "package-lock.json": "{}", "yarn.lock": ""}, "yarn.lock", ""},
		{"packageManager without its lockfile", map[string]string{"package.json": `{"packageManager": "pnpm@9.0.0"}`, "yarn.lock": ""}, "yarn.lock", ""},
		{"binary bun.lockb is not read", map[string]string{"package.json": `{}`, "bun.lockb": "x"}, "package.json", ""},
		{"broken package.json still found", map[string]string{"package.json": `{`, "pnpm-lock.yaml": ""}, "pnpm-lock.yaml", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Find(dir)
			if tc.want == "" {
				if !errors.Is(err, ErrNoLockfile) {
					t.Fatalf("Find = %q, %v; want ErrNoLockfile", got, err)
				}
				return
			}
			if err != nil || got != filepath.Join(dir, tc.want) {
				t.Fatalf("Find = %q, %v; want %s", got, err, tc.want)
			}
		})
	}
	t.Run("a directory named like a lockfile", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "package-lock.json"), 0o755); err != nil {
			t.Fatal(err)
		}
		if got, err := Find(dir); !errors.Is(err, ErrNoLockfile) {
			t.Fatalf("Find = %q, %v; want ErrNoLockfile", got, err)
		}
	})
}

func TestLimits(t *testing.T) {
	path := filepath.Join("testdata", "package-lock-v3", "package-lock.json")
	small := Limits{MaxBytes: 1000, MaxNodes: 1000, MaxNesting: 16}
	if _, err := small.ParseFile(path); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ParseFile over MaxBytes: %v, want ErrTooLarge", err)
	}
	if _, err := small.Parse("package-lock.json", make([]byte, 1001)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Parse over MaxBytes: %v, want ErrTooLarge", err)
	}
	if _, err := small.ParseWithManifest("yarn.lock", nil, make([]byte, 1001)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("manifest over MaxBytes: %v, want ErrTooLarge", err)
	}
	for _, lim := range []Limits{{}, {MaxBytes: 1}, {MaxNesting: 1}, {MaxBytes: 1, MaxNesting: 1}} {
		if _, err := lim.Parse("package.json", []byte("{}")); err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Errorf("%+v.Parse: %v, want a named-setting error", lim, err)
		}
	}
	if _, err := ParseFile(filepath.Join("testdata", "no-such-dir", "yarn.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ParseFile of a missing file: %v, want os.ErrNotExist", err)
	}
}

// TestMidsizeAppAgrees: four tools locked the same 396-package app; every
// format must give the same versions to warm, the same dev and direct
// flags, and the same Locked answers.
func TestMidsizeAppAgrees(t *testing.T) {
	type summary struct {
		warm, dev, direct []string
		locked            map[string]string
	}
	read := func(file string) summary {
		lf, err := ParseFile(filepath.Join("testdata", "midsize-app", file))
		if err != nil {
			t.Fatal(err)
		}
		s := summary{locked: map[string]string{}}
		for _, d := range lf.Deps {
			name, v, ok := d.Warm()
			if !ok {
				t.Errorf("%s: %s is not from the registry: %+v", file, d.Name, d)
				continue
			}
			s.warm = append(s.warm, name+"@"+v)
			if d.Dev {
				s.dev = append(s.dev, name+"@"+v)
			}
			if d.Direct {
				s.direct = append(s.direct, name+"@"+v)
			}
		}
		for _, name := range []string{"next", "react", "typescript", "eslint", "@babel/core", "styled-jsx", "semver"} {
			v, _ := lf.Locked(name)
			s.locked[name] = v
		}
		return s
	}
	want := read("package-lock.json")
	if len(want.warm) < 300 || len(want.direct) != 8 || len(want.dev) == 0 {
		t.Fatalf("package-lock.json: %d to warm, %d direct, %d dev", len(want.warm), len(want.direct), len(want.dev))
	}
	for _, file := range []string{"pnpm-lock.yaml", "yarn.lock", "bun.lock"} {
		got := read(file)
		for _, c := range []struct {
			what      string
			got, want []string
		}{{"warm", got.warm, want.warm}, {"dev", got.dev, want.dev}, {"direct", got.direct, want.direct}} {
			slices.Sort(c.got)
			slices.Sort(c.want)
			if !slices.Equal(slices.Compact(c.got), slices.Compact(c.want)) {
				t.Errorf("%s: %s differs from package-lock.json's", file, c.what)
			}
		}
		if fmt.Sprint(got.locked) != fmt.Sprint(want.locked) {
			t.Errorf("%s: Locked %v, package-lock.json %v", file, got.locked, want.locked)
		}
	}
}
