package explore

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/store"
)

// TestDiffPagesResumeHeldFiles: pages that continue a file held from the
// page before (Service.renders) are byte for byte the pages of a service
// that holds nothing and renders the file again, cursors included; their
// texts add up to the whole diff; and a file many pages long has its
// bodies read once, not once a page. Three walks go page by page in
// turn, so that each finds the others' files held: all files, contextLines
// 0 (other hunks of the same files) and include b.map, where the long
// line's file is the last one and prints with the diff's end.
func TestDiffPagesResumeHeldFiles(t *testing.T) {
	t.Parallel()
	// a.js: 1,500 lines, every 25th changed: 60 hunks, many pages. b.map:
	// a changed line of ~70 KB (runes JSON escapes, control bytes npm
	// prints in caret notation, UUIDs it redacts, a space at the end)
	// and the same line after it as context, each cut inside over many
	// pages; with include b.map the context line ends the diff, which
	// prints it trimmed.
	var oldA, newA strings.Builder
	for n := range 1500 {
		fmt.Fprintf(&oldA, "const line%d = %d;\n", n, n)
		if n%25 == 0 {
			fmt.Fprintf(&newA, "const line%d = %d; // changed\n", n, n+1)
		} else {
			fmt.Fprintf(&newA, "const line%d = %d;\n", n, n)
		}
	}
	long := strings.Repeat("é<\"ab€𝄞\x01 123e4567-e89b-12d3-a456-426614174000 ", 1200)
	st := storeOf(t, "paged", map[string]map[string]string{
		"1.0.0": {"a.js": oldA.String(), "b.map": "x" + long + "\n" + long + "\n", "c.js": "c\n"},
		"2.0.0": {"a.js": newA.String(), "b.map": "y" + long + "\n" + long + "\n", "c.js": "C\n"},
	})
	service := func(renderBytes int) (*Service, *readCounter) {
		lim := DefaultLimits()
		lim.DiffRenderBytes = renderBytes
		rc := &readCounter{Reader: st, read: map[store.Hash]int{}}
		return New(Options{Store: rc, Resolver: exactOnly{}, Filler: noFill{}, Limits: lim}), rc
	}
	none, _ := service(0)
	held, reads := service(DefaultLimits().DiffRenderBytes)
	// tight holds a.js's text but not b.map's: its pages render b.map
	// again, and what it holds stays within its bound.
	tight, _ := service(64 << 10)

	zero := 0
	base := Request{Action: "diff", PackageName: "paged", From: "1.0.0", To: "2.0.0"}
	walks := []Request{base, base, base}
	walks[1].ContextLines = &zero
	walks[2].Include = []string{"b.map"}
	type walk struct {
		req         Request
		text        strings.Builder
		pages       int
		done        bool
		inLine, inA bool // a page started inside b.map's long line; inside a.js
	}
	var ws []*walk
	for _, r := range walks {
		r.MaxBytes = MinAnswerBytes
		ws = append(ws, &walk{req: r})
	}
	page := func(s *Service, r Request) (*DiffResult, []byte) {
		t.Helper()
		res, err := s.Diff(t.Context(), r)
		if err != nil {
			t.Fatalf("cursor %q: %v", r.Cursor, err)
		}
		data, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return res, data
	}
	for left := len(ws); left > 0; {
		for k, w := range ws {
			if w.done {
				continue
			}
			res, got := page(held, w.req)
			if _, want := page(none, w.req); string(got) != string(want) {
				t.Fatalf("walk %d, cursor %q: the page differs from one rendered afresh:\n got %.300s\nwant %.300s", k, w.req.Cursor, got, want)
			}
			if _, want := page(tight, w.req); string(got) != string(want) {
				t.Fatalf("walk %d, cursor %q: the page differs with diff-render-bytes 64 KiB", k, w.req.Cursor)
			}
			if c := tight.renders.c.Cost(); c > 64<<10 {
				t.Fatalf("diff-render-bytes 64 KiB holds %d bytes", c)
			}
			if c, _ := parseDiffCursor(w.req.Cursor); res.Continues != nil {
				w.inLine = w.inLine || (res.Continues.Path == "b.map" && c.inline > 0)
				w.inA = w.inA || res.Continues.Path == "a.js"
			}
			w.text.WriteString(res.Diff)
			w.pages++
			if w.pages > 2000 {
				t.Fatalf("walk %d does not end", k)
			}
			if res.Next == nil {
				w.done = true
				left--
				continue
			}
			w.req = *res.Next
		}
	}
	for k, w := range ws {
		r := w.req
		r.Cursor, r.MaxBytes = "", 1<<20
		whole, _ := page(none, r)
		if whole.Truncated {
			t.Fatalf("walk %d: the whole diff takes more than one page of 1 MiB", k)
		}
		if w.text.String() != whole.Diff {
			t.Errorf("walk %d: its %d pages add up to %d bytes, not the whole diff's %d", k, w.pages, w.text.Len(), len(whole.Diff))
		}
		if !w.inLine {
			t.Errorf("walk %d: no page started inside b.map's long line: the fixture no longer tests a line cut across pages", k)
		}
		if k < 2 && !w.inA {
			t.Errorf("walk %d: no page started inside a.js: the fixture no longer tests a file cut across pages", k)
		}
	}
	// Each walk renders a.js (b.map) once and continues it from what is
	// held: a body is read once for each walk that shows it, not for each
	// of its pages.
	oldFiles, err := st.Files(t.Context(), "paged", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	reads.mu.Lock()
	defer reads.mu.Unlock()
	for _, f := range oldFiles {
		want := 2 // walks 0 and 1
		if f.Path == "b.map" {
			want = 3
		}
		if n := reads.read[f.Hash]; n > want {
			t.Errorf("%s's old body was read %d times over the walks' pages, want at most %d", f.Path, n, want)
		}
	}
}

// TestDiffRendersChargeWhatTheyHold: a held file is charged the prefixes
// its key holds, which a caller chooses up to the request's size, and a
// prefix its text does not print (a name-only or no-prefix diff) does not
// make a key of its own. Before, a name-only page cut inside its one path
// line kept a copy under each caller-chosen prefix at ~1 KiB of charge
// each, whatever the prefix's size: diff-render-bytes did not bound what
// it pinned.
func TestDiffRendersChargeWhatTheyHold(t *testing.T) {
	t.Parallel()
	path := "lib/" + strings.Repeat("long-name-", 30) + ".js"
	st := storeOf(t, "prefixed", map[string]map[string]string{"1.0.0": {path: "old\n"}, "2.0.0": {path: "new\n"}})
	lim := DefaultLimits()
	lim.DiffRenderBytes = 256 << 10
	s := New(Options{Store: st, Resolver: exactOnly{}, Filler: noFill{}, Limits: lim})
	base := Request{Action: "diff", PackageName: "prefixed", From: "1.0.0", To: "2.0.0"}
	held := func() (n, prefixes int) {
		for _, k := range s.renders.c.Keys() {
			n, prefixes = n+1, prefixes+len(k.opts.SrcPrefix)+len(k.opts.DstPrefix)
		}
		return n, prefixes
	}
	for i := range 8 {
		// A page whose path line does not fit: it is cut inside it.
		for _, r := range []Request{{NameOnly: true}, {NoPrefix: true}, {}} {
			r.Action, r.PackageName, r.From, r.To = base.Action, base.PackageName, base.From, base.To
			r.SrcPrefix = fmt.Sprintf("%d/%s/", i, strings.Repeat("p", 100<<10))
			r.MaxBytes = MinAnswerBytes // the prefix alone passes it
			res, err := s.Diff(t.Context(), r)
			if err != nil {
				t.Fatal(err)
			}
			if res.Next == nil {
				t.Fatalf("%+v: the page was not cut: the test no longer holds a file", r.NameOnly)
			}
		}
	}
	n, prefixes := held()
	if c := int(s.renders.c.Cost()); c > lim.DiffRenderBytes || prefixes > c {
		t.Errorf("%d files held with %d bytes of prefixes in their keys, charged %d of diff-render-bytes %d", n, prefixes, c, lim.DiffRenderBytes)
	}
	// The name-only and no-prefix pages share one key each.
	if n > 2+2 { // and what fits of the diffs with a 100 KiB prefix
		t.Errorf("%d files held: name-only or no-prefix pages kept one for each prefix", n)
	}
}
