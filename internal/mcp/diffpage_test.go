package mcp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/diff/difftest"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/mcp"
)

// TestDiffPagesThroughMCP: at the smallest budget, every diff page's
// text and structuredContent fit it; every page's first line gives the
// whole diff's count of files "in all", which files the page shows (a
// page starting inside a file names it) and, on the last, that it is the
// last, so that no page's count reads as the total; following the next
// request each text ends with walks the whole diff.
func TestDiffPagesThroughMCP(t *testing.T) {
	m := newMirror(t)
	difftest.Publish(t, m.reg)
	cs := inMemory(t, m.app.Service, mcp.Options{})
	const budget = explore.MinAnswerBytes
	for _, nameOnly := range []bool{false, true} {
		args := fmt.Sprintf(`{"action":"diff","packageName":%q,"from":%q,"to":%q,"nameOnly":%v,"maxBytes":%d}`,
			difftest.Package, difftest.V1, difftest.V2, nameOnly, budget)
		var whole strings.Builder
		continued := 0
		for page := 1; args != ""; page++ {
			res := call(t, cs, args)
			var d explore.DiffResult
			decode(t, res, &d)
			whole.WriteString(d.Diff)
			got := text(res)
			structured, _ := json.Marshal(res.StructuredContent)
			if len(got) > budget || len(structured) > budget {
				t.Errorf("page %d: text %d bytes, structuredContent %d, over %d", page, len(got), len(structured), budget)
			}
			head, _, _ := strings.Cut(got, "\n")
			if page == 1 && d.Next == nil {
				// The whole diff on one page (nameOnly, here): its counts
				// are the totals.
				if want := fmt.Sprintf(": %d files changed (", d.TotalFiles); !strings.Contains(head, want) || strings.Contains(head, "page") {
					t.Errorf("a diff on one page: %q, want %q and no page", head, want)
				}
			} else if all := fmt.Sprintf("%d files changed in all (", d.TotalFiles); !strings.Contains(head, all) || !strings.Contains(head, "; this page: ") {
				t.Errorf("page %d's first line does not give the totals and the page: %q", page, head)
			} else if last := strings.HasSuffix(head, "; this is the last page"); last != (d.Next == nil) {
				t.Errorf("page %d (next %v) says it is the last: %v: %q", page, d.Next != nil, last, head)
			}
			if d.Continues != nil {
				continued++
				if want := fmt.Sprintf(" of file %d, %s", d.FirstFile, d.Continues.Path); !strings.Contains(head, want) {
					t.Errorf("page %d starts inside %s and its first line does not say so: %q", page, d.Continues.Path, head)
				}
			}
			if nameOnly {
				for _, f := range d.Files {
					if line := fmt.Sprintf("\n%-8s %s (%s)\n", f.Status, f.Path, f.Bytes()); f.Bytes() == "" || !strings.Contains(got, line) {
						t.Errorf("page %d: nameOnly text lacks %q:\n%s", page, line, got)
					}
				}
			}
			args = ""
			if d.Next != nil {
				b, _ := json.Marshal(d.Next)
				args = string(b)
				if !strings.HasSuffix(got, "call again with "+args+"]") {
					t.Errorf("page %d text does not end with the next request", page)
				}
			}
			if page > 100 {
				t.Fatal("next never ends")
			}
			if testing.Verbose() {
				t.Logf("page %d:\n%s", page, got)
			}
		}
		if !nameOnly && continued == 0 {
			t.Error("no page started inside a file: the fixture no longer exercises this")
		}
		var one explore.DiffResult
		decode(t, call(t, cs, fmt.Sprintf(`{"action":"diff","packageName":%q,"from":%q,"to":%q,"nameOnly":%v}`,
			difftest.Package, difftest.V1, difftest.V2, nameOnly)), &one)
		if one.Truncated || whole.String() != one.Diff {
			t.Errorf("nameOnly %v: pages concatenated differ from the whole diff (truncated %v)", nameOnly, one.Truncated)
		}
	}
}
