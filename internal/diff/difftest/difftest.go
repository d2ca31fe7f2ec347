// Package difftest holds the fixture versions and the npm oracle of the
// diff fidelity tests: pairs of tarballs built in code that cover every
// case npm diff prints differently (added, removed, renamed, binary,
// no newline at end, CRLF, empty, mode-only, identical files), published
// to a fake registry, and `npm diff` itself run against that registry in
// an isolated npm environment (its own cache and empty npmrc files, so
// the user's ~/.npmrc is never read).
package difftest

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// Package is the fixture package's name.
const Package = "diff-fixture"

// Fixture versions: V2 changes V1 in every way the tests cover; V3 has
// the same files as V2 but for package.json's version.
const (
	V1 = "1.0.0"
	V2 = "1.1.0"
	V3 = "1.1.1"
)

func file(name, body string, mode int64) tb.Entry {
	e := tb.File("package/"+name, body)
	e.Header.Mode = mode
	return e
}

func pkgJSON(version string) string {
	return `{"name":"` + Package + `","version":"` + version + "\",\"main\":\"index.js\"}\n"
}

// numbered is n lines "line 1" … with a few changed lines, so that a
// file has several hunks whose context overlaps or not by the option.
func numbered(n int, changed map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := changed[i]; ok {
			b.WriteString(s)
		} else {
			b.WriteString("line ")
			b.WriteString(strings.Repeat("x", i%7))
			b.WriteString("\n")
		}
	}
	return b.String()
}

// big is a file whose diff is longer than a 4 KiB page, so that paging
// cuts inside one file's text: every third of 300 lines changes.
func big(rev int) string {
	var b strings.Builder
	for i := range 300 {
		if i%3 == 0 {
			fmt.Fprintf(&b, "export const value%d = %d; // rev %d\n", i, i*rev, rev)
		} else {
			fmt.Fprintf(&b, "export const value%d = %d;\n", i, i)
		}
	}
	return b.String()
}

var png1 = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01one")
var png2 = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x02two")

func v1(version string) []tb.Entry {
	// Tarball order is not byte order: npm diff lists files in the
	// order of the old tarball, then the new files in the new one's.
	return []tb.Entry{
		file("package.json", pkgJSON(version), 0o644),
		file("lib/index.js", numbered(40, nil), 0o644),
		file("README.md", "# fixture\n\nSome text.\n", 0o644),
		file("removed.js", "module.exports = 'gone'\n", 0o644),
		file("old-name.js", "exports.renamed = true\n", 0o644),
		tb.Bytes("package/logo.png", png1),
		tb.Bytes("package/same.png", png2),
		file("nonl.js", "a\nb\nc", 0o644),
		file("gets-nonl.js", "a\nb\nc\n", 0o644),
		file("crlf.js", "one\r\ntwo\r\nthree\r\n", 0o644),
		file("empty.txt", "", 0o644),
		file("filled.txt", "", 0o644),
		file("emptied.txt", "was here\n", 0o644),
		file("bin/cli.js", "#!/usr/bin/env node\nrequire('../lib')\n", 0o644),
		file("mode-and-body.sh", "echo 1\n", 0o644),
		file("lib/a.d.ts", "export declare function a(x: string): number;\nexport declare const b: 1;\n", 0o644),
		file("spaces.js", "if (x) {\n  return 1;\n}\n", 0o644),
		file("tabs.js", "a\t\nb\n", 0o644),
		file("invalid-utf8.txt", "ok\n\xff\xfe bytes\n\xe2\x82\n", 0o644),
		// Valid UTF-8 holding U+FFFD itself, then an invalid byte in its
		// place: the same text once decoded, so npm prints nothing, though
		// only one body is valid.
		file("replacement-char.txt", "ok \uFFFD\n", 0o644),
		file(".npmignore", "test/\n", 0o644),
		file("unchanged.js", "module.exports = 1\n", 0o644),
		file("LICENSE", "MIT\n", 0o644),
		file("lib/util.js", "exports.util = () => 2\n", 0o755),
		file("big.js", big(0), 0o644),
		file("secrets.js", "const id = '123e4567-e89b-12d3-a456-426614174000'\n"+
			"const token = npm_abcdefghijklmnopqrstuvwxyz0123456789AB\n"+
			"const url = https://user:hunter2@example.test/x\n"+
			"ctl \x01 \x1b[31mred\x1b[0m \x1b] \x7f \u0085 \u009f\n", 0o644),
	}
}

func v2(version string) []tb.Entry {
	return []tb.Entry{
		file("lib/b.d.ts", "export declare function b(): void;\n", 0o644),
		file("package.json", pkgJSON(version), 0o644),
		file("README.md", "# fixture\n\nSome other text.\n", 0o644),
		file("lib/index.js", numbered(40, map[int]string{2: "changed two\n", 9: "changed nine\n", 30: "changed thirty\n"}), 0o644),
		file("new-name.js", "exports.renamed = true\n", 0o644),
		tb.Bytes("package/logo.png", png2),
		tb.Bytes("package/same.png", png2),
		file("nonl.js", "a\nB\nc", 0o644),
		file("gets-nonl.js", "a\nb\nc", 0o644),
		file("crlf.js", "one\r\n2\r\nthree\r\n", 0o644),
		file("empty.txt", "", 0o644),
		file("filled.txt", "now filled\n", 0o644),
		file("emptied.txt", "", 0o644),
		file("bin/cli.js", "#!/usr/bin/env node\nrequire('../lib')\n", 0o755),
		file("mode-and-body.sh", "echo 2\n", 0o755),
		file("lib/a.d.ts", "export declare function a(x: string, y?: number): number;\nexport declare const b: 1;\n", 0o644),
		file("spaces.js", "if (x) {\n    return 1;\n}\n", 0o644),
		file("tabs.js", "a\nb\t\n", 0o644),
		file("invalid-utf8.txt", "ok\n\xfe\xff bytes\n\xe2\x82\n", 0o644),
		file("replacement-char.txt", "ok \xff\n", 0o644),
		file(".npmignore", "test/\ncoverage/\n", 0o644),
		file("lib/util.js", "exports.util = () => 2\n", 0o755),
		file("unchanged.js", "module.exports = 1\n", 0o644),
		file("LICENSE", "MIT\n", 0o644),
		file("docs/added.md", "new doc\n", 0o644),
		file("big.js", big(1), 0o644),
		file("secrets.js", "const id = '123e4567-e89b-12d3-a456-426614174001'\n"+
			"const token = NPM_abcdefghijklmnopqrstuvwxyz0123456789AC\n"+
			"const url = https://user:hunter3@example.test/x url=http://a:b@c HTTP://a:b@c\n"+
			"ctl \x02 \x1b[32mgreen\x1b[0m \x1b] \x7f \u0085 \u009e\n", 0o644),
	}
}

// Tarballs returns the fixture tarballs by version.
func Tarballs(t testing.TB) map[string][]byte {
	t.Helper()
	return map[string][]byte{
		V1: tb.TGZ(t, v1(V1)...),
		V2: tb.TGZ(t, v2(V2)...),
		V3: tb.TGZ(t, v2(V3)...),
	}
}

// Publish publishes V1, V2 and V3 of Package to reg.
func Publish(t testing.TB, reg *fakeregistry.Registry) {
	t.Helper()
	for v, tgz := range Tarballs(t) {
		reg.Publish(Package, v, tgz)
	}
}

// Case is one comparison: a version pair and npm diff's options, given
// both as npm's command-line flags and as the fields of the diff action.
type Case struct {
	Name     string
	From, To string
	// Flags are npm diff's own flags, Paths its path arguments.
	Flags []string
	Paths []string
	// The same options as the diff action takes them.
	NameOnly       bool
	Context        *int
	IgnoreAllSpace bool
	NoPrefix       bool
	SrcPrefix      string
	DstPrefix      string
}

func intp(n int) *int { return &n }

// Cases are the comparisons every fidelity test runs.
func Cases() []Case {
	return []Case{
		{Name: "default", From: V1, To: V2},
		{Name: "reverse", From: V2, To: V1},
		{Name: "name-only", From: V1, To: V2, Flags: []string{"--diff-name-only"}, NameOnly: true},
		{Name: "unified-0", From: V1, To: V2, Flags: []string{"--diff-unified=0"}, Context: intp(0)},
		{Name: "unified-1", From: V1, To: V2, Flags: []string{"--diff-unified=1"}, Context: intp(1)},
		{Name: "unified-10", From: V1, To: V2, Flags: []string{"--diff-unified=10"}, Context: intp(10)},
		{Name: "ignore-all-space", From: V1, To: V2, Flags: []string{"--diff-ignore-all-space"}, IgnoreAllSpace: true},
		{Name: "no-prefix", From: V1, To: V2, Flags: []string{"--diff-no-prefix"}, NoPrefix: true},
		{Name: "prefixes", From: V1, To: V2, Flags: []string{"--diff-src-prefix=old/", "--diff-dst-prefix=new/"},
			SrcPrefix: "old/", DstPrefix: "new/"},
		{Name: "include-folder", From: V1, To: V2, Paths: []string{"lib"}},
		{Name: "include-dts", From: V1, To: V2, Paths: []string{"*.d.ts"}},
		{Name: "include-two", From: V1, To: V2, Paths: []string{"bin/cli.js", "*.png"}},
		{Name: "include-glob", From: V1, To: V2, Paths: []string{"lib/*.js", "{README,docs/added}.md"}},
		{Name: "include-none", From: V1, To: V2, Paths: []string{"nothing-here"}},
		{Name: "identical-but-package-json", From: V2, To: V3},
		{Name: "identical", From: V2, To: V2},
	}
}

// NpmDiff runs `npm diff --diff=Package@from --diff=Package@to` with c's
// flags and paths against registryURL and returns its stdout. npm's cache
// is cacheDir (share one across calls to keep them fast).
func NpmDiff(t testing.TB, registryURL, cacheDir string, c Case) string {
	t.Helper()
	dir := t.TempDir()
	user, global := filepath.Join(dir, "npmrc"), filepath.Join(dir, "global-npmrc")
	for _, f := range []string{user, global} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"diff", "--diff=" + Package + "@" + c.From, "--diff=" + Package + "@" + c.To}
	args = append(args, c.Flags...)
	args = append(args, c.Paths...)
	cmd := exec.Command("npm", args...)
	cmd.Dir = dir
	env := []string{}
	for _, kv := range os.Environ() {
		// The test's own npm settings only: nothing the caller's shell
		// may carry (npm_config_*), and never the user's npmrc.
		if !strings.HasPrefix(strings.ToLower(kv), "npm_config_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env,
		"npm_config_registry="+registryURL,
		"npm_config_cache="+cacheDir,
		"npm_config_userconfig="+user,
		"npm_config_globalconfig="+global,
		"npm_config_update_notifier=false",
		"npm_config_fund=false",
		"npm_config_audit=false",
		"npm_config_color=false",
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("npm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// golden holds what npm diff printed for each case (testdata/NAME.diff).
// Only internal/diff's TestMatchesNpmDiff runs npm itself: it checks npm's
// output against these files (rewriting them with -update) and the
// diff package's text against npm's; every other test (internal/app's
// mirror, REST and paged diffs) compares with Want, so the 16 npm runs
// happen once per test run instead of once per package.
//
//go:embed testdata/*.diff
var golden embed.FS

// GoldenFile is the path of c's golden file from internal/diff, where
// -update writes it.
func GoldenFile(c Case) string { return filepath.Join("difftest", "testdata", c.Name+".diff") }

// Want is what npm diff prints for c, as internal/diff's
// TestMatchesNpmDiff last checked against npm itself.
func Want(t testing.TB, c Case) string {
	t.Helper()
	b, err := golden.ReadFile("testdata/" + c.Name + ".diff")
	if err != nil {
		t.Fatalf("no golden npm diff for case %s (run go test ./internal/diff -run TestMatchesNpmDiff -update): %v", c.Name, err)
	}
	return string(b)
}
