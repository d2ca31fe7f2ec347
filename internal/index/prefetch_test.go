package index

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// prefetchSource is a mapSource that is a Prefetcher: it takes at most
// take keys of each offer and records the offers and what it took.
type prefetchSource struct {
	*mapSource
	take   int
	offers []int    // each offer's length
	taken  []string // the keys taken, in order
}

func (p *prefetchSource) Prefetch(ctx context.Context, keys []string, sizes []int64) int {
	p.offers = append(p.offers, len(keys))
	for i, k := range keys {
		if int64(len(p.bodies[k])) != sizes[i] {
			panic(fmt.Sprintf("offered %x with size %d, its body has %d bytes", k, sizes[i], len(p.bodies[k])))
		}
	}
	n := min(p.take, len(keys))
	p.taken = append(p.taken, keys[:n]...)
	return n
}

// Held holds nothing: every body is read through Prefetch and Body.
func (p *prefetchSource) Held([]byte) ([]byte, bool) { return nil, false }

// readOrder wraps a source's Body to record the distinct keys read, in
// the order first read.
type readOrder struct {
	*prefetchSource
	order []string
	seen  map[string]bool
}

func (r *readOrder) Body(ctx context.Context, key string) ([]byte, error) {
	if !r.seen[key] {
		r.seen[key] = true
		r.order = append(r.order, key)
	}
	return r.prefetchSource.Body(ctx, key)
}

// prefetchDocs are 300 files, every third holding the needle, two of
// them one body, one binary, one with a byte order mark.
func prefetchDocs() []Doc {
	var docs []Doc
	for i := range 300 {
		text := fmt.Sprintf("export const value%d = %d;\n", i, i)
		if i%3 == 0 {
			text += fmt.Sprintf("function needle%d() {}\n", i)
		}
		docs = append(docs, Doc{Path: fmt.Sprintf("f%03d.js", i), Data: []byte(text)})
	}
	docs[31].Data = docs[30].Data
	docs[60].Data = append([]byte("\x00\x01needle"), docs[60].Data...)
	docs[90].Data = append([]byte("\ufeff"), docs[90].Data...)
	return docs
}

// builtFull builds docs' index and opens it whole; form is its stored
// form, for OpenStored.
func builtFull(t *testing.T, docs []Doc) (full *Index, form []byte) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := Build(&buf, docs, DefaultBuildLimits()); err != nil {
		t.Fatal(err)
	}
	full, err := OpenBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { full.Close() })
	return full, storedOf(t, buf.Bytes())
}

// TestPrefetchOffersWhatTheSearchReads: a search over a Prefetcher offers
// it exactly the contents it then reads, in that order, each once (the
// body two files share once), with their sizes; offers start at
// firstOffer and grow; Filter is still called once per file; the answer
// is the full file's. With MaxMatches cutting the search short, what was
// taken stays within twice what was read.
func TestPrefetchOffersWhatTheSearchReads(t *testing.T) {
	docs := prefetchDocs()
	full, form := builtFull(t, docs)
	for _, c := range []struct {
		name       string
		take       int
		maxMatches int
	}{
		{"all taken", 1 << 20, 0},
		{"three at a time", 3, 0},
		{"cut short", 1 << 20, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := &readOrder{prefetchSource: &prefetchSource{mapSource: newMapSource(docs), take: c.take}, seen: map[string]bool{}}
			stored, err := OpenStored(form, src)
			if err != nil {
				t.Fatal(err)
			}
			defer stored.Close()
			filtered := map[string]int{}
			q := Query{Pattern: `needle\d+`, MaxMatches: c.maxMatches, Filter: func(p string) bool {
				filtered[p]++
				return p != "f033.js"
			}}
			lim := DefaultSearchLimits()
			got, err := stored.Search(context.Background(), q, lim)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := full.Search(context.Background(), Query{Pattern: q.Pattern, MaxMatches: c.maxMatches, Filter: func(p string) bool { return p != "f033.js" }}, lim)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("stored form with a Prefetcher answers\n%+v\nfull file\n%+v", got, want)
			}
			for p, n := range filtered {
				if n != 1 {
					t.Errorf("Filter called %d times for %s, want once", n, p)
				}
			}
			if len(src.offers) == 0 || src.offers[0] != firstOffer {
				t.Errorf("offers %v, want the first of %d", src.offers, firstOffer)
			}
			if c.maxMatches == 0 {
				if !reflect.DeepEqual(src.taken, src.order) {
					t.Errorf("took %d keys, read %d: not the same keys in the same order", len(src.taken), len(src.order))
				}
				if len(src.order) != 98 { // 100 needles: f030/f031 one body, f033 filtered, f060 binary
					t.Errorf("read %d bodies, want 98", len(src.order))
				}
				return
			}
			if !reflect.DeepEqual(src.taken[:len(src.order)], src.order) || len(src.taken) > 2*len(src.order)+firstOffer {
				t.Errorf("cut short after reading %d bodies, took %d (offers %v)", len(src.order), len(src.taken), src.offers)
			}
		})
	}
}

// holdingSource is a prefetchSource that holds the bodies in held
// (Prefetcher.Held) and counts the Held calls.
type holdingSource struct {
	*prefetchSource
	held  map[string]bool
	asked int
}

func (h *holdingSource) Held(key []byte) ([]byte, bool) {
	h.asked++
	if !h.held[string(key)] {
		return nil, false
	}
	return h.bodies[string(key)], true
}

// TestHeldBodiesAreNotOffered: a search over a Prefetcher reads the
// bodies it holds through Held, offering nothing for them and calling
// Body for none; it plans and offers from the first content not held on,
// and answers as the full file does, with Filter still called once per
// file. A held body that is not the content's text fails the search as a
// read one does.
func TestHeldBodiesAreNotOffered(t *testing.T) {
	docs := prefetchDocs()
	full, form := builtFull(t, docs)
	keyOf := func(d Doc) string { sum := sha256.Sum256(d.Data); return string(sum[:]) }
	for _, c := range []struct {
		name     string
		notHeld  int // docs[notHeld:] are not held (len: all held)
		offered  bool
		bodyRead int // bodies read through Body
	}{
		{"all held", len(docs), false, 0},
		{"held up to f150", 150, true, 50}, // the needles of f150, f153, ... f297
	} {
		t.Run(c.name, func(t *testing.T) {
			src := &holdingSource{prefetchSource: &prefetchSource{mapSource: newMapSource(docs), take: 1 << 20}, held: map[string]bool{}}
			for _, d := range docs[:c.notHeld] {
				src.held[keyOf(d)] = true
			}
			stored, err := OpenStored(form, src)
			if err != nil {
				t.Fatal(err)
			}
			defer stored.Close()
			filtered := map[string]int{}
			keep := func(p string) bool { return p != "f033.js" }
			q := Query{Pattern: `needle\d+`, Filter: func(p string) bool { filtered[p]++; return keep(p) }}
			got, err := stored.Search(context.Background(), q, DefaultSearchLimits())
			if err != nil {
				t.Fatal(err)
			}
			want, _ := full.Search(context.Background(), Query{Pattern: q.Pattern, Filter: keep}, DefaultSearchLimits())
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("stored form with held bodies answers\n%+v\nfull file\n%+v", got, want)
			}
			for p, n := range filtered {
				if n != 1 {
					t.Errorf("Filter called %d times for %s, want once", n, p)
				}
			}
			if src.asked == 0 {
				t.Error("Held was never asked")
			}
			if (len(src.offers) > 0) != c.offered {
				t.Errorf("offers %v, want offers: %v", src.offers, c.offered)
			}
			read := 0
			for k, n := range src.calls {
				if src.held[k] && n > 0 {
					t.Errorf("a held body was read through Body %d times", n)
				}
				read += n
			}
			if read != c.bodyRead {
				t.Errorf("Body read %d bodies, want %d", read, c.bodyRead)
			}
			for _, k := range src.taken {
				if src.held[k] {
					t.Error("a held body was offered")
					break
				}
			}
		})
	}
	t.Run("wrong held body", func(t *testing.T) {
		src := &holdingSource{prefetchSource: &prefetchSource{mapSource: newMapSource(docs), take: 1 << 20}, held: map[string]bool{}}
		for _, d := range docs {
			src.held[keyOf(d)] = true
		}
		src.bodies[keyOf(docs[3])] = append(bytes.Clone(docs[3].Data), 'x')
		stored, err := OpenStored(form, src)
		if err != nil {
			t.Fatal(err)
		}
		defer stored.Close()
		_, err = stored.Search(context.Background(), Query{Pattern: `needle\d+`}, DefaultSearchLimits())
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(fmt.Sprint(err), "reading the text of f003.js:") {
			t.Errorf("err %v, want one wrapping ErrCorrupt and naming f003.js", err)
		}
	})
}
