package explore_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/app"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// newService is a wired pkgscope (embedded store) on a fake registry
// that has published files as "paged" 1.0.0.
func newService(t *testing.T, files map[string]string) *explore.Service {
	t.Helper()
	svc, _ := newServiceReg(t, files)
	return svc
}

// newServiceReg is newService and its fake registry.
// Each of set changes the mirror's configuration.
func newServiceReg(t *testing.T, files map[string]string, set ...func(*config.Config)) (*explore.Service, *fakeregistry.Registry) {
	t.Helper()
	reg := fakeregistry.New(t)
	reg.ServeSearch()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.ProjectDir = t.TempDir()
	for _, f := range set {
		f(&cfg)
	}
	empty := filepath.Join(t.TempDir(), "npmrc")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"npm_config_registry": reg.URL(), "NPM_CONFIG_USERCONFIG": empty, "NPM_CONFIG_GLOBALCONFIG": empty, "HOME": t.TempDir()}
	a, err := app.New(t.Context(), cfg, slog.New(slog.DiscardHandler), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if files != nil {
		reg.Publish("paged", "1.0.0", tarballtest.Package(t, files))
	}
	return a.Service, reg
}

// pagedFiles is a package of 120 files in nested folders; every source
// holds "hit" on several lines, some files many times (past the per-file
// cap), with declarations, bundles and docs mixed in path order.
func pagedFiles() (map[string]string, map[string][]int) {
	files := map[string]string{"package.json": `{"name":"paged"}`}
	hits := map[string][]int{}
	for i := range 120 {
		dir := []string{"dist/esm/icons", "dist/cjs", "src/lib/deep/er", "docs", "dist/compiled/chunks"}[i%5]
		ext := []string{".js", ".d.ts", ".ts", ".md", ".min.js"}[i%5]
		name := fmt.Sprintf("%s/file-%03d%s", dir, i, ext)
		var b strings.Builder
		n := 1 + i%4
		if i%17 == 0 {
			n = 40 // past the per-file cap
		}
		for l := 1; l <= n*3; l++ {
			if l%3 == 0 {
				fmt.Fprintf(&b, "const hit%d = %q; // <generic & escaped>\n", l, name)
				hits[name] = append(hits[name], l)
			} else {
				fmt.Fprintf(&b, "line %d of %s\n", l, name)
			}
		}
		files[name] = b.String()
	}
	return files, hits
}

// walk follows next from first, checking each page against the budget,
// and returns the pages.
func walk[R any](t *testing.T, do func(explore.Request) (*R, error), first explore.Request, budget int, answer func(*R) explore.Answer) []*R {
	t.Helper()
	var pages []*R
	req := first
	for range 10_000 {
		res, err := do(req)
		if err != nil {
			t.Fatalf("page %d (%+v): %v", len(pages)+1, req, err)
		}
		if b, _ := json.Marshal(res); len(b) > budget {
			t.Errorf("page %d is %d bytes, over its budget of %d", len(pages)+1, len(b), budget)
		}
		pages = append(pages, res)
		a := answer(res)
		if a.Next == nil {
			if a.Truncated && a.TruncatedBy == explore.TruncMaxBytes {
				t.Fatalf("page %d cut by maxBytes without next", len(pages))
			}
			return pages
		}
		if a.Next.Version != "1.0.0" || a.Next.Action != first.Action {
			t.Fatalf("next %+v does not pin the version or keep the action", a.Next)
		}
		req = *a.Next
	}
	t.Fatal("next never ends")
	return nil
}

// TestNextVisitsEverythingOnce: for list, glob, read and grep, the pages
// next leads through hold exactly the items of the whole answer (asked
// with the largest budget), in the same order, each page within its
// budget; grep's items are exactly the lines holding the pattern.
func TestNextVisitsEverythingOnce(t *testing.T) {
	files, hits := pagedFiles()
	var long strings.Builder
	for l := 1; l <= 3000; l++ {
		fmt.Fprintf(&long, "export declare function f%d<T extends A & B>(x: T): \"q\";\n", l)
	}
	files["dist/long.d.ts"] = long.String()
	// Generated files, ranked after every pass over the read ones.
	for i, name := range []string{"dist/cjs/file-001.js.map", "dist/esm/file-000.js.map", "tsconfig.tsbuildinfo"} {
		var b strings.Builder
		for l := 1; l <= 8+20*i; l++ {
			fmt.Fprintf(&b, "%q: \"hit%d\",\n", name, l)
			hits[name] = append(hits[name], l)
		}
		files[name] = b.String()
	}
	// Files with the same bytes as another: in the same tier, and in a
	// tier after the first's (which sorts first by path), one past the
	// per-file cap. A content answer gives each once, then one entry per
	// copy; following next must still reach every line.
	for copied, orig := range map[string]string{"dist/esm/file-051.d.mts": "dist/cjs/file-051.d.ts", "docs/copy-of-017.md": "src/lib/deep/er/file-017.ts"} {
		files[copied], hits[copied] = files[orig], hits[orig]
	}
	svc := newService(t, files)
	ctx := t.Context()
	const small, big = explore.MinAnswerBytes, 1 << 20
	base := explore.Request{PackageName: "paged", Version: "1.0.0"}

	entries := func(r *explore.ListResult) explore.Answer { return r.Answer }
	for _, tc := range []struct {
		name string
		req  explore.Request
		do   func(explore.Request) (*explore.ListResult, error)
	}{
		{"list every level", explore.Request{Action: "list", Depth: 9}, func(r explore.Request) (*explore.ListResult, error) { return svc.List(ctx, r) }},
		{"list folder", explore.Request{Action: "list", Path: "dist", Depth: 9}, func(r explore.Request) (*explore.ListResult, error) { return svc.List(ctx, r) }},
		{"glob", explore.Request{Action: "glob", Patterns: []string{"**"}}, func(r explore.Request) (*explore.ListResult, error) { return svc.Glob(ctx, r) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.PackageName, req.Version = base.PackageName, base.Version
			req.MaxBytes = big
			whole, err := tc.do(req)
			if err != nil || whole.Truncated {
				t.Fatalf("whole = %+v, %v", whole, err)
			}
			req.MaxBytes = small
			var got []explore.Entry
			pages := walk(t, tc.do, req, small, entries)
			for _, p := range pages {
				got = append(got, p.Entries...)
			}
			if len(pages) < 3 || !slices.Equal(got, whole.Entries) {
				t.Errorf("%d pages of %d entries; want the %d entries of the whole answer", len(pages), len(got), len(whole.Entries))
			}
		})
	}

	t.Run("read", func(t *testing.T) {
		req := base
		req.Action, req.Path, req.Limit, req.MaxBytes = "read", "dist/long.d.ts", 20_000, small
		var content []string
		pages := walk(t, func(r explore.Request) (*explore.ReadResult, error) { return svc.Read(ctx, r) }, req, small,
			func(r *explore.ReadResult) explore.Answer { return r.Answer })
		for _, p := range pages {
			content = append(content, p.Content)
		}
		want := strings.Split(strings.TrimSuffix(long.String(), "\n"), "\n")
		got := strings.Split(strings.Join(content, "\n"), "\n")
		if len(pages) < 10 || len(got) != len(want) {
			t.Fatalf("%d pages, %d lines; want %d", len(pages), len(got), len(want))
		}
		for i, l := range got {
			if _, text, _ := strings.Cut(l, "\t"); text != want[i] || !strings.HasSuffix(strings.Fields(l)[0], fmt.Sprint(i+1)) {
				t.Fatalf("line %d = %q, want %q", i+1, l, want[i])
			}
		}
	})

	grep := func(r explore.Request) (*explore.GrepResult, error) { return svc.Grep(ctx, r) }
	for _, mode := range []string{"content", "files_with_matches", "count"} {
		for _, order := range []string{"", "path"} {
			t.Run("grep "+mode+" "+order, func(t *testing.T) {
				req := base
				req.Action, req.Pattern, req.OutputMode, req.Sort, req.MaxBytes = "grep", "hit", mode, order, big
				whole, err := grep(req)
				if err != nil || whole.Truncated {
					t.Fatalf("whole = %+v, %v", whole.Answer, err)
				}
				req.MaxBytes = small
				var got, all []string
				pages := walk(t, grep, req, small, func(r *explore.GrepResult) explore.Answer { return r.Answer })
				for _, p := range pages {
					got = append(got, grepItems(p)...)
				}
				all = grepItems(whole)
				if len(pages) < 3 || !slices.Equal(got, all) {
					t.Errorf("%d pages of %d items; want the %d of the whole answer", len(pages), len(got), len(all))
				}
				got = expandSameBytes(t, got)
				// Against the files themselves.
				var want []string
				for f, lines := range hits {
					switch mode {
					case "content":
						for _, l := range lines {
							want = append(want, fmt.Sprintf("%s:%d", f, l))
						}
					case "count":
						want = append(want, fmt.Sprintf("%s:%d", f, len(lines)))
					default:
						want = append(want, f)
					}
				}
				sort.Strings(want)
				sorted := slices.Clone(got)
				sort.Strings(sorted)
				if !slices.Equal(sorted, want) {
					t.Errorf("%d items, want %d: every matching line exactly once", len(sorted), len(want))
				}
				if order == "" && !strings.Contains(got[0], ".d.ts") {
					t.Errorf("first item %s: declarations come first", got[0])
				}
				if order == "path" && !slices.IsSorted(got) && mode != "content" {
					t.Errorf("sort path: not in path order")
				}
			})
		}
	}
}

func grepItems(r *explore.GrepResult) []string {
	var out []string
	for _, m := range r.Matches {
		if m.SameBytesAs != "" {
			out = append(out, fmt.Sprintf("%s=%s:%d", m.File, m.SameBytesAs, m.MatchingLines))
			continue
		}
		out = append(out, fmt.Sprintf("%s:%d", m.File, m.Line))
	}
	for _, f := range r.Files {
		if r.OutputMode == "count" {
			out = append(out, fmt.Sprintf("%s:%d", f.Path, f.Count))
		} else {
			out = append(out, f.Path)
		}
	}
	return out
}

// expandSameBytes replaces each same-bytes item ("copy=first:n") of
// items with the lines of first under the copy's path, checking that
// there are n of them. first comes before the copy; with a per-file cap,
// its lines past the cap come after it, on a later pass.
func expandSameBytes(t *testing.T, items []string) []string {
	t.Helper()
	var out []string
	for i, it := range items {
		copied, first, ok := strings.Cut(it, "=")
		if !ok {
			out = append(out, it)
			continue
		}
		first, n, _ := strings.Cut(first, ":")
		var lines []string
		if !slices.ContainsFunc(items[:i], func(s string) bool { return strings.HasPrefix(s, first+":") }) {
			t.Errorf("%s: no line of %s before it", it, first)
		}
		for _, other := range items {
			if strings.HasPrefix(other, first+":") {
				lines = append(lines, copied+other[len(first):])
			}
		}
		if fmt.Sprint(len(lines)) != n {
			t.Errorf("%s: %d lines of %s given before it, it says %s", it, len(lines), first, n)
		}
		out = append(out, lines...)
	}
	return out
}

// TestListOfABigPackageIsATree: a list with no depth that would not fit
// its budget as a flat list answers the deepest tree that fits, saying so.
func TestListOfABigPackageIsATree(t *testing.T) {
	files, _ := pagedFiles()
	svc := newService(t, files)
	res, err := svc.List(t.Context(), explore.Request{PackageName: "paged", MaxBytes: explore.MinAnswerBytes})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if res.Depth < 1 || res.Truncated || len(b) > explore.MinAnswerBytes || len(res.Notes) != 1 || res.TotalFiles != len(files) {
		t.Errorf("list = depth %d, truncated %v, %d bytes, notes %q, %d files", res.Depth, res.Truncated, len(b), res.Notes, res.TotalFiles)
	}
	if !slices.ContainsFunc(res.Entries, func(e explore.Entry) bool { return e.Path == "dist/" && e.Type == "folder" && e.Files > 0 }) {
		t.Errorf("no dist/ folder with its file count: %+v", res.Entries)
	}
}

// TestListOfAFileAnswersTheFile: a list whose path is a file (ls FILE)
// answers that file, at any depth, saying to read it (it used to cut the
// file's path past its end and panic).
func TestListOfAFileAnswersTheFile(t *testing.T) {
	svc := newService(t, map[string]string{"package.json": `{"name":"paged"}`, "lib/index.js": "x\n", "lib/index.js.map": "{}"})
	for _, depth := range []int{0, 1, 3} {
		for _, p := range []string{"lib/index.js", "/lib/index.js", "node_modules/paged/lib/index.js"} {
			res, err := svc.List(t.Context(), explore.Request{PackageName: "paged", Path: p, Depth: depth})
			if err != nil {
				t.Fatalf("list %q depth %d: %v", p, depth, err)
			}
			if len(res.Entries) != 1 || res.Entries[0].Path != "lib/index.js" || res.Entries[0].Type != explore.EntryFile || res.TotalFiles != 1 {
				t.Errorf("list %q depth %d = %+v (%d files), want the file alone", p, depth, res.Entries, res.TotalFiles)
			}
			if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "is a file") }) {
				t.Errorf("list %q depth %d: notes %q, want one saying it is a file", p, depth, res.Notes)
			}
		}
	}
}
