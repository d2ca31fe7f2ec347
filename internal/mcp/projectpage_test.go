package mcp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/mcp"
	pkgproject "github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// TestProjectAnswersKeepThePagingContract: a project's list, glob and grep
// answers page as a package's do (explore's page.go): the same header
// (truncated, truncatedBy, next), every page within its byte budget as
// JSON and as MCP text, and following next from the first page visits
// every file and every match exactly once, with maxMatchesPerFile too.
func TestProjectAnswersKeepThePagingContract(t *testing.T) {
	m := newMirror(t)
	const pkgs = 8
	wantFiles := map[string]bool{}
	wantMatches := map[string]bool{}
	entries := []string{`"": {"dependencies": {"p0": "1.0.0", "p1": "1.0.0"}}`}
	for i := range pkgs {
		name := fmt.Sprintf("p%d", i)
		var index, types strings.Builder
		for l := 1; l <= 40; l++ {
			fmt.Fprintf(&index, "export const needle%d_%d = %q; // %s\n", i, l, strings.Repeat("x", 40), name)
		}
		for l := 1; l <= 6; l++ {
			fmt.Fprintf(&types, "export declare const needle%d_%d: string;\n", i, l)
		}
		files := map[string]string{
			"package.json": fmt.Sprintf(`{"name":%q,"version":"1.0.0"}`, name),
			"index.js":     index.String(),
			"lib/a.d.ts":   types.String(),
			"README.md":    "# " + name + "\nno match here\n",
		}
		m.reg.Publish(name, "1.0.0", tarballtest.Package(t, files))
		folders := []string{"node_modules/" + name}
		if i == 3 { // a nested copy too
			folders = append(folders, "node_modules/p2/node_modules/"+name)
		}
		for _, folder := range folders {
			entries = append(entries, fmt.Sprintf(`%q: {"version": "1.0.0"}`, folder))
			for path, body := range files {
				wantFiles[folder+"/"+path] = true
				for l, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
					if strings.Contains(line, "needle") {
						wantMatches[fmt.Sprintf("%s/%s:%d", folder, path, l+1)] = true
					}
				}
			}
		}
	}
	lock := `{"lockfileVersion": 3, "packages": {` + strings.Join(entries, ",") + `}}`
	reg, err := m.app.Projects.Register(t.Context(), pkgproject.Upload{Lockfile: pkgproject.File{Name: "package-lock.json", Content: lock}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.app.Warm.Wait(t.Context(), reg.WarmRequest, nil); err != nil {
		t.Fatal(err)
	}
	cs := inMemory(t, m.app.Explorer, mcp.Options{})

	// follow calls args, then each next, and returns every page's
	// structured answer; it checks each page's size as JSON and as text.
	follow := func(t *testing.T, args map[string]any, budget int) []json.RawMessage {
		t.Helper()
		var pages []json.RawMessage
		for {
			a, _ := json.Marshal(args)
			res := call(t, cs, string(a))
			if res.IsError {
				t.Fatalf("%s: %s", a, text(res))
			}
			b, _ := json.Marshal(res.StructuredContent)
			if len(b) > budget || len(text(res)) > budget {
				t.Errorf("page %d of %s: %d bytes of JSON, %d of text; the budget is %d", len(pages)+1, a, len(b), len(text(res)), budget)
			}
			pages = append(pages, b)
			var head explore.Answer
			if err := json.Unmarshal(b, &head); err != nil {
				t.Fatal(err)
			}
			if head.Project != reg.ID || head.PackageName != "" {
				t.Fatalf("page header %+v: want the project and no package", head)
			}
			if head.Next == nil {
				if head.Truncated {
					t.Errorf("page %d is truncated (%s) with no next", len(pages), head.TruncatedBy)
				}
				return pages
			}
			if !head.Truncated || head.TruncatedBy == "" {
				t.Errorf("page %d has a next but truncated %v, truncatedBy %q", len(pages), head.Truncated, head.TruncatedBy)
			}
			if len(pages) > 500 {
				t.Fatal("next never ends")
			}
			nb, _ := json.Marshal(head.Next)
			args = map[string]any{}
			_ = json.Unmarshal(nb, &args)
		}
	}
	once := func(t *testing.T, what string, got []string, want map[string]bool) {
		t.Helper()
		seen := map[string]bool{}
		for _, g := range got {
			if seen[g] {
				t.Errorf("%s: %s given twice", what, g)
			}
			seen[g] = true
			if !want[g] {
				t.Errorf("%s: %s is not in the project", what, g)
			}
		}
		for w := range want {
			if !seen[w] {
				t.Errorf("%s: %s never given", what, w)
			}
		}
	}
	const budget = explore.MinAnswerBytes

	// under counts the project's files below folder (ending in "/").
	under := func(folder string) int {
		n := 0
		for f := range wantFiles {
			if strings.HasPrefix(f, folder) {
				n++
			}
		}
		return n
	}
	t.Run("list", func(t *testing.T) {
		// Every file and folder (a depth below the deepest), over pages.
		var got []string
		wantAll := map[string]bool{}
		for f := range wantFiles {
			wantAll[f] = true
			for i, c := range f {
				if c == '/' {
					wantAll[f[:i+1]] = true
				}
			}
		}
		pages := follow(t, map[string]any{"project": reg.ID, "action": "list", "depth": 99, "maxBytes": budget}, budget)
		for _, b := range pages {
			var a pkgproject.ListAnswer
			_ = json.Unmarshal(b, &a)
			if !a.Complete || a.TotalFiles != len(wantFiles) || a.Depth != 99 {
				t.Errorf("list page: complete %v, totalFiles %d, depth %d; want true, %d, 99", a.Complete, a.TotalFiles, a.Depth, len(wantFiles))
			}
			for _, e := range a.Entries {
				got = append(got, e.Path)
				if e.Type == explore.EntryFolder && e.Files != under(e.Path) {
					t.Errorf("list: folder %s counts %d files, holds %d", e.Path, e.Files, under(e.Path))
				}
			}
		}
		if len(pages) < 2 {
			t.Errorf("the list fit one page of %d bytes; the test wants several", budget)
		}
		once(t, "list", got, wantAll)
	})
	t.Run("list without depth", func(t *testing.T) {
		// As a package's list: the files do not fit the budget, so the
		// answer is the deepest tree that does, with a note; next pages
		// through that tree, and its entries cover every file once.
		pages := follow(t, map[string]any{"project": reg.ID, "action": "list", "maxBytes": budget}, budget)
		var first pkgproject.ListAnswer
		_ = json.Unmarshal(pages[0], &first)
		if first.Depth == 0 || len(first.Notes) == 0 {
			t.Fatalf("list without depth: depth %d, notes %q; want a tree summary saying so", first.Depth, first.Notes)
		}
		seen := map[string]bool{}
		covered := 0
		for _, b := range pages {
			var a pkgproject.ListAnswer
			_ = json.Unmarshal(b, &a)
			for _, e := range a.Entries {
				if seen[e.Path] {
					t.Errorf("list without depth: %s given twice", e.Path)
				}
				seen[e.Path] = true
			}
		}
		for p := range seen {
			parent := p[:strings.LastIndexByte(strings.TrimSuffix(p, "/"), '/')+1]
			if seen[parent] {
				continue // counted in its folder
			}
			if strings.HasSuffix(p, "/") {
				covered += under(p)
			} else if wantFiles[p] {
				covered++
			}
		}
		if covered != len(wantFiles) {
			t.Errorf("list without depth to %d: its top entries cover %d files of %d", first.Depth, covered, len(wantFiles))
		}
	})
	t.Run("list path and depth", func(t *testing.T) {
		var a pkgproject.ListAnswer
		b := follow(t, map[string]any{"project": reg.ID, "action": "list", "path": "node_modules/p2", "depth": 1}, 1<<20)
		_ = json.Unmarshal(b[0], &a)
		var got []string
		for _, e := range a.Entries {
			got = append(got, e.Path)
		}
		want := "[node_modules/p2/README.md node_modules/p2/index.js node_modules/p2/lib/ node_modules/p2/node_modules/ node_modules/p2/package.json]"
		if fmt.Sprint(got) != want || a.Path != "node_modules/p2" || a.TotalFiles != under("node_modules/p2/") {
			t.Errorf("list node_modules/p2 to depth 1: path %q, %d files, entries %v; want %s", a.Path, a.TotalFiles, got, want)
		}
	})
	t.Run("glob", func(t *testing.T) {
		want := map[string]bool{}
		for f := range wantFiles {
			if strings.HasSuffix(f, ".d.ts") {
				want[f] = true
			}
		}
		var got []string
		for _, b := range follow(t, map[string]any{"project": reg.ID, "action": "glob", "patterns": []string{"**/*.d.ts"}, "maxBytes": budget}, budget) {
			var a pkgproject.ListAnswer
			_ = json.Unmarshal(b, &a)
			for _, e := range a.Entries {
				got = append(got, e.Path)
			}
		}
		once(t, "glob", got, want)
	})
	t.Run("grep content", func(t *testing.T) {
		var got []string
		var order []string
		pages := follow(t, map[string]any{"project": reg.ID, "action": "grep", "pattern": "needle", "maxBytes": budget}, budget)
		for _, b := range pages {
			var a pkgproject.GrepAnswer
			_ = json.Unmarshal(b, &a)
			for _, mt := range a.Matches {
				got = append(got, fmt.Sprintf("%s:%d", mt.File, mt.Line))
				if len(order) == 0 || order[len(order)-1] != folderOf(mt.File) {
					order = append(order, folderOf(mt.File))
				}
			}
		}
		if len(pages) < 5 {
			t.Errorf("grep took %d pages of %d bytes; the test wants many", len(pages), budget)
		}
		once(t, "grep", got, wantMatches)
		if len(order) < 2 || order[0] != "node_modules/p0" || order[1] != "node_modules/p1" {
			t.Errorf("folders in answer order %v: want the direct dependencies p0, p1 first", order)
		}
	})
	t.Run("grep no match", func(t *testing.T) {
		// As a package's grep: nothing found says what to try next.
		for _, mode := range []string{"content", "count"} {
			pages := follow(t, map[string]any{"project": reg.ID, "action": "grep", "pattern": "needle_nowhere", "outputMode": mode}, 1<<20)
			var a pkgproject.GrepAnswer
			_ = json.Unmarshal(pages[0], &a)
			if len(pages) != 1 || len(a.Notes) != 1 || !strings.HasPrefix(a.Notes[0], "no match in ") || !strings.Contains(a.Notes[0], "caseInsensitive: true") {
				t.Errorf("%s: %d pages, notes %q; want one page with the no-match note", mode, len(pages), a.Notes)
			}
		}
	})
	t.Run("grep files_with_matches", func(t *testing.T) {
		want := map[string]bool{}
		for mt := range wantMatches {
			want[mt[:strings.LastIndexByte(mt, ':')]] = true
		}
		var got []string
		for _, b := range follow(t, map[string]any{"project": reg.ID, "action": "grep", "pattern": "needle", "outputMode": "files_with_matches", "maxBytes": budget}, budget) {
			var a pkgproject.GrepAnswer
			_ = json.Unmarshal(b, &a)
			for _, f := range a.Files {
				got = append(got, f.Path)
			}
		}
		once(t, "files_with_matches", got, want)
	})
	t.Run("grep maxMatches", func(t *testing.T) {
		var got []string
		pages := follow(t, map[string]any{"project": reg.ID, "action": "grep", "pattern": "needle", "maxMatches": 7, "maxBytes": 1 << 20}, 1<<20)
		for _, b := range pages {
			var a pkgproject.GrepAnswer
			_ = json.Unmarshal(b, &a)
			if len(a.Matches) > 7 {
				t.Errorf("a page of maxMatches 7 holds %d", len(a.Matches))
			}
			for _, mt := range a.Matches {
				got = append(got, fmt.Sprintf("%s:%d", mt.File, mt.Line))
			}
		}
		once(t, "grep maxMatches 7", got, wantMatches)
	})
	t.Run("grep maxMatchesPerFile", func(t *testing.T) {
		// Pass 0 (up to the page cut by maxMatchesPerFile) is an
		// overview: each file's first 3 matching lines; next brings the
		// rest, and the two together are every match once.
		perFile := map[string]int{}
		for mt := range wantMatches {
			perFile[mt[:strings.LastIndexByte(mt, ':')]]++
		}
		for _, maxBytes := range []int{budget, 1 << 20} {
			var got []string
			overview := map[string]int{}
			inOverview := true
			pages := follow(t, map[string]any{"project": reg.ID, "action": "grep", "pattern": "needle", "maxMatchesPerFile": 3, "maxBytes": maxBytes}, maxBytes)
			for _, b := range pages {
				var a pkgproject.GrepAnswer
				_ = json.Unmarshal(b, &a)
				for _, mt := range a.Matches {
					got = append(got, fmt.Sprintf("%s:%d", mt.File, mt.Line))
					if inOverview {
						overview[mt.File]++
					}
				}
				if a.TruncatedBy == "maxMatchesPerFile" {
					inOverview = false
				}
			}
			if inOverview {
				t.Errorf("maxBytes %d: no page ended the overview (truncatedBy maxMatchesPerFile)", maxBytes)
			}
			for f, n := range perFile {
				if overview[f] != min(n, 3) {
					t.Errorf("maxBytes %d: the overview holds %d lines of %s, want %d", maxBytes, overview[f], f, min(n, 3))
				}
			}
			if maxBytes > budget && len(pages) != 2 {
				t.Errorf("maxBytes %d: %d pages, want the overview and the rest", maxBytes, len(pages))
			}
			once(t, fmt.Sprintf("grep maxMatchesPerFile 3, maxBytes %d", maxBytes), got, wantMatches)
		}
	})
	t.Run("grep count", func(t *testing.T) {
		want := map[string]int{}
		for mt := range wantMatches {
			want[folderOf(mt[:strings.LastIndexByte(mt, ':')])]++
		}
		got := map[string]int{}
		for _, b := range follow(t, map[string]any{"project": reg.ID, "action": "grep", "pattern": "needle", "outputMode": "count"}, 32<<10) {
			var a pkgproject.GrepAnswer
			_ = json.Unmarshal(b, &a)
			total := 0
			for _, c := range a.Counts {
				if _, dup := got[c.Path]; dup {
					t.Errorf("count: %s given twice", c.Path)
				}
				got[c.Path] = c.Matches
				total += c.Matches
			}
			if a.PageMatches != total || total == 0 {
				t.Errorf("count: pageMatches %d, the page's counts sum to %d", a.PageMatches, total)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("counts %v, want %v", got, want)
		}
	})
}

// folderOf is the package folder of a project path in this test's tree.
func folderOf(path string) string {
	parts := strings.Split(path, "/")
	for i := len(parts) - 1; i > 0; i-- {
		if parts[i-1] == "node_modules" {
			return strings.Join(parts[:i+1], "/")
		}
	}
	return path
}
