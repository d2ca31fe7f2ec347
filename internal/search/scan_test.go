package search

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/index"
)

// TestScanFirst: the first grep of a version without an index answers
// from a scan index, with exactly the answers of the full index, while the
// full index builds in the background, is stored, and then replaces it.
func TestScanFirst(t *testing.T) {
	st := newStore(t)
	files := map[string]string{"bin.dat": "\x00binary needle"}
	for i := range 30 {
		var b strings.Builder
		for j := range 200 {
			fmt.Fprintf(&b, "export function needle_%d_%d() { return readSync(%d); }\n", i, j, i*j)
		}
		b.WriteString(strings.Repeat("x", 20_000) + "needle_long\n") // a line longer than a block
		files[fmt.Sprintf("lib/f%02d.js", i)] = b.String()
	}
	files["lib/copy.js"] = files["lib/f07.js"]
	publish(t, st, "p", "1.0.0", files)
	queries := []index.Query{
		{Pattern: "needle_7_1[0-9]\\b"},
		{Pattern: `function\s+\w+_3_\d+\(`, MaxMatchesPerFile: 3},
		{Pattern: "needle_long", ContextLines: 1},
		{Pattern: "(?i)READSYNC\\(42\\)"},
		{Pattern: "needle", MaxMatches: 50},
	}
	opt := DefaultOptions(t.TempDir())
	s, err := New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var first []index.Result
	for i, q := range queries {
		res, err := s.Search(t.Context(), "p", "1.0.0", q)
		if err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		first = append(first, res)
		if i == 0 {
			e := s.lookup(key("p", "1.0.0"))
			if e == nil || !e.scan {
				t.Fatalf("the first grep did not answer from a scan index")
			}
			s.release(e)
		}
	}
	s.bg.Wait() // the background full build
	e := s.lookup(key("p", "1.0.0"))
	if e == nil || e.scan {
		t.Fatalf("the full index did not replace the scan index")
	}
	s.release(e)
	if _, err := st.Index(t.Context(), "p", "1.0.0", index.FormatVersion); err != nil {
		t.Errorf("the full index was not stored: %v", err)
	}
	for i, q := range queries {
		res, err := s.Search(t.Context(), "p", "1.0.0", q)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Matches) == 0 || !reflect.DeepEqual(res, first[i]) {
			t.Errorf("query %d %q: the scan index answered\n%+v\nthe full index\n%+v", i, q.Pattern, first[i], res)
		}
	}
	if n := st.builds(); n != 2 {
		t.Errorf("listed the files %d times, want 2 (one scan, one full build)", n)
	}
}
