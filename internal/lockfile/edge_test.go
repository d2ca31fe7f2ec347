package lockfile

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// dep is a compact expectation: name, version, kind, target, and "d" /
// "v" flags for Direct and Dev.
type dep struct {
	name, version string
	kind          Kind
	target, flags string
}

func checkDeps(t *testing.T, lf *Lockfile, want []dep) {
	t.Helper()
	var got []dep
	for _, d := range lf.Deps {
		f := ""
		if d.Direct {
			f += "d"
		}
		if d.Dev {
			f += "v"
		}
		got = append(got, dep{d.Name, d.Version, d.Kind, d.Target, f})
		if d.Reason != d.Kind.reason() {
			t.Errorf("%s: Reason %q for kind %v", d.Name, d.Reason, d.Kind)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %d deps:\n%s\nwant %d: %+v", len(got), render(lf), len(want), want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("dep %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestEdgeCases covers syntax the fixtures do not hold, written as each
// tool writes it.
func TestEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name, file, data string
		manifest         string
		want             []dep
	}{
		{
			name: "package-lock: other registry layouts, missing version, tarball declared by URL",
			file: "package-lock.json",
			data: `{"lockfileVersion": 3, "packages": {
				"": {"dependencies": {"a": "^1", "t": "https://files.example/t.tgz", "s": "npm:@scope/real@^2"}},
				"node_modules/a": {"version": "1.0.0", "resolved": "https://corp.example/artifactory/api/npm/npm/a/-/a-1.0.0.tgz"},
				"node_modules/a/node_modules/b": {"version": "2.0.0", "resolved": "https://npm.pkg.example/download/b/2.0.0/abc", "dev": true},
				"node_modules/t": {"version": "0.1.0", "resolved": "https://files.example/t.tgz"},
				"node_modules/s": {"name": "@scope/real", "version": "2.1.0", "resolved": "https://r.example/@scope/real/-/real-2.1.0.tgz"},
				"node_modules/noversion": {},
				"node_modules/tgz": {"version": "1.0.0", "resolved": "file:vendor/tgz-1.0.0.tgz"}
			}}`,
			want: []dep{
				{"a", "1.0.0", Registry, "", "d"},
				{"b", "2.0.0", Registry, "", "v"},
				{"noversion", "", Other, "", ""},
				{"s", "2.1.0", Alias, "@scope/real", "d"},
				{"t", "0.1.0", Tarball, "https://files.example/t.tgz", "d"},
				{"tgz", "1.0.0", File, "file:vendor/tgz-1.0.0.tgz", ""},
			},
		},
		{
			name: "package-lock: links without workspaces, nested in a workspace",
			file: "package-lock.json",
			data: `{"lockfileVersion": 2, "packages": {
				"": {"dependencies": {"l": "file:../l", "w": "^1.0.0"}, "workspaces": ["w"]},
				"../l": {"version": "0.0.1"},
				"w": {"version": "1.0.0", "dependencies": {"x": "link:../x"}},
				"node_modules/l": {"resolved": "../l", "link": true},
				"node_modules/w": {"resolved": "w", "link": true},
				"w/node_modules/x": {"resolved": "x", "link": true}
			}}`,
			want: []dep{
				{"l", "0.0.1", File, "../l", "d"},
				{"w", "1.0.0", Workspace, "w", "d"},
				{"x", "", Link, "x", ""},
			},
		},
		{
			name: "pnpm 9: scoped peers, scoped alias, link outside the workspace, GitHub tarball",
			file: "pnpm-lock.yaml",
			data: `lockfileVersion: '9.0'
importers:
  .:
    dependencies:
      a:
        specifier: ^1.0.0
        version: 1.0.0(@types/react@18.0.0)(react@18.0.0)
      s:
        specifier: npm:@scope/real@^2
        version: '@scope/real@2.0.0'
      out:
        specifier: link:../out
        version: link:../out
      gh:
        specifier: github:u/gh
        version: https://codeload.github.com/u/gh/tar.gz/0123abc
packages:
  a@1.0.0:
    resolution: {integrity: sha512-x}
  '@scope/real@2.0.0':
    resolution: {integrity: sha512-y}
  '@types/react@18.0.0':
    resolution: {integrity: sha512-z}
  react@18.0.0:
    resolution: {integrity: sha512-w}
  gh@https://codeload.github.com/u/gh/tar.gz/0123abc:
    resolution: {tarball: https://codeload.github.com/u/gh/tar.gz/0123abc}
    version: 1.2.3
snapshots:
  a@1.0.0(@types/react@18.0.0)(react@18.0.0):
    dependencies:
      '@types/react': 18.0.0
      react: 18.0.0
  '@scope/real@2.0.0': {}
  '@types/react@18.0.0': {}
  react@18.0.0: {}
  gh@https://codeload.github.com/u/gh/tar.gz/0123abc: {}
`,
			want: []dep{
				{"@types/react", "18.0.0", Registry, "", ""},
				{"a", "1.0.0", Registry, "", "d"},
				{"gh", "1.2.3", Git, "https://codeload.github.com/u/gh/tar.gz/0123abc", "d"},
				{"out", "", Link, "link:../out", "d"},
				{"react", "18.0.0", Registry, "", ""},
				{"s", "2.0.0", Alias, "@scope/real", "d"},
			},
		},
		{
			name: "pnpm 10: a config document before the lockfile",
			file: "pnpm-lock.yaml",
			data: "---\nlockfileVersion: '9.0'\nimporters:\n  .:\n    configDependencies: {}\n---\nlockfileVersion: '9.0'\nimporters:\n  .:\n    devDependencies:\n      a:\n        specifier: ^1\n        version: 1.0.0\npackages:\n  a@1.0.0:\n    resolution: {integrity: sha512-x}\nsnapshots:\n  a@1.0.0: {}\n",
			want: []dep{{"a", "1.0.0", Registry, "", "dv"}},
		},
		{
			name: "pnpm 6: scoped peer suffix",
			file: "pnpm-lock.yaml",
			data: "lockfileVersion: '6.0'\ndependencies:\n  a:\n    specifier: ^1\n    version: 1.0.0(@types/react@18.0.0)\npackages:\n  /a@1.0.0(@types/react@18.0.0):\n    resolution: {integrity: sha512-x}\n    dependencies:\n      '@types/react': 18.0.0\n    dev: false\n  /@types/react@18.0.0:\n    resolution: {integrity: sha512-x}\n    dev: false\n",
			want: []dep{{"@types/react", "18.0.0", Registry, "", ""}, {"a", "1.0.0", Registry, "", "d"}},
		},
		{
			name:     "yarn classic: CRLF, comments, an alias and its target merged, optional deps",
			file:     "yarn.lock",
			data:     "# yarn lockfile v1\r\n\r\n\"left@npm:left-pad@^1\", left-pad@^1.3.0:\r\n  version \"1.3.0\"\r\n  # a comment\r\n  optionalDependencies:\r\n    opt \"1\"\r\n\r\nopt@1:\r\n  version \"1.0.0\"\r\n  integrity sha512-abc/def+ghi==\r\n",
			manifest: `{"dependencies": {"left": "npm:left-pad@^1"}, "devDependencies": {"left-pad": "^1.3.0"}}`,
			want: []dep{
				{"left", "1.3.0", Alias, "left-pad", "d"},
				{"left-pad", "1.3.0", Registry, "", "dv"},
				{"opt", "1.0.0", Registry, "", ""},
			},
		},
		{
			name: "yarn berry: exec, portal, GitHub, scoped alias",
			file: "yarn.lock",
			data: `__metadata:
  version: 8
  cacheKey: 10c0

"e@exec:./gen.js::locator=root%40workspace%3A.":
  version: 0.0.0
  resolution: "e@exec:./gen.js#./gen.js::hash=1&locator=root%40workspace%3A."

"p@portal:../p::locator=root%40workspace%3A.":
  version: 0.0.0-use.local
  resolution: "p@portal:../p::locator=root%40workspace%3A."

"g@https://github.com/u/g.git":
  version: 1.0.0
  resolution: "g@https://github.com/u/g.git#commit=abc"

"s@npm:@scope/real@^2":
  version: 2.0.0
  resolution: "@scope/real@npm:2.0.0"

"root@workspace:.":
  version: 0.0.0-use.local
  resolution: "root@workspace:."
  dependencies:
    e: "exec:./gen.js"
    g: "https://github.com/u/g.git"
    p: "portal:../p"
    s: "npm:@scope/real@^2"
`,
			want: []dep{
				{"e", "0.0.0", Other, "exec:./gen.js#./gen.js", "d"},
				{"g", "1.0.0", Git, "https://github.com/u/g.git#commit=abc", "d"},
				{"p", "0.0.0-use.local", Link, "portal:../p", "d"},
				{"s", "2.0.0", Alias, "@scope/real", "d"},
			},
		},
		{
			name: "bun: comments, GitHub, scoped nesting, a workspace's nested dependency",
			file: "bun.lock",
			data: `{
  // bun writes no comments, but JSONC allows them
  "lockfileVersion": 1,
  "workspaces": {
    "": { "name": "root", "dependencies": { "gh": "github:u/gh", "@a/b": "^1", }, "devDependencies": { "w": "workspace:*", }, },
    "packages/w": { "name": "w", "dependencies": { "@a/b": "^2", }, },
  },
  "packages": {
    "gh": ["gh@github:u/gh#0123abc", {}, "u-gh-0123abc"],
    "@a/b": ["@a/b@1.0.0", "", { "dependencies": { "@c/d": "^1" } }, "sha512-x"],
    "@a/b/@c/d": ["@c/d@1.5.0", "", {}, "sha512-y"],
    "w": ["w@workspace:packages/w"],
    "w/@a/b": ["@a/b@2.0.0", "", {}, "sha512-z"],
  },
}`,
			want: []dep{
				{"@a/b", "1.0.0", Registry, "", "d"},
				{"@a/b", "2.0.0", Registry, "", ""}, // a workspace's own: production
				{"@c/d", "1.5.0", Registry, "", ""},
				{"gh", "", Git, "github:u/gh#0123abc", "d"},
				{"w", "", Workspace, "workspace:packages/w", "dv"},
			},
		},
		{
			name: "package.json: every kind of spec",
			file: "package.json",
			data: `{"dependencies": {"w": "workspace:*", "l": "link:../l", "gh": "u/gh#v1", "any": "", "tag": "latest",
				"s": "npm:@scope/real@^2", "bare": "npm:bare", "p": "./vendor/p.tgz", "x": "exec:x"},
				"peerDependencies": {"react": ">=18"}, "devDependencies": {"tag": "latest"}}`,
			want: []dep{
				{"any", "*", Registry, "", "d"},
				{"bare", "*", Alias, "bare", "d"},
				{"gh", "", Git, "u/gh#v1", "d"},
				{"l", "", Link, "link:../l", "d"},
				{"p", "", File, "./vendor/p.tgz", "d"},
				{"react", ">=18", Registry, "", "d"},
				{"s", "^2", Alias, "@scope/real", "d"},
				{"tag", "latest", Registry, "", "d"},
				{"w", "", Workspace, "workspace:*", "d"},
				{"x", "", Other, "exec:x", "d"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var man []byte
			if tc.manifest != "" {
				man = []byte(tc.manifest)
			}
			lf, err := ParseWithManifest(tc.file, []byte(tc.data), man)
			if err != nil {
				t.Fatal(err)
			}
			checkDeps(t, lf, tc.want)
		})
	}
}

// TestMalformed: broken input of each format is a clear error, never a
// panic or a partial answer.
func TestMalformed(t *testing.T) {
	for _, tc := range []struct {
		file, data string
		want       error
		msg        string
	}{
		{"package-lock.json", `{"lockfileVersion": 3, "packages": {`, ErrInvalid, "line 1"},
		{"package-lock.json", "{\n\"lockfileVersion\": 3,\n\"packages\": []}", ErrInvalid, "line 3: field packages"},
		{"package-lock.json", `{"lockfileVersion": 3, "packages": {"node_modules/a": {"version": 1}}}`, ErrInvalid, "field packages.version"},
		{"package-lock.json", `{"lockfileVersion": 4, "packages": {}}`, ErrUnsupported, "lockfileVersion 4"},
		{"package-lock.json", `{}`, ErrInvalid, "no lockfileVersion"},
		{"package-lock.json", `{"lockfileVersion": 3, "packages": {"node_modules/": {"version": "1.0.0"}}}`, ErrInvalid, "has no name"},
		{"package-lock.json", `{"lockfileVersion": 1, "dependencies": {"a": null}}`, ErrInvalid, "no name or entry"},
		{"npm-shrinkwrap.json", `[]`, ErrInvalid, "cannot unmarshal array"},
		{"pnpm-lock.yaml", "lockfileVersion: '9.0'\nimporters: [", ErrInvalid, "yaml"},
		{"pnpm-lock.yaml", "lockfileVersion: 5.4\n", ErrUnsupported, `"5.4"`},
		{"pnpm-lock.yaml", "importers: {}\n", ErrInvalid, "no lockfileVersion"},
		{"pnpm-lock.yaml", "", ErrInvalid, "empty"},
		{"pnpm-lock.yaml", "lockfileVersion: '9.0'\nimporters:\n  .: 3\n", ErrInvalid, "cannot unmarshal"},
		{"pnpm-lock.yaml", "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      a: {specifier: '1'}\n", ErrInvalid, "no name or version"},
		{"yarn.lock", "a@1:\n   version \"1\"\n", ErrInvalid, "line 2: indentation of 3 spaces"},
		{"yarn.lock", "a@1:\n version \"1\"\n", ErrInvalid, "line 2: indentation of 1 space (yarn"},
		{"yarn.lock", "a@1:\n  version \"1\n", ErrInvalid, "line 2: unterminated string"},
		{"yarn.lock", "<<<<<<< HEAD\na@1:\n", ErrInvalid, "merge conflict"},
		{"yarn.lock", "a@1 \"x\"\n", ErrInvalid, "line 1: top-level key"},
		{"yarn.lock", "a@1:\n  version\n", ErrInvalid, "line 2: unexpected end of line after key"},
		{"yarn.lock", "a@1, :\n", ErrInvalid, "after a comma"},
		{"yarn.lock", "a@1:\n\tversion \"1\"\n", ErrInvalid, "control character"},
		{"yarn.lock", "a:\n  version \"1\"\n", ErrInvalid, "not name@range"},
		{"yarn.lock", "a@1:\n  version \"1\"\n    deep \"x\"\n", ErrInvalid, "unexpected indentation"},
		{"yarn.lock", "__metadata:\n  version: 6\n\"a@npm:1\":\n  version: 1\n", ErrInvalid, "no resolution"},
		{"yarn.lock", "__metadata:\n  version: [\n", ErrInvalid, "yaml"},
		{"yarn.lock", "__metadata:\n  cacheKey: 8\n", ErrInvalid, "no __metadata.version"},
		{"bun.lock", `{"lockfileVersion": 1, "packages": {"a": [1]}}`, ErrInvalid, "not a resolution string"},
		{"bun.lock", `{"lockfileVersion": 1, "packages": {"a": ["a@1.0.0", "", {"dependencies": []}]}}`, ErrInvalid, "package \"a\""},
		{"bun.lock", `{"lockfileVersion": 1, "packages": {"a//b": ["b@1.0.0"]}}`, ErrInvalid, "empty name"},
		{"bun.lock", `{"lockfileVersion": 9}`, ErrUnsupported, "lockfileVersion 9"},
		{"bun.lock", `{"packages": {}}`, ErrInvalid, "no lockfileVersion"},
		{"bun.lock", `{"lockfileVersion": 1,} x`, ErrInvalid, "hujson"},
		{"bun.lockb", "#!/usr/bin/env bun\nbun-lockfile-format-v0\n", ErrUnsupported, "bun.lockb"},
		{"package.json", `{"dependencies": {"a": 1}}`, ErrInvalid, "field dependencies: want string, got JSON number"},
		{"package.json", `{"dependencies": {"": "1"}}`, ErrInvalid, "empty name"},
		{"package.json", "\xef\xbb\xbf{", ErrInvalid, "unexpected end"},
		{"Gemfile.lock", "GEM\n  remote: x\n", ErrUnsupported, "not a lockfile format"},
	} {
		t.Run(tc.file+" "+tc.msg, func(t *testing.T) {
			lf, err := Parse(tc.file, []byte(tc.data))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Parse = %v, %v; want %v", lf, err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), "lockfile: "+tc.file+": ") {
				t.Errorf("error %q: want it to start with the file name and say %q", err, tc.msg)
			}
		})
	}
	t.Run("manifest", func(t *testing.T) {
		if _, err := ParseWithManifest("yarn.lock", nil, []byte("{")); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "package.json") {
			t.Errorf("broken manifest beside yarn.lock: %v", err)
		}
		// pnpm does not need it, so it is not read.
		pnpm := "lockfileVersion: '9.0'\nimporters:\n  .: {}\n"
		if _, err := ParseWithManifest("pnpm-lock.yaml", []byte(pnpm), []byte("{")); err != nil {
			t.Errorf("broken manifest beside pnpm-lock.yaml: %v", err)
		}
	})
}

// Hostile inputs, one test each, named for what they guard.

func TestYarnNestingIsBounded(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 2000; i++ {
		b.WriteString(strings.Repeat("  ", i) + "k:\n")
	}
	_, err := Parse("yarn.lock", []byte(b.String()))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "MaxNesting = 16") {
		t.Fatalf("deep yarn blocks: %v", err)
	}
}

func TestBunBracketNestingIsBounded(t *testing.T) {
	// 1M brackets: hujson would recurse a million frames deep.
	data := `{"lockfileVersion": 1, "x": ` + strings.Repeat("[", 1<<20)
	for _, name := range []string{"bun.lock", "upload"} {
		_, err := Parse(name, []byte(data))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "MaxNesting") {
			t.Fatalf("%s: deep brackets: %v", name, err)
		}
	}
	// Brackets inside strings and comments do not count.
	ok := `{"lockfileVersion": 1, /* [[[[[[[[[[[[[[[[[[[[ */ "packages": {"a": ["a@1.0.0", "[[[[[[[[[[[[[[[[[[[[[\"[[["]}}`
	if _, err := Parse("bun.lock", []byte(ok)); err != nil {
		t.Fatal(err)
	}
}

func TestYAMLAliasBombIsRefused(t *testing.T) {
	// A billion-laughs shaped to the lockfile's own types, so that the
	// decoder must expand it: 1,000 packages that each alias one map of
	// 1,000 dependencies would decode to a million entries from 27 KB.
	// Lockfiles never use anchors, so any alias is refused before
	// decoding.
	var b strings.Builder
	b.WriteString("x: &s 1.0.0\nd: &d {")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "a%d: *s, ", i)
	}
	b.WriteString("}\np: &p {version: *s, resolution: *s, dependencies: *d}\n")
	body := b.String()
	b.Reset()
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "\"/k%d@1.0.0\": *p, ", i)
	}
	keys := b.String()
	for name, data := range map[string]string{
		"pnpm-lock.yaml": "lockfileVersion: '6.0'\n" + body + "packages: {" + keys + "}\n",
		"yarn.lock":      "__metadata: {version: 8}\n" + body + strings.ReplaceAll(strings.ReplaceAll(keys, "\"/", "\""), ", ", "\n"),
	} {
		if _, err := Parse(name, []byte(data)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "YAML alias") {
			t.Errorf("%s alias bomb: %v, want ErrInvalid for a YAML alias", name, err)
		}
	}
}

func TestDeepPackageLockIsAnError(t *testing.T) {
	data := `{"lockfileVersion": 1, "dependencies": ` + strings.Repeat(`{"a": {"version": "1.0.0", "dependencies": `, 20000)
	if _, err := Parse("package-lock.json", []byte(data)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("deep JSON: %v, want ErrInvalid", err)
	}
}

func TestClassifySpec(t *testing.T) {
	for _, tc := range []struct {
		spec      string
		kind      Kind
		aliasName string
		aliasRng  string
	}{
		{"^1.2.3", Registry, "", ""},
		{">=1 <2 || 3.x", Registry, "", ""},
		{"latest", Registry, "", ""},
		{"", Registry, "", ""},
		{"npm:left-pad@^1", Alias, "left-pad", "^1"},
		{"npm:@s/p@1.0.0", Alias, "@s/p", "1.0.0"},
		{"NPM:x", Alias, "x", ""},
		{"npm:", Other, "", ""},
		{"workspace:^", Workspace, "", ""},
		{"link:../x", Link, "", ""},
		{"portal:../x", Link, "", ""},
		{"file:../x", File, "", ""},
		{"./x", File, "", ""},
		{"../x", File, "", ""},
		{"/abs/x", File, "", ""},
		{"~/x", File, "", ""},
		{"x.tgz", File, "", ""},
		{"git://h/r.git#v1", Git, "", ""},
		{"git+ssh://git@h:r.git", Git, "", ""},
		{"git+https://h/r.git", Git, "", ""},
		{"git@github.com:u/r.git", Git, "", ""},
		{"github:u/r", Git, "", ""},
		{"gitlab:u/r", Git, "", ""},
		{"bitbucket:u/r", Git, "", ""},
		{"gist:abc", Git, "", ""},
		{"u/r", Git, "", ""},
		{"u/r#semver:^1", Git, "", ""},
		{"https://github.com/u/r", Git, "", ""},
		{"https://h/x.git", Git, "", ""},
		{"https://h/x-1.0.0.tgz", Tarball, "", ""},
		{"http://127.0.0.1:8/x.tgz", Tarball, "", ""},
		{"https://github.com/u/r/archive/x.tgz", Tarball, "", ""},
		{"exec:./x.js", Other, "", ""},
		{"patch:x@npm%3A1#p", Other, "", ""},
	} {
		kind, an, ar := classifySpec(tc.spec)
		if kind != tc.kind || an != tc.aliasName || ar != tc.aliasRng {
			t.Errorf("classifySpec(%q) = %v, %q, %q; want %v, %q, %q", tc.spec, kind, an, ar, tc.kind, tc.aliasName, tc.aliasRng)
		}
	}
}

func TestKindString(t *testing.T) {
	for k := Registry; k <= Other; k++ {
		if s := k.String(); s == "" || strings.HasPrefix(s, "Kind(") {
			t.Errorf("Kind(%d).String() = %q", k, s)
		}
		if k.Warmable() != (k.reason() == "") {
			t.Errorf("%v: Warmable %v but reason %q", k, k.Warmable(), k.reason())
		}
	}
	if s := Kind(0).String(); s != "Kind(0)" {
		t.Errorf("Kind(0).String() = %q", s)
	}
}
