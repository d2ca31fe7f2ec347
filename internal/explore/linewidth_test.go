package explore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// TestReadLineWidthBoundaries: at the line width (100 bytes here) and
// just past it, read shows a line whole or cut with the marker naming the
// column where the rest starts, and the column window from there shows
// exactly the rest; a column inside a character starts the window at the
// character, and the answer says the window's own first column.
func TestReadLineWidthBoundaries(t *testing.T) {
	c := newChain(t)
	lens := []int{99, 100, 101, 102, 110, 200, 201}
	var lines []string
	for i, n := range lens {
		lines = append(lines, strings.Repeat(string(rune('a'+i)), n))
	}
	lines = append(lines, strings.Repeat("é", 60)) // 120 bytes, two per character
	c.reg.Publish("wide", "1.0.0", tarballtest.Package(t, map[string]string{"a.txt": strings.Join(lines, "\n") + "\n"}))
	ctx := t.Context()
	for i, line := range lines {
		res, err := c.svc.Read(ctx, explore.Request{Action: "read", PackageName: "wide", Version: "1.0.0", Path: "a.txt", Offset: i + 1, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, got, _ := strings.Cut(res.Content, "\t")
		if len(line) <= 100 {
			if got != line {
				t.Errorf("line %d (%d bytes) shown as %q, want it whole", i+1, len(line), got)
			}
			continue
		}
		want := line[:100] + fmt.Sprintf(" [… line cut at 100 of %d bytes; read the rest with offset=%d, column=101]", len(line), i+1)
		if got != want {
			t.Errorf("line %d (%d bytes) shown as %q, want %q", i+1, len(line), got, want)
		}
		// The rest, window by window, from the marker's column.
		rest, col := "", 101
		for col > 0 {
			w, err := c.svc.Read(ctx, explore.Request{Action: "read", PackageName: "wide", Version: "1.0.0", Path: "a.txt", Offset: i + 1, Column: col})
			if err != nil {
				t.Fatalf("line %d column %d: %v", i+1, col, err)
			}
			_, text, _ := strings.Cut(w.Content, "\t")
			if w.Column != col || w.LineBytes != len(line) || (w.NextColumn > 0 && w.NextColumn != col+len(text)) {
				t.Errorf("line %d column %d: window at %d, next %d, %d of %d bytes", i+1, col, w.Column, w.NextColumn, len(text), w.LineBytes)
			}
			rest += text
			col = w.NextColumn
		}
		if rest != line[100:] {
			t.Errorf("line %d: the windows from column 101 give %d bytes, want the %d after the first 100", i+1, len(rest), len(line)-100)
		}
	}
	// Column 2 falls inside the first "é": the window starts at column 1
	// and says so.
	w, err := c.svc.Read(ctx, explore.Request{Action: "read", PackageName: "wide", Version: "1.0.0", Path: "a.txt", Offset: len(lines), Column: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, text, _ := strings.Cut(w.Content, "\t"); w.Column != 1 || !strings.HasPrefix(text, "é") || w.NextColumn != 1+len(text) {
		t.Errorf("column 2 of %q: window at %d (next %d) shows %q; want it from column 1", lines[len(lines)-1][:4], w.Column, w.NextColumn, text)
	}
}

// TestReadColumnHonoursMaxBytes: a column read with maxBytes shows as
// much of the line as the answer's JSON holds (a bundle's quotes cost two
// bytes), not one line width; the windows walk the line exactly once.
func TestReadColumnHonoursMaxBytes(t *testing.T) {
	c := newChain(t)                         // line width 100
	line := strings.Repeat(`x="a<b";`, 6000) // 48,000 bytes, 15 as JSON per 8
	c.reg.Publish("bundle", "1.0.0", tarballtest.Package(t, map[string]string{"b.js": line + "\n"}))
	const maxBytes = 20_000
	rest, col, calls := "", 1, 0
	for col > 0 {
		w, err := c.svc.Read(t.Context(), explore.Request{Action: "read", PackageName: "bundle", Version: "1.0.0", Path: "b.js", Offset: 1, Column: col, MaxBytes: maxBytes})
		if err != nil {
			t.Fatal(err)
		}
		_, text, _ := strings.Cut(w.Content, "\t")
		if cost := explore.Cost(w); cost > maxBytes || w.NextColumn > 0 && cost < maxBytes*9/10 {
			t.Errorf("column %d: %d bytes of the line, %d bytes of JSON; want most of %d and no more", col, len(text), cost, maxBytes)
		}
		rest += text
		col = w.NextColumn
		calls++
	}
	if rest != line || calls > 6 {
		t.Errorf("%d calls gave %d bytes, want the line's %d once in a few calls", calls, len(rest), len(line))
	}
}
