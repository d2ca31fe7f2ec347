package search

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/store"
)

// spoolFiles is a version whose bodies are big enough to be compressed.
func spoolFiles() map[string]string {
	files := map[string]string{"bin.dat": "\x00binary needle"}
	for i := range 20 {
		var b strings.Builder
		for j := range 100 {
			fmt.Fprintf(&b, "export function needle_%d_%d() { return %d; }\n", i, j, i*j)
		}
		files[fmt.Sprintf("lib/f%02d.js", i)] = b.String()
	}
	files["lib/copy.js"] = files["lib/f03.js"]
	return files
}

// fillThroughSpool stores files as name@version as a fill does, through
// s.Spool.
func fillThroughSpool(t *testing.T, s *Searcher, st store.Store, name, version string, files map[string]string) {
	t.Helper()
	w, done := s.Spool(st, name, version)
	defer done()
	if err := publishThrough(t, w, name, version, files); err != nil {
		t.Fatal(err)
	}
}

// spoolSearcher is a Searcher with the mirror's options (ScanFirst on).
func spoolSearcher(t *testing.T, st Store, opt Options) *Searcher {
	t.Helper()
	s, err := New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func blobReads(st *countingStore) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := 0
	for _, c := range st.reads {
		n += c
	}
	return n
}

// TestSpooledBodiesBuildWithoutReadingTheStore: the first grep (a scan
// index) and the full build of a version filled through Spool read every
// body from the spool, none from the store, and answer exactly what a
// build from the store answers. Once the full build is done the spool is
// closed and its bytes are given back.
func TestSpooledBodiesBuildWithoutReadingTheStore(t *testing.T) {
	st := newStore(t)
	files := spoolFiles()
	s := spoolSearcher(t, st, DefaultOptions(t.TempDir()))
	fillThroughSpool(t, s, st, "p", "1.0.0", files)
	if s.spooled.Load() == 0 {
		t.Fatal("nothing was spooled")
	}
	q := index.Query{Pattern: `needle_3_\d+\(`, MaxMatches: 1000}
	first, err := s.Search(t.Context(), "p", "1.0.0", q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ensure(t.Context(), "p", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	s.bg.Wait()
	if n := blobReads(st); n != 0 {
		t.Errorf("the builds read %d bodies from the store, want 0", n)
	}
	if n := s.spooled.Load(); n != 0 {
		t.Errorf("%d bytes still spooled after the full build", n)
	}
	if len(s.spools) != 0 {
		t.Errorf("%d spools still registered after the full build", len(s.spools))
	}

	// The same version built from the store alone answers the same.
	other := newSearcher(t, st, t.TempDir(), 8)
	other.opt.ScanFirst = false
	publish(t, st, "q", "1.0.0", files)
	want, err := other.Search(t.Context(), "q", "1.0.0", q)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Matches) != 200 || !reflect.DeepEqual(first, want) {
		t.Errorf("from the spool: %d matches, from the store: %d; they differ", len(first.Matches), len(want.Matches))
	}
}

// TestSpooledBodyFailingItsChecksumIsReadFromTheStore: a spooled body whose
// bytes changed on disk is never served; the build reads that body from
// the store and the answer is the store's.
func TestSpooledBodyFailingItsChecksumIsReadFromTheStore(t *testing.T) {
	st := newStore(t)
	files := spoolFiles()
	s := spoolSearcher(t, st, DefaultOptions(t.TempDir()))
	fillThroughSpool(t, s, st, "p", "1.0.0", files)
	b := s.spools[key("p", "1.0.0")]
	victim := store.HashOf([]byte(files["lib/f05.js"]))
	at := b.at[victim]
	// "needle_5_" becomes "NEEDLE_5_" in the spool, not in the store.
	if _, err := b.f.WriteAt([]byte("NEEDLE"), at.off+len64("export function ")); err != nil {
		t.Fatal(err)
	}
	res, err := s.Search(t.Context(), "p", "1.0.0", index.Query{Pattern: `needle_5_0\(`})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 1 || res.Matches[0].File != "lib/f05.js" {
		t.Errorf("matches = %+v, want lib/f05.js's needle_5_0 from the store's body", res.Matches)
	}
	st.mu.Lock()
	reads := st.reads[victim]
	st.mu.Unlock()
	if reads == 0 {
		t.Errorf("the altered body was not read from the store")
	}
	s.bg.Wait()
}

func len64(s string) int64 { return int64(len(s)) }

// TestFailedIngestLeavesNoSpool: bodies spooled by an ingest whose commit
// fails are never registered for builds, and once the ingest is done its
// file is closed and nothing of it is left in the cache directory (the
// file was unlinked on creation, so neither is anything after a crash).
func TestFailedIngestLeavesNoSpool(t *testing.T) {
	st := newStore(t)
	dir := t.TempDir()
	s := spoolSearcher(t, st, DefaultOptions(dir))
	w, done := s.Spool(st, "p", "1.0.0")
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the spool is visible in the cache directory: %v", ents)
	}
	files := spoolFiles()
	body := files["lib/f01.js"]
	if err := w.PutBlobs(t.Context(), []store.Blob{{Hash: store.HashOf([]byte(body)), Data: []byte(body)}}); err != nil {
		t.Fatal(err)
	}
	// A file whose body was never stored: the commit fails.
	missing := store.NewVersion{Name: "p", Version: "1.0.0", Integrity: "sha512-x", Files: []store.File{
		{Path: "a.js", Size: 3, Hash: store.HashOf([]byte("abc"))}}}
	if err := w.CommitVersion(t.Context(), missing); !errors.Is(err, store.ErrMissingBlob) {
		t.Fatalf("commit: %v, want ErrMissingBlob", err)
	}
	done()
	if len(s.spools) != 0 || s.spooled.Load() != 0 {
		t.Errorf("after a failed commit: %d spools registered, %d bytes spooled; want none", len(s.spools), s.spooled.Load())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left in the cache directory: %v", ents)
	}
}

// TestSpoolBytesBoundsTheSpool: an ingest whose bodies exceed SpoolBytes
// stops spooling (its builds read the store, with the same answers), and
// never holds more than SpoolBytes.
func TestSpoolBytesBoundsTheSpool(t *testing.T) {
	st := newStore(t)
	opt := DefaultOptions(t.TempDir())
	opt.SpoolBytes = 10_000 // less than one version's bodies
	s := spoolSearcher(t, st, opt)
	w, done := s.Spool(st, "p", "1.0.0")
	if err := publishThrough(t, w, "p", "1.0.0", spoolFiles()); err != nil {
		t.Fatal(err)
	}
	if n := s.spooled.Load(); n > opt.SpoolBytes {
		t.Errorf("spooled %d bytes, over SpoolBytes %d", n, opt.SpoolBytes)
	}
	done()
	if len(s.spools) != 0 || s.spooled.Load() != 0 {
		t.Errorf("a stopped spool is registered (%d) or holds bytes (%d)", len(s.spools), s.spooled.Load())
	}
	if got := grep(t, s, "p", "1.0.0", `needle_7_99\(`); len(got) != 1 {
		t.Errorf("grep from the store = %v, want one match", got)
	}
	s.bg.Wait()
}

// TestLaterBuildsScanThenFullFromTheSpool: after a fill through Spool,
// Later builds the scan index (which a grep arriving meanwhile would join)
// and then the full index, both from the spooled bodies; then the spool is
// gone and the full index is open and stored.
func TestLaterBuildsScanThenFullFromTheSpool(t *testing.T) {
	st := newStore(t)
	s := spoolSearcher(t, st, DefaultOptions(t.TempDir()))
	fillThroughSpool(t, s, st, "p", "1.0.0", spoolFiles())
	if _, err := s.Later(time.Minute).Ensure(t.Context(), "p", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	s.bg.Wait()
	if n := st.builds(); n != 2 {
		t.Errorf("%d builds, want 2: the scan index, then the full one", n)
	}
	if n := blobReads(st); n != 0 {
		t.Errorf("the builds read %d bodies from the store, want 0", n)
	}
	e := s.lookup(key("p", "1.0.0"))
	if e == nil || e.scan {
		t.Fatal("the full index is not open")
	}
	s.release(e)
	if _, err := st.Index(t.Context(), "p", "1.0.0", index.FormatVersion); err != nil {
		t.Errorf("the full index was not stored: %v", err)
	}
	if n := s.spooled.Load(); n != 0 {
		t.Errorf("%d bytes still spooled", n)
	}
}

// TestEmptyBodiesAreStoredThroughTheSpool: a version whose files are all
// empty is written to the store from the spool with empty bodies, not
// missing ones (a nil body is NULL to SQLite, which refuses it).
func TestEmptyBodiesAreStoredThroughTheSpool(t *testing.T) {
	st := newStore(t)
	s := spoolSearcher(t, st, DefaultOptions(t.TempDir()))
	fillThroughSpool(t, s, st, "p", "1.0.0", map[string]string{"a.js": "", "b/c.ts": ""})
	files, err := st.Files(t.Context(), "p", "1.0.0")
	if err != nil || len(files) != 2 {
		t.Fatalf("files = %v, %v", files, err)
	}
	if b, err := st.Blob(t.Context(), files[0].Hash); err != nil || len(b) != 0 {
		t.Errorf("the empty body: %q, %v", b, err)
	}
}

// offersSeen is a store that records, as each version is committed,
// whether the searcher offered it before (early.go).
type offersSeen struct {
	store.Store
	s       *Searcher
	offered map[string]bool
}

func (o *offersSeen) CommitVersion(ctx context.Context, v store.NewVersion) error {
	k := key(v.Name, v.Version)
	if view := o.s.takeVerified(k); view != nil {
		o.offered[k] = len(view.files) == len(v.Files)
		o.s.releaseBodies(view.b)
	}
	return o.Store.CommitVersion(ctx, v)
}

// TestSpoolPastTheBudgetBesideAnotherIsNotOffered: a fill whose bodies
// no longer fit SpoolBytes beside another version's spool (kept for its
// builds) stops spooling; it is never offered, not even in part, its
// requests wait for the commit, which holds every file, and its grep
// answers from the store. The first, which fit, was offered whole.
func TestSpoolPastTheBudgetBesideAnotherIsNotOffered(t *testing.T) {
	st := newStore(t)
	files := spoolFiles()
	var distinct int64
	for p, body := range files {
		if p != "lib/copy.js" { // f03's body again
			distinct += int64(len(body))
		}
	}
	opt := DefaultOptions(t.TempDir())
	opt.SpoolBytes = distinct + distinct/2 // one version, not two
	s := spoolSearcher(t, st, opt)
	seen := &offersSeen{Store: st, s: s, offered: map[string]bool{}}
	fillThroughSpool(t, s, seen, "a", "1.0.0", files)
	fillThroughSpool(t, s, seen, "b", "1.0.0", files)
	if !seen.offered["a@1.0.0"] {
		t.Errorf("the version that fit the spool was not offered whole: %v", seen.offered)
	}
	if _, ok := seen.offered["b@1.0.0"]; ok {
		t.Errorf("the version past the spool's budget was offered: %v", seen.offered)
	}
	if n := s.spooled.Load(); n > opt.SpoolBytes {
		t.Errorf("spooled %d bytes, over SpoolBytes %d", n, opt.SpoolBytes)
	}
	if got, err := st.Files(t.Context(), "b", "1.0.0"); err != nil || len(got) != len(files) {
		t.Errorf("b@1.0.0 committed %d files, %v; want %d", len(got), err, len(files))
	}
	if got := grep(t, s, "b", "1.0.0", `needle_7_99\(`); len(got) != 1 {
		t.Errorf("grep of the version past the budget = %v, want one match", got)
	}
	s.bg.Wait()
}

// TestSpooledBodyFailingItsChecksumIsNeverStored: the store's writes read
// the bodies back from the spool after the download is verified; one
// whose bytes changed on disk since it was spooled fails the commit
// (it can be read from nowhere else), and neither it nor the version
// reaches the store.
func TestSpooledBodyFailingItsChecksumIsNeverStored(t *testing.T) {
	st := newStore(t)
	s := spoolSearcher(t, st, DefaultOptions(t.TempDir()))
	w, done := s.Spool(st, "p", "1.0.0")
	defer done()
	files := spoolFiles()
	var v store.NewVersion
	v.Name, v.Version, v.Integrity = "p", "1.0.0", "sha512-x"
	var blobs []store.Blob
	for _, path := range slices.Sorted(maps.Keys(files)) {
		h := store.HashOf([]byte(files[path]))
		blobs = append(blobs, store.Blob{Hash: h, Data: []byte(files[path])})
		v.Files = append(v.Files, store.File{Path: path, Size: int64(len(files[path])), Hash: h})
	}
	if err := w.PutBlobs(t.Context(), blobs); err != nil {
		t.Fatal(err)
	}
	sw := w.(*spoolWriter)
	victim := store.HashOf([]byte(files["lib/f05.js"]))
	at := sw.b.at[victim]
	if _, err := sw.b.f.WriteAt([]byte("NEEDLE"), at.off+len64("export function ")); err != nil {
		t.Fatal(err)
	}
	if err := w.CommitVersion(t.Context(), v); err == nil || !strings.Contains(err.Error(), "does not match its checksum") {
		t.Fatalf("commit with an altered spooled body: %v, want the checksum's error", err)
	}
	if _, err := st.Blob(t.Context(), victim); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the altered body reached the store: %v", err)
	}
	if _, err := st.Files(t.Context(), "p", "1.0.0"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the version was committed: %v", err)
	}
}

// writesInFlight is a store whose PutBlobs records the body bytes being
// written at once, and holds the writes of version held until release is
// closed.
type writesInFlight struct {
	store.Store
	entered chan string // the version whose bodies a PutBlobs took
	release chan struct{}
	mu      sync.Mutex
	now     int64
	most    int64
}

func (w *writesInFlight) PutBlobs(ctx context.Context, blobs []store.Blob) error {
	var n int64
	for _, b := range blobs {
		n += int64(len(b.Data))
	}
	w.mu.Lock()
	w.now += n
	w.most = max(w.most, w.now)
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.now -= n
		w.mu.Unlock()
	}()
	w.entered <- string(blobs[0].Data[:1])
	<-w.release
	return w.Store.PutBlobs(ctx, blobs)
}

// TestWriteBackBytesBoundsBodiesReadBackAtOnce: two fills commit at once
// through the spool, each with one body larger than WriteBackBytes (as
// @next/swc's platform packages each hold a 90-140 MB binary): the
// second waits until the first's bodies are written, so the store is
// never handed both at once, and both then commit whole.
func TestWriteBackBytesBoundsBodiesReadBackAtOnce(t *testing.T) {
	st := newStore(t)
	opt := DefaultOptions(t.TempDir())
	opt.WriteBackBytes = 64 << 10
	s := spoolSearcher(t, st, opt)
	waited := make(chan struct{}, 2)
	s.onWriteBackWait = func() { waited <- struct{}{} }
	w := &writesInFlight{Store: st, entered: make(chan string, 2), release: make(chan struct{})}
	open := sync.OnceFunc(func() { close(w.release) })
	t.Cleanup(open) // before s.Close, which waits for the writes
	commit := func(name string) <-chan error {
		done := make(chan error, 1)
		sw, release := s.Spool(w, name, "1.0.0")
		body := name + strings.Repeat("x", 100<<10) // over WriteBackBytes
		go func() {
			defer release()
			done <- publishThrough(t, sw, name, "1.0.0", map[string]string{"big.node": body})
		}()
		return done
	}
	a := commit("a")
	if got := <-w.entered; got != "a" {
		t.Fatalf("the store took %s's bodies first, want a's", got)
	}
	b := commit("b")
	select {
	case <-waited:
	case got := <-w.entered:
		t.Fatalf("the store took %s's bodies while a's were in flight, %d bytes at once with WriteBackBytes %d", got, 2*(100<<10+1), opt.WriteBackBytes)
	}
	open()
	for name, done := range map[string]<-chan error{"a": a, "b": b} {
		if err := <-done; err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if files, err := st.Files(t.Context(), name, "1.0.0"); err != nil || len(files) != 1 {
			t.Errorf("%s@1.0.0 committed %d files, %v; want 1", name, len(files), err)
		}
	}
	if most := w.most; most > 100<<10+1 {
		t.Errorf("the store was handed %d body bytes at once, want one body's %d", most, 100<<10+1)
	}
	s.bg.Wait()
}

// countedWrites is a store that counts its PutBlobs calls.
type countedWrites struct {
	store.Store
	puts atomic.Int64
}

func (c *countedWrites) PutBlobs(ctx context.Context, blobs []store.Blob) error {
	c.puts.Add(1)
	return c.Store.PutBlobs(ctx, blobs)
}

// TestAWaitingGrepHoldsTheStoresWritesUntilAnswered: when a grep waits for
// a version (ForGrep) as its download is verified, the offer holds the
// store's writes behind the ingest until the grep's first search has
// ended, so they do not share the cores with the answer; a list or read
// waiting holds nothing.
func TestAWaitingGrepHoldsTheStoresWritesUntilAnswered(t *testing.T) {
	for _, grepping := range []bool{true, false} {
		st := &countedWrites{Store: newStore(t)}
		s := spoolSearcher(t, st, DefaultOptions(t.TempDir()))
		ctx := t.Context()
		if grepping {
			ctx = ForGrep(ctx)
		}
		type offer struct {
			files []store.File
			held  int
		}
		offered := make(chan offer, 1)
		go func() {
			files, _ := s.Verified(ctx, "p", "1.0.0", make(chan struct{}))
			v := s.takeVerified(key("p", "1.0.0"))
			defer s.releaseBodies(v.b)
			v.b.holds.mu.Lock()
			defer v.b.holds.mu.Unlock()
			offered <- offer{files, v.b.holds.n}
		}()
		for waiting := false; !waiting; { // the waiter is counted before the fill starts
			s.mu.Lock()
			waiting = s.grepWaits[key("p", "1.0.0")] > 0 || !grepping
			s.mu.Unlock()
			runtime.Gosched()
		}
		w, done := s.Spool(st, "p", "1.0.0")
		committed := make(chan error, 1)
		go func() { committed <- publishThrough(t, w, "p", "1.0.0", spoolFiles()) }()
		o := <-offered
		if grepping && (o.held != 1 || st.puts.Load() != 0) {
			t.Errorf("a grep waited: the offer holds the store's writes %d times, %d written; want held once, none written", o.held, st.puts.Load())
		}
		if !grepping && o.held != 0 {
			t.Errorf("no grep waited: the offer holds the store's writes %d times, want 0", o.held)
		}
		if got := grep(t, s, "p", "1.0.0", `needle_7_99\(`); len(got) != 1 {
			t.Errorf("grep of the offer = %v", got)
		}
		// The first search's end lets the writes go (not earlyHoldMax):
		// the commit follows.
		s.mu.Lock()
		e := s.open[key("p", "1.0.0")]
		s.mu.Unlock()
		if e == nil || e.early == nil {
			t.Fatal("the grep was not answered from the offer")
		}
		e.early.b.holds.mu.Lock()
		if n := e.early.b.holds.n; n != 0 {
			t.Errorf("after the first search the store's writes are held %d times, want 0", n)
		}
		e.early.b.holds.mu.Unlock()
		if err := <-committed; err != nil {
			t.Fatal(err)
		}
		done()
		s.bg.Wait()
	}
}
