package mcp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/mcp"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// TestBudgetThroughMCP: the text a model reads and the structuredContent
// both fit the request's maxBytes, the text ends with the next request,
// and sending it as the tool's arguments walks every match once.
func TestBudgetThroughMCP(t *testing.T) {
	// Exact totals: the count behind the first page has no time bound.
	m := newMirror(t, func(c *config.Config) { c.GrepCountTime = 0 })
	files := map[string]string{"package.json": `{"name":"many"}`}
	want := 0
	for i := range 40 {
		var b strings.Builder
		for l := range 12 {
			fmt.Fprintf(&b, "export declare const hit%d_%d: Array<Map<string, \"<&>\">>;\n", i, l)
			want++
		}
		files[fmt.Sprintf("dist/types/deep/file-%02d.d.ts", i)] = b.String()
	}
	m.reg.Publish("many", "1.0.0", tarballtest.Package(t, files))
	cs := inMemory(t, m.app.Service, mcp.Options{})
	const budget = explore.MinAnswerBytes
	args := fmt.Sprintf(`{"action":"grep","packageName":"many","pattern":"hit","contextLines":1,"maxBytes":%d}`, budget)
	seen := map[string]bool{}
	last := 0 // the last line the pages before gave
	for page := 1; args != ""; page++ {
		res := call(t, cs, args)
		var g explore.GrepResult
		decode(t, res, &g)
		// Every page of the cut grep says where it sits among all 480.
		if p := g.Place; p == nil || p.First != last+1 || p.Last != last+len(g.Matches) || p.Lines != want || p.Files != 40 || p.AtLeast {
			t.Errorf("page %d: place %+v after line %d, want lines %d-%d of %d in 40 files", page, g.Place, last, last+1, last+len(g.Matches), want)
		} else if say := fmt.Sprintf(", lines %d–%d of %d in all (40 files)", p.First, p.Last, want); !strings.Contains(text(res), say) {
			t.Errorf("page %d text does not say %q:\n%.300s", page, say, text(res))
		}
		last += len(g.Matches)
		structured, _ := json.Marshal(res.StructuredContent)
		if len(text(res)) > budget || len(structured) > budget {
			t.Errorf("page %d: text %d bytes, structuredContent %d, over %d", page, len(text(res)), len(structured), budget)
		}
		for _, mt := range g.Matches {
			k := fmt.Sprintf("%s:%d", mt.File, mt.Line)
			if seen[k] {
				t.Errorf("page %d repeats %s", page, k)
			}
			seen[k] = true
		}
		args = ""
		if g.Next != nil {
			b, _ := json.Marshal(g.Next)
			args = string(b)
			if !strings.HasSuffix(text(res), "call explore_npm with "+args+"]") {
				t.Errorf("page %d text does not end with the next request", page)
			}
		}
		if page > 500 {
			t.Fatal("next never ends")
		}
	}
	if len(seen) != want {
		t.Errorf("%d matches seen, want %d", len(seen), want)
	}
}

// TestMoreNextThroughMCP: a long line's moreNext, sent as the tool's
// arguments as the text gives it, walks the line's matches page by page,
// each page's text and structuredContent within maxBytes.
func TestMoreNextThroughMCP(t *testing.T) {
	m := newMirror(t)
	line := []byte(strings.Repeat("<", 200_000)) // escaped in JSON: 6 bytes each
	n := 0
	for p := 7; p+3 < len(line); p += 900 {
		copy(line[p:], "hit")
		n++
	}
	m.reg.Publish("wide", "1.0.0", tarballtest.Package(t, map[string]string{"package.json": `{"name":"wide"}`, "min.js": string(line)}))
	cs := inMemory(t, m.app.Service, mcp.Options{})
	const budget = explore.MinAnswerBytes
	args := fmt.Sprintf(`{"action":"grep","packageName":"wide","pattern":"hit","maxBytes":%d}`, budget)
	pages, windows := 0, 0
	for args != "" && pages < 1000 {
		pages++
		res := call(t, cs, args)
		var g explore.GrepResult
		decode(t, res, &g)
		structured, _ := json.Marshal(res.StructuredContent)
		if len(text(res)) > budget || len(structured) > budget {
			t.Errorf("page %d: text %d bytes, structuredContent %d, over %d", pages, len(text(res)), len(structured), budget)
		}
		if len(g.Matches) != 1 {
			t.Fatalf("page %d: %d matches, want the one line", pages, len(g.Matches))
		}
		mt := g.Matches[0]
		windows += 1 + len(mt.Windows)
		args = ""
		if mt.MoreNext != nil {
			b, _ := json.Marshal(mt.MoreNext)
			args = string(b)
			if !strings.Contains(text(res), "to see them, a window each, call explore_npm with "+args+"]") {
				t.Errorf("page %d text does not give moreNext:\n%s", pages, text(res))
			}
		}
	}
	// 512-byte windows, a match every 900 bytes: one window each.
	if windows != n || pages < 3 {
		t.Errorf("%d pages, %d windows; want %d windows on several pages", pages, windows, n)
	}
}

// TestGrepCountStopsAtItsTime: the count of all matching lines behind a
// cut grep's first page stops at grep-count-time, and the page then says
// "at least" as many lines and files as it shows, instead of making every
// first page cost a second search of the whole version (next 16.4.6's
// function\s+\w+Sync: 375 ms of count behind a 15 ms page).
func TestGrepCountStopsAtItsTime(t *testing.T) {
	m := newMirror(t, func(c *config.Config) { c.GrepCountTime = time.Nanosecond })
	files := map[string]string{"package.json": `{"name":"many"}`}
	for i := range 40 {
		files[fmt.Sprintf("dist/file-%02d.d.ts", i)] = strings.Repeat(fmt.Sprintf("export declare const hit%d: number;\n", i), 12)
	}
	m.reg.Publish("many", "1.0.0", tarballtest.Package(t, files))
	cs := inMemory(t, m.app.Service, mcp.Options{Structured: true})
	res := call(t, cs, fmt.Sprintf(`{"action":"grep","packageName":"many","pattern":"hit","maxBytes":%d}`, explore.MinAnswerBytes))
	var g explore.GrepResult
	decode(t, res, &g)
	if p := g.Place; p == nil || !p.AtLeast || p.Lines < len(g.Matches) || p.Files < 1 || g.Next == nil {
		t.Fatalf("a cut first page whose count ran out of time: place %+v, %d matches, next %v; want at least the page's own lines", g.Place, len(g.Matches), g.Next)
	}
	if !strings.Contains(text(res), " of at least ") {
		t.Errorf("the page's text does not say \"of at least\":\n%.300s", text(res))
	}
}
