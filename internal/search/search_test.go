package search

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// countingStore counts index builds (Files calls) and body reads over a
// real store.
type countingStore struct {
	*sqlite.Store
	mu    sync.Mutex
	lists int
	reads map[store.Hash]int
	// batches counts Blobs calls (their bodies count in reads)
	batches int
}

func (c *countingStore) Blob(ctx context.Context, h store.Hash) ([]byte, error) {
	c.mu.Lock()
	if c.reads == nil {
		c.reads = map[store.Hash]int{}
	}
	c.reads[h]++
	c.mu.Unlock()
	return c.Store.Blob(ctx, h)
}

// Blobs counts each body it gives as a read, and the call as a batch.
func (c *countingStore) Blobs(ctx context.Context, hs []store.Hash, fn func(store.Hash, []byte) error) error {
	c.mu.Lock()
	c.batches++
	c.mu.Unlock()
	return c.Store.Blobs(ctx, hs, func(h store.Hash, b []byte) error {
		c.mu.Lock()
		if c.reads == nil {
			c.reads = map[store.Hash]int{}
		}
		c.reads[h]++
		c.mu.Unlock()
		return fn(h, b)
	})
}

func (c *countingStore) Files(ctx context.Context, name, version string) ([]store.File, error) {
	c.mu.Lock()
	c.lists++
	c.mu.Unlock()
	return c.Store.Files(ctx, name, version)
}

func (c *countingStore) builds() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists
}

func newStore(t testing.TB) *countingStore {
	t.Helper()
	st, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &countingStore{Store: st}
}

// publish commits name@version with files (path → body) to st.
func publish(t testing.TB, st store.Store, name, version string, files map[string]string) {
	t.Helper()
	if err := publishThrough(t, st, name, version, files); err != nil {
		t.Fatal(err)
	}
}

// publishThrough stores files as name@version through w, as ingest does:
// the bodies in two PutBlobs calls, then one commit.
func publishThrough(t testing.TB, w store.Writer, name, version string, files map[string]string) error {
	t.Helper()
	v := store.NewVersion{Name: name, Version: version, Integrity: "sha512-x"}
	var blobs []store.Blob
	for p, body := range files {
		h := store.HashOf([]byte(body))
		blobs = append(blobs, store.Blob{Hash: h, Data: []byte(body)})
		v.Files = append(v.Files, store.File{Path: p, Size: int64(len(body)), Hash: h})
	}
	slices.SortFunc(v.Files, func(a, b store.File) int { return strings.Compare(a.Path, b.Path) })
	half := len(blobs) / 2
	for _, part := range [][]store.Blob{blobs[:half], blobs[half:]} {
		if err := w.PutBlobs(t.Context(), part); err != nil {
			return err
		}
	}
	return w.CommitVersion(t.Context(), v)
}

func newSearcher(t *testing.T, st Store, dir string, maxOpen int) *Searcher {
	t.Helper()
	opt := DefaultOptions(dir)
	opt.MaxOpen, opt.ChunkBytes = maxOpen, 64 // tiny chunks: an index spans several blobs
	opt.ScanFirst = false                     // these tests count full builds; scan_test.go covers ScanFirst
	s, err := New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func grep(t *testing.T, s *Searcher, name, version, pattern string) []string {
	t.Helper()
	res, err := s.Search(t.Context(), name, version, index.Query{Pattern: pattern})
	if err != nil {
		t.Fatalf("Search %s@%s %q: %v", name, version, pattern, err)
	}
	var out []string
	for _, m := range res.Matches {
		out = append(out, m.File+":"+m.Text)
	}
	return out
}

func TestBuildOnceThenLocalThenStore(t *testing.T) {
	st := newStore(t)
	publish(t, st, "a", "1.0.0", map[string]string{"x.js": "hello world\n", "y.js": "goodbye\n"})
	dir := t.TempDir()
	s := newSearcher(t, st, dir, 4)

	var wg sync.WaitGroup
	for range 8 { // concurrent first greps build once
		wg.Go(func() {
			if got := grep(t, s, "a", "1.0.0", "world"); strings.Join(got, "|") != "x.js:hello world" {
				t.Errorf("got %q", got)
			}
		})
	}
	wg.Wait()
	if n := st.builds(); n != 1 {
		t.Fatalf("built %d times, want 1", n)
	}
	rec, err := st.Index(t.Context(), "a", "1.0.0", index.FormatVersion)
	if err != nil || len(rec.Chunks) < 2 {
		t.Fatalf("stored index: %+v, %v (want several 64-byte chunks)", rec, err)
	}

	// A second searcher on the same disk cache opens the local file.
	s2 := newSearcher(t, st, dir, 4)
	grep(t, s2, "a", "1.0.0", "goodbye")
	// A third with an empty cache fetches it from the store.
	s3 := newSearcher(t, st, t.TempDir(), 4)
	grep(t, s3, "a", "1.0.0", "goodbye")
	if n := st.builds(); n != 1 {
		t.Errorf("built %d times after reopening, want 1", n)
	}
}

func TestCorruptLocalFileIsReplaced(t *testing.T) {
	st := newStore(t)
	publish(t, st, "a", "1.0.0", map[string]string{"x.js": "hello world\n"})
	dir := t.TempDir()
	s := newSearcher(t, st, dir, 4)
	grep(t, s, "a", "1.0.0", "hello")
	s.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*.idx"))
	if len(files) != 1 {
		t.Fatalf("local cache holds %v", files)
	}
	if err := os.WriteFile(files[0], []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	s2 := newSearcher(t, st, dir, 4)
	if got := grep(t, s2, "a", "1.0.0", "hello"); len(got) != 1 {
		t.Errorf("after corrupting the local file: %q", got)
	}
	// Served from the stored index instead; the bad file is gone.
	if _, err := os.Stat(files[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the corrupt local file was kept: %v", err)
	}
	if n := st.builds(); n != 1 {
		t.Errorf("built %d times, want 1 (the stored index serves)", n)
	}
}

// TestUnwritableCacheServesFromMemory: a local cache that cannot be
// written (disk full, read-only) degrades grep to memory, never fails it.
func TestUnwritableCacheServesFromMemory(t *testing.T) {
	st := newStore(t)
	publish(t, st, "a", "1.0.0", map[string]string{"x.js": "hello world\n"})
	dir := t.TempDir()
	s := newSearcher(t, st, dir, 4)
	// Replace the cache dir by a file: every create under it fails, even
	// for root (which a read-only directory would not stop).
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := grep(t, s, "a", "1.0.0", "hello"); len(got) != 1 {
		t.Errorf("grep with an unwritable cache: %q", got)
	}
}

// TestEvictionWaitsForSearches: with room for one open index, opening a
// second closes the first only once no search uses it.
func TestEvictionWaitsForSearches(t *testing.T) {
	st := newStore(t)
	publish(t, st, "a", "1.0.0", map[string]string{"x.js": "alpha\n"})
	publish(t, st, "b", "1.0.0", map[string]string{"x.js": "beta\n"})
	s := newSearcher(t, st, t.TempDir(), 1)
	held, err := s.acquire(t.Context(), "a", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	grep(t, s, "b", "1.0.0", "beta") // evicts a while it is held
	res, err := held.ix.Search(t.Context(), index.Query{Pattern: "alpha"}, s.opt.Search)
	if err != nil || len(res.Matches) != 1 {
		t.Fatalf("search on an evicted but held index: %+v, %v", res, err)
	}
	s.release(held)
	if _, err := held.ix.Search(t.Context(), index.Query{Pattern: "alpha"}, s.opt.Search); err == nil {
		t.Errorf("evicted index still open after its last release")
	}
	if got := grep(t, s, "a", "1.0.0", "alpha"); len(got) != 1 { // reopened from disk
		t.Errorf("after eviction: %q", got)
	}
}

func TestLaterBuildsInBackground(t *testing.T) {
	st := newStore(t)
	publish(t, st, "a", "1.0.0", map[string]string{"x.js": "alpha\n"})
	s := newSearcher(t, st, t.TempDir(), 4)
	if _, err := s.Later(time.Minute).Ensure(t.Context(), "a", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	s.bg.Wait()
	if _, err := st.Index(t.Context(), "a", "1.0.0", index.FormatVersion); err != nil {
		t.Errorf("background build did not store the index: %v", err)
	}
}

// TestReopenSkipsChecksumOfCheckedFile: an index evicted from the open
// set and reopened from the local disk is not checksummed again while its
// file is the one this node checked (a project grep reopens hundreds of
// indexes, and the checksum was most of its time); a file written in
// place after the check is checked in full again, caught and replaced.
func TestReopenSkipsChecksumOfCheckedFile(t *testing.T) {
	st := newStore(t)
	publish(t, st, "a", "1.0.0", map[string]string{"x.js": "alpha\n"})
	publish(t, st, "b", "1.0.0", map[string]string{"x.js": "beta\n"})
	dir := t.TempDir()
	s := newSearcher(t, st, dir, 1) // room for one: a and b evict each other
	// Trust a file checked this very instant (the racy case has its own
	// test); the change below moves mtime far away, so it is seen.
	s.disk.racyWindow = 0
	for range 3 {
		if got := grep(t, s, "a", "1.0.0", "alpha"); len(got) != 1 {
			t.Fatalf("grep a: %q", got)
		}
		if got := grep(t, s, "b", "1.0.0", "beta"); len(got) != 1 {
			t.Fatalf("grep b: %q", got)
		}
	}
	if n := s.checksums.Load(); n != 0 {
		t.Errorf("%d reopens checked the checksum of a file this node published and checked", n)
	}

	// A second searcher on the same directory has checked nothing yet:
	// its first open of each file checks it, later ones do not.
	s2 := newSearcher(t, st, dir, 1)
	s2.disk.racyWindow = 0
	for range 3 {
		grep(t, s2, "a", "1.0.0", "alpha")
		grep(t, s2, "b", "1.0.0", "beta")
	}
	if n := s2.checksums.Load(); n != 2 {
		t.Errorf("a fresh searcher checked %d times, want once per file (2)", n)
	}

	// Flip one byte in place (same size, same inode): the identity
	// changed, so the reopen checks in full, finds it corrupt and
	// fetches the index from the store again.
	path := s2.localPath("a", "1.0.0")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, 40); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b, 40); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// The kernel stamps the write from a coarse clock, possibly the very
	// tick recorded at the check (TestRacyCheckIsRepeated covers that);
	// an editor or copy sets a time of its own.
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	before := s2.checksums.Load()
	if got := grep(t, s2, "a", "1.0.0", "alpha"); len(got) != 1 {
		t.Fatalf("grep a after its file changed: %q", got)
	}
	if n := s2.checksums.Load() - before; n != 1 {
		t.Errorf("the changed file was checked %d times on reopen, want 1", n)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the changed local file was kept: %v", err)
	}
}

// TestRacyCheckIsRepeated: a file whose change time is as recent as its
// check may yet be written within the same clock tick without changing
// its identity, so it is not trusted: it is checked again on each reopen
// until its change time is older than racyWindow.
func TestRacyCheckIsRepeated(t *testing.T) {
	st := newStore(t)
	publish(t, st, "a", "1.0.0", map[string]string{"x.js": "alpha\n"})
	publish(t, st, "b", "1.0.0", map[string]string{"x.js": "beta\n"})
	s := newSearcher(t, st, t.TempDir(), 1)
	s.disk.racyWindow = 24 * time.Hour // every file here is racy
	for range 3 {
		grep(t, s, "a", "1.0.0", "alpha")
		grep(t, s, "b", "1.0.0", "beta")
	}
	// Published (checked, not trusted), then reopened twice each.
	if n := s.checksums.Load(); n != 4 {
		t.Errorf("racy files were checked %d times on reopen, want 4 (every reopen)", n)
	}
}

// TestStoredIndexHoldsNoText: the store keeps a version's index without
// its text (the bodies it already holds), and a node with an empty cache
// reads the text from those bodies and answers the same.
func TestStoredIndexHoldsNoText(t *testing.T) {
	st := newStore(t)
	body := strings.Repeat("export const needleInTheText = 1;\n", 40)
	publish(t, st, "a", "1.0.0", map[string]string{"x.js": body, "y.js": "goodbye\n", "z.bin": "\x00\x01needleInTheText"})
	s := newSearcher(t, st, t.TempDir(), 4)
	want := grep(t, s, "a", "1.0.0", "needleInTheText")
	if len(want) != 40 {
		t.Fatalf("first grep: %d matches, want 40", len(want))
	}
	rec, err := st.Index(t.Context(), "a", "1.0.0", index.FormatVersion)
	if err != nil {
		t.Fatal(err)
	}
	var stored []byte
	for _, h := range rec.Chunks {
		b, err := st.Blob(t.Context(), h)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, b...)
	}
	if bytes.Contains(stored, []byte("needleInTheText")) || bytes.Contains(stored, []byte("goodbye")) {
		t.Fatal("the stored index holds text the store's bodies already hold")
	}
	fresh := newSearcher(t, st, t.TempDir(), 4)
	if got := grep(t, fresh, "a", "1.0.0", "needleInTheText"); !slices.Equal(got, want) {
		t.Fatalf("from the store: %q, want %q", got, want)
	}
	if n := st.builds(); n != 1 {
		t.Errorf("built %d times, want 1 (the second node serves the stored index)", n)
	}
}

// TestCacheBoundClosesEvictedIndexes: a local file the bounded cache
// removes is also closed (once its searches end), or its mapping would
// keep the disk space while --max-open-indexes keeps it open; the
// version then comes back from the store with the same answers, and the
// version that stayed is still right.
func TestCacheBoundClosesEvictedIndexes(t *testing.T) {
	st := newStore(t)
	publish(t, st, "a", "1.0.0", map[string]string{"x.js": strings.Repeat("const alpha = 1;\n", 50)})
	publish(t, st, "a", "2.0.0", map[string]string{"x.js": strings.Repeat("const omega = 2;\n", 50)})
	// The size of one index file, measured on another store (which
	// would otherwise serve 1.0.0 from the index the probe stored).
	other := newStore(t)
	publish(t, other, "a", "1.0.0", map[string]string{"x.js": strings.Repeat("const alpha = 1;\n", 50)})
	probe := newSearcher(t, other, t.TempDir(), 8)
	wantA := grep(t, probe, "a", "1.0.0", "alpha")
	one := probe.disk.bytes()

	dir := t.TempDir()
	opt := DefaultOptions(dir)
	opt.ScanFirst, opt.CacheBytes = false, one+one/2 // room for one index, not two
	s, err := New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if got := grep(t, s, "a", "1.0.0", "alpha"); !slices.Equal(got, wantA) {
		t.Fatalf("1.0.0: %q, want %q", got, wantA)
	}
	// A search of 1.0.0 in flight while 2.0.0 evicts its file.
	held, err := s.acquire(t.Context(), "a", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	wantB := grep(t, s, "a", "2.0.0", "omega")
	if len(wantB) != 50 {
		t.Fatalf("2.0.0: %d matches, want 50", len(wantB))
	}
	if _, err := os.Stat(s.localPath("a", "1.0.0")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("1.0.0's local file after eviction: %v", err)
	}
	if e := s.lookup(key("a", "1.0.0")); e != nil {
		s.release(e)
		t.Fatal("1.0.0's index stayed open after its file was removed")
	}
	if res, err := held.ix.Search(t.Context(), index.Query{Pattern: "alpha"}, s.opt.Search); err != nil || len(res.Matches) != len(wantA) {
		t.Fatalf("the search in flight on the evicted index: %d matches, %v", len(res.Matches), err)
	}
	s.release(held) // closes it
	if _, err := held.ix.Search(t.Context(), index.Query{Pattern: "alpha"}, s.opt.Search); !errors.Is(err, index.ErrClosed) {
		t.Fatalf("the evicted index after its last search: %v, want ErrClosed", err)
	}
	if got := grep(t, s, "a", "2.0.0", "omega"); !slices.Equal(got, wantB) {
		t.Fatalf("2.0.0 after 1.0.0 was evicted: %q, want %q", got, wantB)
	}
	if got := grep(t, s, "a", "1.0.0", "alpha"); !slices.Equal(got, wantA) {
		t.Fatalf("1.0.0 back from the store: %q, want %q", got, wantA)
	}
	if n := s.disk.bytes(); n > opt.CacheBytes {
		t.Errorf("the cache holds %d bytes, over its bound %d", n, opt.CacheBytes)
	}
	if n := st.builds(); n != 2 {
		t.Errorf("built %d times, want 2 (1.0.0 came back from the store)", n)
	}
}

// TestOpenBytesBound: past MaxOpenBytes of mapped index files the least
// recently used indexes are closed, however few are open; the index just
// opened always stays, even alone over the bound.
func TestOpenBytesBound(t *testing.T) {
	st := newStore(t)
	for _, name := range []string{"a", "b", "c"} {
		publish(t, st, name, "1.0.0", map[string]string{"x.js": name + " " + strings.Repeat("filler line\n", 50)})
	}
	s := newSearcher(t, st, t.TempDir(), 100)
	stats, err := s.Ensure(t.Context(), "a", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	s.opt.MaxOpenBytes = 2*stats.IndexBytes + stats.IndexBytes/2 // room for two
	grep(t, s, "b", "1.0.0", "filler")
	grep(t, s, "a", "1.0.0", "filler") // a is now more recent than b
	grep(t, s, "c", "1.0.0", "filler") // closes b
	s.mu.Lock()
	_, a := s.open[key("a", "1.0.0")]
	_, b := s.open[key("b", "1.0.0")]
	_, c := s.open[key("c", "1.0.0")]
	n, bytes := s.lru.Len(), s.openBytes
	s.mu.Unlock()
	if !a || b || !c || n != 2 || bytes > s.opt.MaxOpenBytes {
		t.Errorf("open after a, b, a, c with room for two: a %v b %v c %v, %d open, %d bytes (bound %d); want b closed", a, b, c, n, bytes, s.opt.MaxOpenBytes)
	}
	s.opt.MaxOpenBytes = 1 // smaller than any index
	grep(t, s, "b", "1.0.0", "filler")
	s.mu.Lock()
	_, b = s.open[key("b", "1.0.0")]
	n = s.lru.Len()
	s.mu.Unlock()
	if !b || n != 1 {
		t.Errorf("with a bound below one index: b open %v, %d open; want just b", b, n)
	}
}
