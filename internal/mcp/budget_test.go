package mcp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/mcp"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// TestBudgetThroughMCP: the text a model reads and the structuredContent
// both fit the request's maxBytes, the text ends with the next request,
// and sending it as the tool's arguments walks every match once.
func TestBudgetThroughMCP(t *testing.T) {
	m := newMirror(t)
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
	for page := 1; args != ""; page++ {
		res := call(t, cs, args)
		var g explore.GrepResult
		decode(t, res, &g)
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
