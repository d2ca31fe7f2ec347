package web

import (
	"fmt"
	"strings"
	"testing"
)

// TestCostlyReadmeShownAsText: goldmark's work grows with the square of
// some shapes a package author controls, within one README of PageBytes
// (100 KiB): 100,000 nested '>' took 11.5 s of CPU and 2.7 MB of HTML
// (too big for the README cache, so every view paid it again), 25,600
// unclosed "[x](" on one line 7.1 s, "[](" 5.6 s, "![a](" 3.7 s. Such a
// README is shown as text, at the cost of scanning its lines; READMEs as
// packages write them (badges, long link lists, big tables) still render.
func TestCostlyReadmeShownAsText(t *testing.T) {
	n := 40 << 10
	for name, src := range map[string]string{
		"nested quotes":          strings.Repeat(">", n) + " x",
		"spaced nested quotes":   strings.Repeat("> ", n/2) + "x",
		"quotes in list items":   strings.Repeat("- > ", n/4) + "x",
		"unclosed links":         strings.Repeat("[x](", n/4),
		"unclosed empty links":   strings.Repeat("[](", n/3),
		"unclosed images":        strings.Repeat("![a](", n/5),
		"unclosed angle dests":   strings.Repeat("[x](<", n/5),
		"unclosed links, indent": "    text\n\n" + strings.Repeat("[x](", n/4),
	} {
		out := string(renderMarkdown([]byte(src), packageLink("/browse/p@1.0.0/")))
		if !strings.HasPrefix(out, "<pre>") || len(out) > 6*len(src) {
			t.Errorf("%s: rendered as markdown (%d bytes of HTML from %d): %.120s", name, len(out), len(src), out)
		}
	}
	var badges, list, table strings.Builder
	for i := range 40 {
		fmt.Fprintf(&badges, "[![b%d](https://img.example/b%d.svg)](https://ci.example/%d) ", i, i, i)
	}
	for i := range 2000 {
		fmt.Fprintf(&list, "- [pkg-%d](https://example.com/pkg-%d) - a package > another, see [docs](docs/%d.md).\n", i, i, i)
	}
	table.WriteString("| a | b |\n|---|---|\n")
	for i := range 1000 {
		fmt.Fprintf(&table, "| [x%d](x/%d.md) | [y](https://y.example/%d) |\n", i, i, i)
	}
	for name, src := range map[string]string{
		"a line of 40 badges": "# p\n\n" + badges.String() + "\n",
		"2,000 linked items":  list.String(),
		"a 1,000-row table":   table.String(),
		"quotes five deep":    "> > > > > deep\n",
	} {
		if out := string(renderMarkdown([]byte(src), packageLink("/browse/p@1.0.0/"))); strings.HasPrefix(out, "<pre>") {
			t.Errorf("%s (%d bytes): shown as text, want markdown", name, len(src))
		}
	}
}
