package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/store"
)

// tamperStore is a real store that returns other bytes for the hashes in
// bad: a bad disk or a bad restore under the store.
type tamperStore struct {
	*countingStore
	mu  sync.Mutex
	bad map[store.Hash][]byte
}

func (t *tamperStore) Blob(ctx context.Context, h store.Hash) ([]byte, error) {
	t.mu.Lock()
	b, ok := t.bad[h]
	t.mu.Unlock()
	if ok {
		return slices.Clone(b), nil
	}
	return t.countingStore.Blob(ctx, h)
}

// Blobs gives the tampered bytes for the hashes in bad, as Blob does.
func (t *tamperStore) Blobs(ctx context.Context, hs []store.Hash, fn func(store.Hash, []byte) error) error {
	return t.countingStore.Blobs(ctx, hs, func(h store.Hash, b []byte) error {
		t.mu.Lock()
		bad, ok := t.bad[h]
		t.mu.Unlock()
		if ok {
			b = slices.Clone(bad)
		}
		return fn(h, b)
	})
}

// tamper makes the store return other bytes of the same length for h
// (so only their hash tells them apart), or its own again with nil.
func (t *tamperStore) tamper(tb testing.TB, h store.Hash, on bool) {
	tb.Helper()
	t.mu.Lock()
	defer t.mu.Unlock()
	if !on {
		delete(t.bad, h)
		return
	}
	b, err := t.countingStore.Blob(tb.Context(), h)
	if err != nil {
		tb.Fatal(err)
	}
	b = slices.Clone(b)
	for i := range b {
		if b[i] == 'n' {
			b[i] = 'N' // needle → Needle: same length, other text
		}
	}
	if t.bad == nil {
		t.bad = map[store.Hash][]byte{}
	}
	t.bad[h] = b
}

// needleFiles are a version's files: only x.js holds the needle, and the
// others share no trigram with it.
var needleFiles = map[string]string{
	"x.js": strings.Repeat("export const needle = 1;\n", 20),
	"y.js": strings.Repeat("goodbye moon\n", 30),
	"z.js": strings.Repeat("hello world\n", 30),
}

func hashOf(s string) store.Hash { return store.HashOf([]byte(s)) }

// indexFiles lists the index files and temporary files in dir.
func indexFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".idx") || strings.HasPrefix(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestStoredFormServesWithoutLocalFile: a version whose local file is
// gone is answered from its stored form with the same matches, writes
// nothing to the local disk, and reads only the bodies of the contents
// its search reaches, once (the text cache keeps them).
func TestStoredFormServesWithoutLocalFile(t *testing.T) {
	st := newStore(t)
	publish(t, st, "a", "1.0.0", needleFiles)
	builder := newSearcher(t, st, t.TempDir(), 4)
	want := grep(t, builder, "a", "1.0.0", "needle")
	if len(want) != 20 {
		t.Fatalf("from the built file: %d matches, want 20", len(want))
	}

	dir := t.TempDir()
	s := newSearcher(t, st, dir, 4)
	st.mu.Lock()
	clear(st.reads)
	st.mu.Unlock()
	for range 3 {
		if got := grep(t, s, "a", "1.0.0", "needle"); !slices.Equal(got, want) {
			t.Fatalf("from the stored form: %q, want %q", got, want)
		}
	}
	e := s.lookup(key("a", "1.0.0"))
	if e == nil || !e.fromStore {
		t.Fatal("the version is not served from its stored form")
	}
	s.release(e)
	if files := indexFiles(t, dir); len(files) != 0 {
		t.Errorf("serving from the stored form wrote %v", files)
	}
	st.mu.Lock()
	x, y, z := st.reads[hashOf(needleFiles["x.js"])], st.reads[hashOf(needleFiles["y.js"])], st.reads[hashOf(needleFiles["z.js"])]
	st.mu.Unlock()
	if x != 1 || y != 0 || z != 0 {
		t.Errorf("body reads over three greps: x.js %d, y.js %d, z.js %d; want 1, 0, 0 (only the candidate, once)", x, y, z)
	}
	if n := st.builds(); n != 1 {
		t.Errorf("built %d times, want 1", n)
	}
}

// TestBuiltIndexOverCacheBoundIsServedStored: an index larger than the
// whole local cache is not written there: once stored, it is served from
// its stored form.
func TestBuiltIndexOverCacheBoundIsServedStored(t *testing.T) {
	st := newStore(t)
	publish(t, st, "a", "1.0.0", needleFiles)
	dir := t.TempDir()
	opt := DefaultOptions(dir)
	opt.CacheBytes = 1
	s, err := New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Ensure(t.Context(), "a", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if got := grep(t, s, "a", "1.0.0", "needle"); len(got) != 20 {
		t.Fatalf("%d matches, want 20", len(got))
	}
	e := s.lookup(key("a", "1.0.0"))
	if e == nil || e.scan || !e.fromStore {
		t.Fatal("the built index is not served from its stored form")
	}
	s.release(e)
	if files := indexFiles(t, dir); len(files) != 0 {
		t.Errorf("the local cache kept %v", files)
	}
}

// TestTamperedBodyFailsAndRebuilds: a body the store returns with other
// bytes than its hash names fails the grep with a corrupt error, never
// answers from them, not even through the rebuild it starts (the build
// checks the bodies it reads from the store too); once the store returns
// the right bytes, the version is rebuilt, not fetched again.
func TestTamperedBodyFailsAndRebuilds(t *testing.T) {
	st := &tamperStore{countingStore: newStore(t)}
	publish(t, st, "a", "1.0.0", needleFiles)
	want := grep(t, newSearcher(t, st, t.TempDir(), 4), "a", "1.0.0", "needle")

	s := newSearcher(t, st, t.TempDir(), 4)
	x := hashOf(needleFiles["x.js"])
	st.tamper(t, x, true)
	for i := range 2 { // the first from the stored form, the second a rebuild
		_, err := s.Search(t.Context(), "a", "1.0.0", index.Query{Pattern: "needle"})
		if !errors.Is(err, index.ErrCorrupt) || !errors.Is(err, store.ErrCorruptBody) {
			t.Fatalf("grep %d over a tampered body: %v, want a corrupt error", i+1, err)
		}
		s.bg.Wait() // the background rebuild, failing alike
	}
	if _, err := s.Search(t.Context(), "a", "1.0.0", index.Query{Pattern: "Needle"}); err == nil {
		t.Fatal("a grep for the tampered text succeeded")
	}

	st.tamper(t, x, false)
	before := st.builds()
	if got := grep(t, s, "a", "1.0.0", "needle"); !slices.Equal(got, want) {
		t.Fatalf("after the store is fixed: %q, want %q", got, want)
	}
	if st.builds() != before+1 {
		t.Errorf("builds went from %d to %d, want one rebuild", before, st.builds())
	}
}

// TestTextCacheStaysWithinBound: the bodies the text cache keeps stay
// within TextCacheBytes; a body larger than the whole bound is answered
// from but not kept.
func TestTextCacheStaysWithinBound(t *testing.T) {
	st := newStore(t)
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		files[n+".js"] = strings.Repeat("const needle_"+n+" = 1;\n", 50) // 1,100 bytes
	}
	files["big.js"] = strings.Repeat("const needle_big = 1;\n", 500) // 11,000 bytes
	publish(t, st, "a", "1.0.0", files)
	newSearcher(t, st, t.TempDir(), 4).Ensure(t.Context(), "a", "1.0.0")

	opt := DefaultOptions(t.TempDir())
	opt.ScanFirst, opt.TextCacheBytes = false, 3000 // two of the small bodies
	s, err := New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	res, err := s.Search(t.Context(), "a", "1.0.0", index.Query{Pattern: `needle_\w+`, MaxMatches: 10000})
	if err != nil || len(res.Matches) != 5*50+500 {
		t.Fatalf("%d matches, %v; want %d", len(res.Matches), err, 5*50+500)
	}
	if c := s.text.lru.Cost(); c > opt.TextCacheBytes || c == 0 {
		t.Errorf("the text cache holds %d bytes, bound %d", c, opt.TextCacheBytes)
	}
	if _, ok := s.text.lru.Get(hashOf(files["big.js"])); ok {
		t.Error("a body larger than the whole cache was kept")
	}
}

// TestStoredChunkMismatchIsRefused: a chunk of a stored index whose bytes
// are not its hash's is refused (the stored form's own checksum cannot
// be checked: it covers the absent text); the version is rebuilt and
// answers right.
func TestStoredChunkMismatchIsRefused(t *testing.T) {
	st := &tamperStore{countingStore: newStore(t)}
	publish(t, st, "a", "1.0.0", needleFiles)
	want := grep(t, newSearcher(t, st, t.TempDir(), 4), "a", "1.0.0", "needle")
	rec, err := st.Index(t.Context(), "a", "1.0.0", index.FormatVersion)
	if err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	st.bad = map[store.Hash][]byte{rec.Chunks[len(rec.Chunks)/2]: []byte(strings.Repeat("x", 64))}
	st.mu.Unlock()

	s := newSearcher(t, st, t.TempDir(), 4)
	if _, err := s.fetch(t.Context(), "a", "1.0.0", rec); !errors.Is(err, store.ErrCorruptBody) {
		t.Fatalf("fetch of a stored index with a bad chunk: %v, want ErrCorruptBody", err)
	}
	if got := grep(t, s, "a", "1.0.0", "needle"); !slices.Equal(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	if n := st.builds(); n != 2 {
		t.Errorf("built %d times, want 2 (rebuilt)", n)
	}
}

// TestStoredFormOverOpenBoundIsRefused: a stored form larger than
// MaxOpenBytes is not held in memory; the refusal names the setting, and
// the version is built and kept as a local file instead.
func TestStoredFormOverOpenBoundIsRefused(t *testing.T) {
	st := newStore(t)
	publish(t, st, "a", "1.0.0", needleFiles)
	want := grep(t, newSearcher(t, st, t.TempDir(), 4), "a", "1.0.0", "needle")
	rec, err := st.Index(t.Context(), "a", "1.0.0", index.FormatVersion)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := newSearcher(t, st, dir, 4)
	s.opt.MaxOpenBytes = rec.Size - 1
	if _, err := s.fetch(t.Context(), "a", "1.0.0", rec); err == nil || !strings.Contains(err.Error(), "max-open-index-bytes") {
		t.Fatalf("fetch of a stored form over the bound: %v, want an error naming max-open-index-bytes", err)
	}
	if got := grep(t, s, "a", "1.0.0", "needle"); !slices.Equal(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.Base(s.localPath("a", "1.0.0")))); err != nil {
		t.Errorf("the rebuilt index is not kept as a local file: %v", err)
	}
}

// TestStoredTextReadInBatches: a grep of a stored form reaching 60
// contents reads their bodies from the store in batches (3 Blobs calls:
// offers of 16, 16 and 32), each body once, and answers as the built file
// does; the second grep reads nothing.
func TestStoredTextReadInBatches(t *testing.T) {
	st := newStore(t)
	files := map[string]string{}
	for i := range 60 {
		files[fmt.Sprintf("f%02d.js", i)] = fmt.Sprintf("export const needle%d = %d;\n", i, i)
	}
	publish(t, st, "a", "1.0.0", files)
	want := grep(t, newSearcher(t, st, t.TempDir(), 4), "a", "1.0.0", `needle\d+`)
	if len(want) != 60 {
		t.Fatalf("from the built file: %d matches, want 60", len(want))
	}

	s := newSearcher(t, st, t.TempDir(), 4)
	st.mu.Lock()
	clear(st.reads)
	st.batches = 0
	st.mu.Unlock()
	for range 2 {
		if got := grep(t, s, "a", "1.0.0", `needle\d+`); !slices.Equal(got, want) {
			t.Fatalf("from the stored form: %q, want %q", got, want)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for p, body := range files {
		if n := st.reads[hashOf(body)]; n != 1 {
			t.Errorf("%s read %d times, want once", p, n)
		}
	}
	if st.batches != 3 {
		t.Errorf("%d batch reads, want 3", st.batches)
	}
}
