package explore_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

func correctFiles() map[string]string {
	return map[string]string{
		"package.json":         `{"name":"paged"}`,
		"dist/paged.d.ts":      "export declare function useThing(): void;\n",
		"dist/esm/index.js":    "export function useThing() {}\n",
		"dist/esm/util.d.ts":   "export declare const x: 1;\n",
		"README.md":            "useThing docs\n",
		"package/odd.txt":      "a folder named package\n",
		"src/deep/er/thing.ts": "export const useThing = 1;\n",
	}
}

// TestCorrections: each mistake an agent makes is either read the one way
// it can be (with a note saying so) or answered with what exists nearby.
func TestCorrections(t *testing.T) {
	svc := newService(t, correctFiles())
	ctx := t.Context()
	req := func(action string) explore.Request {
		return explore.Request{Action: action, PackageName: "paged"}
	}

	t.Run("name@spec", func(t *testing.T) {
		r := req("list")
		r.PackageName = "paged@^1"
		res, err := svc.List(ctx, r)
		if err != nil || res.Version != "1.0.0" || res.ResolvedFrom != "range ^1" || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], `version "^1"`) {
			t.Fatalf("list paged@^1 = %+v, %v", res, err)
		}
		r.Version = "2"
		var in *explore.InputError
		if _, err := svc.List(ctx, r); !errors.As(err, &in) || in.Field != "packageName" {
			t.Errorf("paged@^1 with version 2 = %v, want an InputError on packageName", err)
		}
	})

	t.Run("prefixes", func(t *testing.T) {
		for _, p := range []string{"node_modules/paged/dist/paged.d.ts", "package/dist/paged.d.ts"} {
			r := req("read")
			r.Path = p
			res, err := svc.Read(ctx, r)
			if err != nil || res.Path != "dist/paged.d.ts" || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], `"dist/paged.d.ts"`) {
				t.Errorf("read %s = %+v, %v", p, res, err)
			}
		}
		// A real folder named package/ is read as it is.
		r := req("read")
		r.Path = "package/odd.txt"
		if res, err := svc.Read(ctx, r); err != nil || res.Path != "package/odd.txt" || len(res.Notes) != 0 {
			t.Errorf("read package/odd.txt = %+v, %v", res, err)
		}
	})

	t.Run("missing path", func(t *testing.T) {
		for _, tc := range []struct{ path, want string }{
			{"paged.d.ts", "dist/paged.d.ts"},      // the name in another folder
			{"dist/pagd.d.ts", "dist/paged.d.ts"},  // a typo
			{"dist/index.d.ts", "dist/paged.d.ts"}, // a guessed entry point
			{"dist/esm/index.mjs", "dist/esm/index.js"},
			// Nothing near the whole path (lodash-es has no src/): the
			// same name in any folder, then package.json's entry points.
			{"lib/deep/quite/unlike/index.ts", "closest: dist/esm/index.js"},
			{"lib/deep/quite/unlike/zzzzzz.ts", "package.json (its main, module and exports name the entry points)"},
		} {
			r := req("read")
			r.Path = tc.path
			_, err := svc.Read(ctx, r)
			var nf *explore.NotFoundError
			if !errors.As(err, &nf) || !strings.Contains(nf.Hint, tc.want) || explore.Classify(err).Status != http.StatusNotFound {
				t.Errorf("read %s = %v, want a 404 naming %s", tc.path, err, tc.want)
			}
		}
		r := req("list")
		r.Path = "dist/cjs"
		if _, err := svc.List(ctx, r); err == nil || !strings.Contains(err.Error(), "dist/esm") {
			t.Errorf("list dist/cjs = %v, want the closest folder dist/esm", err)
		}
	})

	t.Run("unknown package", func(t *testing.T) {
		if _, err := svc.List(ctx, req("list")); err != nil { // paged is stored: the registry's search and the store both name it
			t.Fatal(err)
		}
		r := req("list")
		r.PackageName = "pagedd"
		_, err := svc.List(ctx, r)
		var nf *explore.NotFoundError
		if !errors.As(err, &nf) || strings.Count(nf.Hint, "paged") != 1 || strings.Contains(err.Error(), "http") {
			t.Errorf("list pagedd = %v, want a 404 naming paged (once) and no URL", err)
		}
	})

	t.Run("glob with no match", func(t *testing.T) {
		for _, tc := range []struct {
			patterns []string
			note     string
		}{
			// find's habit: a name pattern meant for any folder.
			{[]string{"*.d.ts", "!**/esm/**"}, `no path matches: a glob without '/' matches the top level only; ["**/*.d.ts","!**/esm/**"] matches 1 in any folder (e.g. "dist/paged.d.ts")`},
			{[]string{"lib/**"}, "no path of the 7 files matches; the top level holds README.md, dist/, package.json, package/, src/"},
			// A name guessed in the wrong folder, a type the package does not ship.
			{[]string{"src/**/paged.ts"}, `no path matches "src/**/paged.ts"; 1 file named paged.* in other folders: dist/paged.d.ts`},
			{[]string{"**/*.tsx"}, "no file of the 7 files ends in .tsx; the package has .d.ts 2, .js 1, .json 1, .md 1, .ts 1, .txt 1"},
		} {
			r := req("glob")
			r.Patterns = tc.patterns
			res, err := svc.Glob(ctx, r)
			if err != nil || len(res.Entries) != 0 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], tc.note) {
				t.Errorf("glob %q = %+v, %v; want no entry and a note with %q", tc.patterns, res, err, tc.note)
			}
		}
		// Top-level matches, and more below: the answer says so (lucide-react's
		// "*.d.ts" matches two top-level files, not its main declarations).
		r := req("glob")
		r.Patterns = []string{"p*"}
		want := `2 top-level paths match: a glob without '/' matches the top level only; ["**/p*"] matches 3 in any folder (e.g. "dist/paged.d.ts")`
		if res, err := svc.Glob(ctx, r); err != nil || len(res.Entries) != 2 || len(res.Notes) != 1 || res.Notes[0] != want {
			t.Errorf("glob p* = %+v, %v; want package.json, package/ and the note %q", res, err, want)
		}
		// All there is, or the top level asked for: no note.
		for _, p := range []string{"*.md", "*"} {
			r.Patterns = []string{p}
			if res, err := svc.Glob(ctx, r); err != nil || len(res.Entries) == 0 || len(res.Notes) != 0 {
				t.Errorf("glob %s = %+v, %v; want entries and no note", p, res, err)
			}
		}
	})

	t.Run("bad regexp", func(t *testing.T) {
		r := req("grep")
		r.Pattern = "useThing("
		_, err := svc.Grep(ctx, r)
		if err == nil || !strings.Contains(err.Error(), "fixedStrings") || explore.Classify(err).Status != http.StatusBadRequest {
			t.Errorf("grep %q = %v, want a 400 pointing at fixedStrings", r.Pattern, err)
		}
		r.FixedStrings = true
		if res, err := svc.Grep(ctx, r); err != nil || len(res.Matches) != 2 {
			t.Errorf("grep -F %q = %+v, %v", r.Pattern, res, err)
		}
	})

	t.Run("grep with no match", func(t *testing.T) {
		// Each widening the request leaves open is run: the note says what
		// it finds, or that it finds nothing either; only the rest are
		// suggested.
		for _, tc := range []struct {
			r         explore.Request
			want, not []string
		}{
			{explore.Request{Pattern: "useOther"},
				[]string{"no match in 7 files (nor with caseInsensitive: true): the name may not exist in this version. Try a shorter part of the name; or list/glob"},
				[]string{"fixedStrings", "wholeWord", "include", "Try caseInsensitive"}},
			{explore.Request{Pattern: "$useThing()", CaseInsensitive: true},
				[]string{"no match in 7 files (nor with fixedStrings: true): "},
				[]string{"caseInsensitive"}},
			{explore.Request{Pattern: `\$useThing\(`, WholeWord: true, Include: []string{"*.ts"}},
				[]string{"no match in 3 files (nor with caseInsensitive: true, nor without wholeWord, nor without include/exclude): "},
				[]string{"fixedStrings", "Try caseInsensitive"}},
			{explore.Request{Pattern: "12345"}, []string{"no match in 7 files: ", "Try a shorter part"}, []string{"caseInsensitive"}},
			// A widening that matches is the correction itself.
			{explore.Request{Pattern: "usething"},
				[]string{"no match in 7 files as asked; with caseInsensitive: true it matches in 4 files (first dist/paged.d.ts)"},
				[]string{"Try", "may not exist"}},
			{explore.Request{Pattern: "useThing", Include: []string{"*.json"}},
				[]string{"no match in 1 file as asked; without include/exclude (they selected 1 of the 7 files) it matches in 4 files (first dist/paged.d.ts)"},
				[]string{"caseInsensitive", "Try"}},
			{explore.Request{Pattern: "use", WholeWord: true, CaseInsensitive: true},
				[]string{"as asked; without wholeWord it matches in 4 files (first dist/paged.d.ts)"},
				[]string{"Try"}},
		} {
			r := tc.r
			r.Action, r.PackageName = "grep", "paged"
			res, err := svc.Grep(ctx, r)
			if err != nil || len(res.Matches) != 0 || len(res.Notes) != 1 {
				t.Fatalf("grep %q = %+v, %v; want no match and one note", r.Pattern, res, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Notes[0], w) {
					t.Errorf("grep %q: note %q\nwant %q in it", r.Pattern, res.Notes[0], w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(res.Notes[0], n) {
					t.Errorf("grep %q: note %q\nsays %q, which the request already has or was run", r.Pattern, res.Notes[0], n)
				}
			}
		}
		r := req("grep")
		r.Pattern = "useThing"
		if res, err := svc.Grep(ctx, r); err != nil || len(res.Matches) == 0 || len(res.Notes) != 0 {
			t.Errorf("grep useThing = %+v, %v; want matches and no note", res, err)
		}
	})

	t.Run("a widening that matches everywhere stops at widenFiles", func(t *testing.T) {
		files := map[string]string{"package.json": `{"name":"paged"}`}
		for i := range 25 {
			files[fmt.Sprintf("lib/m%02d.js", i)] = "export const useThing = 1;\n"
		}
		r := explore.Request{Action: "grep", PackageName: "paged", Pattern: "usething"}
		res, err := newService(t, files).Grep(ctx, r)
		want := "no match in 26 files as asked; with caseInsensitive: true it matches in at least 20 files (first lib/m00.js)"
		if err != nil || len(res.Notes) != 1 || res.Notes[0] != want {
			t.Errorf("grep usething = %+v, %v; want the note %q", res, err, want)
		}
	})

	t.Run("include that selects nothing", func(t *testing.T) {
		r := req("grep")
		r.Pattern, r.Include = "useThing", []string{"*.tsx"}
		res, err := svc.Grep(ctx, r)
		if err != nil || len(res.Matches) != 0 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "selected none") {
			t.Errorf("grep include *.tsx = %+v, %v", res, err)
		}
	})

	t.Run("folders", func(t *testing.T) {
		r := req("read")
		r.Path = "dist/"
		res, err := svc.Read(ctx, r)
		if err != nil || !res.Folder || !slices.Equal(paths(res.Entries), []string{"dist/esm/", "dist/paged.d.ts"}) || res.Entries[0].Files != 2 {
			t.Errorf("read dist/ = %+v, %v", res, err)
		}
		g := req("glob")
		g.Patterns = []string{"*"}
		lr, err := svc.Glob(ctx, g)
		want := []string{"README.md", "dist/", "package.json", "package/", "src/"}
		if err != nil || !slices.Equal(paths(lr.Entries), want) {
			t.Errorf("glob * = %v, %v; want %v", paths(lr.Entries), err, want)
		}
		l := req("list")
		l.Path, l.Depth = "src", 1
		if lr, err = svc.List(ctx, l); err != nil || !slices.Equal(paths(lr.Entries), []string{"src/deep/"}) || lr.Entries[0].Type != "folder" || lr.TotalFiles != 1 {
			t.Errorf("list src depth 1 = %+v, %v", lr, err)
		}
	})
}

func paths(es []explore.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

// TestGrepModesAndGlobs: outputMode answers files or counts, include
// without a slash matches at any depth (ripgrep's -g), and declarations
// come first unless sort is path.
func TestGrepModesAndGlobs(t *testing.T) {
	svc := newService(t, correctFiles())
	ctx := t.Context()
	grep := func(mut func(*explore.Request)) *explore.GrepResult {
		t.Helper()
		r := explore.Request{Action: "grep", PackageName: "paged", Pattern: "useThing"}
		mut(&r)
		res, err := svc.Grep(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	files := func(res *explore.GrepResult) []string {
		var out []string
		for _, f := range res.Files {
			out = append(out, fmt.Sprintf("%s:%d", f.Path, f.Count))
		}
		for _, m := range res.Matches {
			out = append(out, m.File)
		}
		return out
	}
	cases := []struct {
		name string
		mut  func(*explore.Request)
		want []string
	}{
		{"content, ranked", func(r *explore.Request) {}, []string{"dist/paged.d.ts", "dist/esm/index.js", "src/deep/er/thing.ts", "README.md"}},
		{"content, path order", func(r *explore.Request) { r.Sort = "path" }, []string{"README.md", "dist/esm/index.js", "dist/paged.d.ts", "src/deep/er/thing.ts"}},
		{"files_with_matches", func(r *explore.Request) { r.OutputMode = "files_with_matches" }, []string{"dist/paged.d.ts:0", "dist/esm/index.js:0", "src/deep/er/thing.ts:0", "README.md:0"}},
		{"count", func(r *explore.Request) { r.OutputMode, r.Pattern = "count", "e" }, []string{"dist/esm/util.d.ts:1", "dist/paged.d.ts:1", "dist/esm/index.js:1", "src/deep/er/thing.ts:1", "package.json:1", "README.md:1", "package/odd.txt:1"}},
		{"include without slash", func(r *explore.Request) { r.Include = []string{"*.d.ts"} }, []string{"dist/paged.d.ts"}},
		{"include with slash", func(r *explore.Request) { r.Include = []string{"src/**/*.ts"} }, []string{"src/deep/er/thing.ts"}},
		{"exclude a folder by name", func(r *explore.Request) { r.Exclude = []string{"esm", "deep"} }, []string{"dist/paged.d.ts", "README.md"}},
	}
	for _, tc := range cases {
		if got := files(grep(tc.mut)); !slices.Equal(got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, got, tc.want)
		}
	}
	r := explore.Request{Action: "grep", PackageName: "paged", Pattern: "x", OutputMode: "lines"}
	if _, err := svc.Grep(ctx, r); explore.Classify(err).Status != http.StatusBadRequest {
		t.Errorf("outputMode lines = %v, want a 400", err)
	}
}

// TestCapitalsInANameSuggestLowerCase: the registry refuses a name with
// capitals with 404 or, as the real one does for "@types/Node", 403; both
// answer 404 naming the lower-case name, not an outage advising to check
// the auth token.
func TestCapitalsInANameSuggestLowerCase(t *testing.T) {
	svc, reg := newServiceReg(t, correctFiles())
	reg.Fail("@scope/Paged", http.StatusForbidden, "")
	for _, name := range []string{"Paged", "@scope/Paged"} {
		_, err := svc.List(t.Context(), explore.Request{Action: "list", PackageName: name})
		var nf *explore.NotFoundError
		want := strings.ToLower(name)
		if !errors.As(err, &nf) || !strings.Contains(nf.Hint, fmt.Sprintf("%q", want)) || explore.Classify(err).Status != http.StatusNotFound {
			t.Errorf("list %s = %v, want a 404 suggesting %q", name, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "auth token") {
			t.Errorf("list %s = %v: a refused name is not an auth problem", name, err)
		}
	}
}

// TestReadNextUsesTheCorrectedPath: a read of node_modules/<name>/path
// is answered with a note, and its next page asks for the corrected path,
// so the note is said once rather than on every page.
func TestReadNextUsesTheCorrectedPath(t *testing.T) {
	files := correctFiles()
	files["lib/lines.txt"] = "first\nsecond\nthird\n"
	svc := newService(t, files)
	r := explore.Request{Action: "read", PackageName: "paged", Path: "node_modules/paged/lib/lines.txt", Limit: 1}
	res, err := svc.Read(t.Context(), r)
	if err != nil || len(res.Notes) != 1 || res.Next == nil || res.Next.Path != "lib/lines.txt" {
		t.Fatalf("read %s limit 1 = %+v, %v; want a note and next reading lib/lines.txt", r.Path, res, err)
	}
	again, err := svc.Read(t.Context(), *res.Next)
	if err != nil || len(again.Notes) != 0 || !strings.Contains(again.Content, "second") {
		t.Errorf("next page = %+v, %v; want line 2 and no note", again, err)
	}
}

// TestReadOfALargeFileSaysToGrep: a first read of a file many pages long
// says so and points at grep over that file, once: not on later pages,
// nor when the caller chose the lines.
func TestReadOfALargeFileSaysToGrep(t *testing.T) {
	files := correctFiles()
	var big strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&big, "export declare function f%d(x: number): string;\n", i)
	}
	files["lib/big.d.ts"] = big.String()
	svc := newService(t, files)
	res, err := svc.Read(t.Context(), explore.Request{PackageName: "paged", Path: "lib/big.d.ts"})
	if err != nil || res.Next == nil {
		t.Fatalf("read = %+v, %v; want a first page and next", res, err)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], `grep with include: ["lib/big.d.ts"]`) || !strings.Contains(res.Notes[0], "of 20000 lines") {
		t.Errorf("first page (lines %d-%d of %d, %s) notes %q, want one pointing at grep over the file", res.StartLine, res.EndLine, res.TotalLines, res.TruncatedBy, res.Notes)
	}
	again, err := svc.Read(t.Context(), *res.Next)
	if err != nil || len(again.Notes) != 0 {
		t.Errorf("second page = notes %q, %v; want no note", again.Notes, err)
	}
	chosen, err := svc.Read(t.Context(), explore.Request{PackageName: "paged", Path: "lib/big.d.ts", Limit: 100})
	if err != nil || len(chosen.Notes) != 0 {
		t.Errorf("read limit 100 = notes %q, %v; want no note", chosen.Notes, err)
	}
}

// TestScopeWithoutAt: "types/node" can only mean @types/node (no unscoped
// name holds a "/"): it is read so, with a note, by every action and by
// diff, and a scope that does not exist says what it was read from.
func TestScopeWithoutAt(t *testing.T) {
	svc, reg := newServiceReg(t, nil)
	ctx := t.Context()
	reg.Publish("@types/paged", "1.0.0", tarballtest.Package(t, map[string]string{"package.json": `{"name":"@types/paged"}`, "index.d.ts": "export {};\n"}))
	reg.Publish("@types/paged", "1.0.1", tarballtest.Package(t, map[string]string{"package.json": `{"name":"@types/paged"}`, "index.d.ts": "export declare const x: 1;\n"}))
	const note = `packageName "types/paged" was read as "@types/paged"`

	res, err := svc.List(ctx, explore.Request{Action: "list", PackageName: "types/paged@1.0.0"})
	if err != nil || res.PackageName != "@types/paged" || res.Version != "1.0.0" || len(res.Notes) != 2 || !strings.Contains(res.Notes[1], note) {
		t.Fatalf("list types/paged@1.0.0 = %+v, %v; want @types/paged 1.0.0 with a note", res, err)
	}
	d, err := svc.Diff(ctx, explore.Request{Action: "diff", PackageName: "types/paged", From: "1.0.0", To: "1.0.1"})
	if err != nil || d.PackageName != "@types/paged" || len(d.Notes) != 1 || !strings.Contains(d.Notes[0], note) || !strings.Contains(d.Diff, "+export declare const x") {
		t.Fatalf("diff types/paged = %+v, %v; want @types/paged's diff with a note", d, err)
	}
	_, err = svc.List(ctx, explore.Request{Action: "list", PackageName: "nosuch/pkg"})
	var nf *explore.NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), `"@nosuch/pkg" on the registry (read from "nosuch/pkg")`) {
		t.Errorf("list nosuch/pkg = %v, want a 404 for @nosuch/pkg saying it was read from nosuch/pkg", err)
	}
}

// TestGlobNoMatchNamesDeclarationsFirst: the files named like a glob that
// matched nothing come declarations first and source maps last, as grep
// ranks them, not in path order (next's dist/api/navigation.js.map came
// before dist/client/components/navigation.d.ts).
func TestGlobNoMatchNamesDeclarationsFirst(t *testing.T) {
	svc := newService(t, map[string]string{
		"package.json":            `{"name":"paged"}`,
		"dist/api/nav.js.map":     "{}",
		"dist/api/nav.js":         "export {};\n",
		"dist/client/nav.d.ts":    "export {};\n",
		"dist/client/nav.test.js": "test();\n",
	})
	res, err := svc.Glob(t.Context(), explore.Request{Action: "glob", PackageName: "paged", Patterns: []string{"src/**/nav.ts"}})
	want := `4 files named nav.* in other folders: dist/client/nav.d.ts, dist/api/nav.js, `
	if err != nil || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], want) || !strings.HasSuffix(res.Notes[0], "dist/api/nav.js.map") {
		t.Errorf("glob src/**/nav.ts = %+v, %v; want a note with %q and the map last", res, err, want)
	}
}
