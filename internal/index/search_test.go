package index

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestQueryMaxOutputBytes: a query's MaxOutputBytes stops the search at
// the match that passes it (TruncatedBy outputBytes), the matches before
// it being the uncapped search's first; the first match is returned
// however small the cap; a cap above the limit's is the limit's; and
// PerFileCut says a file was held back even when maxMatches names the
// stop.
func TestQueryMaxOutputBytes(t *testing.T) {
	var docs []Doc
	for i := range 20 {
		docs = append(docs, Doc{Path: fmt.Sprintf("f%02d.js", i), Data: []byte(strings.Repeat("const useRouter = 1;\n", 4))})
	}
	ix := buildBytes(t, docs, DefaultBuildLimits())
	lim := DefaultSearchLimits()
	all, err := ix.Search(context.Background(), Query{Pattern: "useRouter", MaxMatches: 1000}, lim)
	if err != nil || len(all.Matches) != 80 || all.Truncated {
		t.Fatalf("uncapped: %d matches, truncated %v, %v", len(all.Matches), all.Truncated, err)
	}
	size := len("f00.js") + len("const useRouter = 1;") + 64 // the index's size of one match
	for _, c := range []struct {
		max, want int
		by        string
	}{
		{1, 1, TruncOutputBytes},
		{size, 1, TruncOutputBytes},
		{10*size + size/2, 10, TruncOutputBytes},
		{80 * size, 80, ""},
		{lim.MaxOutputBytes * 2, 80, ""},
	} {
		res, err := ix.Search(context.Background(), Query{Pattern: "useRouter", MaxMatches: 1000, MaxOutputBytes: c.max}, lim)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Matches) != c.want || res.TruncatedBy != c.by || !reflect.DeepEqual(res.Matches, all.Matches[:c.want]) {
			t.Errorf("MaxOutputBytes %d: %d matches, truncated by %q; want the first %d, %q", c.max, len(res.Matches), res.TruncatedBy, c.want, c.by)
		}
	}
	lim.MaxOutputBytes = 3 * size
	if res, _ := ix.Search(context.Background(), Query{Pattern: "useRouter", MaxMatches: 1000, MaxOutputBytes: 100 * size}, lim); len(res.Matches) != 3 {
		t.Errorf("a query cap over the limit's: %d matches, want the limit's 3", len(res.Matches))
	}
	if _, err := ix.Search(context.Background(), Query{Pattern: "useRouter", MaxOutputBytes: -1}, DefaultSearchLimits()); !errors.Is(err, ErrBadQuery) {
		t.Errorf("a negative MaxOutputBytes: %v, want ErrBadQuery", err)
	}
	res, _ := ix.Search(context.Background(), Query{Pattern: "useRouter", MaxMatches: 5, MaxMatchesPerFile: 2}, DefaultSearchLimits())
	if res.TruncatedBy != TruncMaxMatches || !res.PerFileCut {
		t.Errorf("per-file cap then maxMatches: truncated by %q, PerFileCut %v; want maxMatches and true", res.TruncatedBy, res.PerFileCut)
	}
	if res, _ := ix.Search(context.Background(), Query{Pattern: "useRouter", MaxMatches: 3}, DefaultSearchLimits()); res.PerFileCut {
		t.Error("PerFileCut set with no per-file cap")
	}
}

// TestIntersectListAgreesWithDecoding: intersectList gives the ids of
// acc that a decoded posting list holds, block or group ids, on random
// lists with one- and many-byte deltas, and reports a list that does not increase, runs past
// the index's blocks or ends inside a varint as corrupt.
func TestIntersectListAgreesWithDecoding(t *testing.T) {
	ix := &Index{blocks: make([]blockRec, 5000)}
	for k := range ix.blocks {
		ix.blocks[k].group = uint32(k) &^ 3
	}
	rng := rand.New(rand.NewPCG(3, 4))
	encode := func(ids []uint32) []byte {
		var b []byte
		prev := uint32(0)
		for _, id := range ids {
			b = binary.AppendUvarint(b, uint64(id-prev))
			prev = id
		}
		return b
	}
	sample := func(n, gap int) []uint32 {
		var ids []uint32
		for id := rng.IntN(gap + 1); id < 5000 && len(ids) < n; id += 1 + rng.IntN(gap) {
			ids = append(ids, uint32(id))
		}
		return ids
	}
	for range 500 {
		list, acc := sample(1+rng.IntN(3000), 1+rng.IntN(400)), sample(1+rng.IntN(300), 1+rng.IntN(60))
		inList := map[uint32]bool{}
		for _, id := range list {
			inList[id] = true
		}
		var want []uint32
		for _, id := range acc {
			if inList[id] {
				want = append(want, id)
			}
		}
		got, err := ix.intersectList(slices.Clone(acc), encode(list), false)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("got %v (%v), want %v", got, err, want)
		}
		// Group mode: blocks in groups of four, named by their first.
		groups := map[uint32]bool{}
		for _, id := range list {
			groups[ix.blocks[id].group] = true
		}
		var gacc, gwant []uint32
		for _, id := range acc {
			if g := id &^ 3; len(gacc) == 0 || gacc[len(gacc)-1] != g {
				gacc = append(gacc, g)
				if groups[g] {
					gwant = append(gwant, g)
				}
			}
		}
		got, err = ix.intersectList(gacc, encode(list), true)
		if err != nil || !slices.Equal(got, gwant) {
			t.Fatalf("groups: got %v (%v), want %v", got, err, gwant)
		}
	}
	all := []uint32{0, 1, 2, 3, 4999}
	for name, list := range map[string][]byte{
		"a zero delta":       {1, 0, 1},
		"past the last":      binary.AppendUvarint([]byte{1}, 5000),
		"cut in a varint":    {1, 0x80},
		"wrapping past 2^64": binary.AppendUvarint([]byte{2}, 1<<64-1),
	} {
		if _, err := ix.intersectList(slices.Clone(all), list, false); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", name, err)
		}
		if _, err := ix.decode(list, false); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: decode: err %v, want ErrCorrupt", name, err)
		}
	}
}

// TestCountRestCountsEveryLine: a CountRest search returns the matches
// the same search returns without it, and counts every matching line and
// file it visits past its caps (per file, maxMatches, output bytes,
// tallied files) as a Tally of every file counts them.
func TestCountRestCountsEveryLine(t *testing.T) {
	var docs []Doc
	for i := range 30 {
		text := strings.Repeat("x := 1\n", i%4) + strings.Repeat("const useRouter = 1; // useRouter\n", 1+i%5)
		docs = append(docs, Doc{Path: fmt.Sprintf("f%02d.js", i), Data: []byte(text)})
	}
	docs = append(docs, Doc{Path: "long.js", Data: []byte(strings.Repeat("useRouter ", 400) + "\n")})
	ix := buildBytes(t, docs, DefaultBuildLimits())
	ctx := context.Background()
	all, err := ix.Search(ctx, Query{Pattern: "useRouter", MaxMatches: 1000, Tally: func(string) bool { return true }}, DefaultSearchLimits())
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, m := range all.Matches {
		lines += m.Count
	}
	tallied := func(p string) bool { return p == "f07.js" || p == "f21.js" }
	for _, q := range []Query{
		{Pattern: "useRouter"},
		{Pattern: "useRouter", MaxMatches: 7},
		{Pattern: "useRouter", MaxMatchesPerFile: 2},
		{Pattern: "useRouter", MaxMatches: 9, MaxMatchesPerFile: 1},
		{Pattern: "useRouter", MaxOutputBytes: 300},
		{Pattern: "useRouter", MaxOutputBytes: 300, Tally: tallied},
		{Pattern: "useRouter", MaxMatches: 3, Tally: tallied},
		{Pattern: `use\w+`, MaxMatchesPerFile: 3, Filter: func(p string) bool { return p != "f03.js" }},
	} {
		want, err := ix.Search(ctx, q, DefaultSearchLimits())
		if err != nil {
			t.Fatal(err)
		}
		q.CountRest = true
		got, err := ix.Search(ctx, q, DefaultSearchLimits())
		if err != nil {
			t.Fatal(err)
		}
		wantLines, wantFiles := lines, len(all.Matches)
		if q.Filter != nil {
			wantLines, wantFiles = lines-(1+3%5), wantFiles-1 // f03.js's lines
		}
		counts := got
		counts.Lines, counts.Files, counts.CountedAll = 0, 0, false
		if !reflect.DeepEqual(counts, want) {
			t.Errorf("%+v: CountRest changed the result\n%+v\nwant\n%+v", q, counts, want)
		}
		if got.Lines != wantLines || got.Files != wantFiles || !got.CountedAll {
			t.Errorf("%+v: counted %d lines in %d files (all: %v), want %d in %d", q, got.Lines, got.Files, got.CountedAll, wantLines, wantFiles)
		}
	}
	// Past CountUntil, the count stops where the matches do.
	want, _ := ix.Search(ctx, Query{Pattern: "useRouter", MaxMatches: 3}, DefaultSearchLimits())
	late, err := ix.Search(ctx, Query{Pattern: "useRouter", MaxMatches: 3, CountRest: true, CountUntil: time.Now().Add(-time.Second)}, DefaultSearchLimits())
	if err != nil || late.CountedAll || !reflect.DeepEqual(late.Matches, want.Matches) || late.TruncatedBy != TruncMaxMatches {
		t.Errorf("past CountUntil: counted all %v, truncated by %q, %d matches (%v); want not all, maxMatches, the same 3", late.CountedAll, late.TruncatedBy, len(late.Matches), err)
	}
	res, err := ix.Search(ctx, Query{Pattern: "useRouter", MaxMatches: 2}, DefaultSearchLimits())
	if err != nil || res.Lines+res.Files != 0 || res.CountedAll {
		t.Errorf("without CountRest: counted %d lines, %d files, all %v", res.Lines, res.Files, res.CountedAll)
	}
}

// TestCountRestNeverFailsTheSearch: a body only a CountRest search's count
// reaches, past its stop, that cannot be read ends the count short
// (CountedAll false), not the search: its matches and error are the plain
// search's. Such a body is read with a context ending at CountUntil.
func TestCountRestNeverFailsTheSearch(t *testing.T) {
	var docs []Doc
	for i := range 10 {
		docs = append(docs, Doc{Path: fmt.Sprintf("f%02d.js", i), Data: []byte(fmt.Sprintf("// %d\nconst useRouter = 1;\n", i))})
	}
	_, stored, src := openBoth(t, docs, DefaultBuildLimits())
	last := sha256.Sum256(docs[9].Data)
	until := time.Now().Add(time.Hour)
	for _, c := range []struct {
		name   string
		answer func(ctx context.Context) error
	}{
		{"a read error", func(context.Context) error { return errors.New("store down") }},
		{"a read past CountUntil", func(ctx context.Context) error {
			if d, ok := ctx.Deadline(); !ok || d.After(until) {
				return fmt.Errorf("read with deadline %v, want CountUntil %v", d, until)
			}
			return context.DeadlineExceeded
		}},
	} {
		var readErr error
		src.answer = func(ctx context.Context, key string, b []byte) ([]byte, error) {
			if key == string(last[:]) {
				readErr = c.answer(ctx)
				return nil, readErr
			}
			return b, nil
		}
		q := Query{Pattern: "useRouter", MaxMatches: 2}
		plain, err := stored.Search(context.Background(), q, DefaultSearchLimits())
		if err != nil {
			t.Fatal(err)
		}
		q.CountRest, q.CountUntil = true, until
		got, err := stored.Search(context.Background(), q, DefaultSearchLimits())
		if err != nil || got.CountedAll || !reflect.DeepEqual(got.Matches, plain.Matches) || got.TruncatedBy != plain.TruncatedBy {
			t.Errorf("%s: err %v, counted all %v, %d matches truncated by %q; want the plain search's %d, %q, not all counted",
				c.name, err, got.CountedAll, len(got.Matches), got.TruncatedBy, len(plain.Matches), plain.TruncatedBy)
		}
		if readErr == nil {
			t.Errorf("%s: the count never read the last body", c.name)
		} else if c.name != "a read error" && !errors.Is(readErr, context.DeadlineExceeded) {
			t.Errorf("%s: %v", c.name, readErr)
		}
	}
}
