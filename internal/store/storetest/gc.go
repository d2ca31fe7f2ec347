package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/store"
)

// BlobAger is implemented by the stores the suite runs on (by a test
// wrapper, not by the store itself): it moves the time every stored blob
// was last written back by d, as if d had passed since, so the collector's
// grace is tested without sleeping or a clock in the store.
type BlobAger interface {
	AgeBlobs(ctx context.Context, d time.Duration) error
}

// Grace is the collector's grace in the suite; blobs are aged past it or
// not. A store whose PutBlobs refreshes only bodies older than some age
// must be opened with at most half of it (postgres.Options.
// BlobRefreshAfter), as the mirror does with its grace.
const Grace = time.Hour

// age moves every blob's written time back by d; the store must be
// wrapped with a BlobAger.
func age(t *testing.T, s store.Store, d time.Duration) {
	t.Helper()
	a, ok := s.(BlobAger)
	if !ok {
		t.Fatalf("%T does not implement storetest.BlobAger: wrap it in the store's test", s)
	}
	if err := a.AgeBlobs(t.Context(), d); err != nil {
		t.Fatalf("AgeBlobs: %v", err)
	}
}

// collect runs passes until one wraps (a whole sweep) and adds them up.
func collect(t *testing.T, s store.Store, limit int) store.BlobPass {
	t.Helper()
	var sum store.BlobPass
	for range 1000 {
		p, err := s.CollectBlobs(t.Context(), Grace, 0, limit)
		if err != nil {
			t.Fatalf("CollectBlobs: %v", err)
		}
		if !p.Ran {
			t.Fatalf("CollectBlobs did not run with every = 0")
		}
		sum.Add(p)
		if p.Wrapped {
			return sum
		}
	}
	t.Fatal("CollectBlobs never wrapped")
	return sum
}

func orphan(body string) store.Blob {
	return store.Blob{Hash: store.HashOf([]byte(body)), Data: []byte(body)}
}

// stored reports whether the blob with hash h is still stored.
func stored(t *testing.T, s store.Store, h store.Hash) bool {
	t.Helper()
	_, err := s.Blob(t.Context(), h)
	if errors.Is(err, store.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatalf("Blob(%x): %v", h[:4], err)
	}
	return true
}

func putBlobs(t *testing.T, s store.Store, blobs ...store.Blob) {
	t.Helper()
	if err := s.PutBlobs(t.Context(), blobs); err != nil {
		t.Fatalf("PutBlobs: %v", err)
	}
}

// testCollectOldUnreferenced: a body nothing names, older than the grace,
// is deleted; the bodies of a committed version are kept and it still
// reads whole, and a body shared with the orphan's version is kept too.
func testCollectOldUnreferenced(t *testing.T, s store.Store) {
	fx := small("1.0.0")
	commit(t, s, fx)
	gone := orphan("an ingest that failed its integrity check wrote this")
	putBlobs(t, s, gone)
	age(t, s, 2*Grace)
	p := collect(t, s, 100)
	if p.Deleted != 1 || p.Examined != len(fx.blobs)+1 || p.Freed <= 0 {
		t.Errorf("pass = %+v, want 1 of %d blobs deleted, bytes freed", p, len(fx.blobs)+1)
	}
	if stored(t, s, gone.Hash) {
		t.Error("the unreferenced old blob survived the pass")
	}
	checkReady(t, s, fx)
	// A second sweep finds nothing more.
	if p := collect(t, s, 100); p.Deleted != 0 {
		t.Errorf("second sweep deleted %d blobs", p.Deleted)
	}
}

// testCollectKeepsYoung: an unreferenced body written less than the grace
// ago is kept (an ingest may still commit it); once older, it goes.
func testCollectKeepsYoung(t *testing.T, s store.Store) {
	young := orphan("an ingest in flight wrote this")
	putBlobs(t, s, young)
	age(t, s, Grace/2)
	if p := collect(t, s, 100); p.Deleted != 0 || p.Examined != 1 {
		t.Errorf("pass = %+v, want the one blob examined and kept", p)
	}
	if !stored(t, s, young.Hash) {
		t.Fatal("a blob younger than the grace was deleted")
	}
	age(t, s, Grace)
	if p := collect(t, s, 100); p.Deleted != 1 {
		t.Errorf("pass = %+v, want the blob deleted once past the grace", p)
	}
}

// testCollectRePutRefreshes: an ingest that reuses a stored body (PutBlobs
// finds it and skips writing it) makes it young again, so a pass between
// its PutBlobs and its commit keeps the body and the commit succeeds.
func testCollectRePutRefreshes(t *testing.T, s store.Store) {
	fx := small("1.0.0")
	put(t, s, fx) // an ingest that failed before its commit
	age(t, s, 2*Grace)
	put(t, s, fx) // the next ingest of the same bytes
	if p := collect(t, s, 100); p.Deleted != 0 {
		t.Errorf("pass = %+v: deleted bodies an ingest had just put again", p)
	}
	if err := s.CommitVersion(t.Context(), fx.v); err != nil {
		t.Fatalf("CommitVersion after a pass: %v", err)
	}
	checkReady(t, s, fx)
}

// testCollectIndexChunks: the chunks of a stored index are kept however
// old; those of an index replaced by another, and the bodies of a version
// reset for re-ingest, are garbage.
func testCollectIndexChunks(t *testing.T, s store.Store) {
	ctx := t.Context()
	fx := small("1.0.0")
	commit(t, s, fx)
	c1, c2, c3 := orphan("index chunk one"), orphan("index chunk two"), orphan("index chunk three")
	putBlobs(t, s, c1, c2)
	rec := store.IndexRecord{Format: 1, Size: 30, Chunks: []store.Hash{c1.Hash, c2.Hash, c1.Hash}, Stats: []byte(`{}`)}
	if err := s.PutIndex(ctx, "left-pad", "1.0.0", rec); err != nil {
		t.Fatalf("PutIndex: %v", err)
	}
	age(t, s, 2*Grace)
	if p := collect(t, s, 2); p.Deleted != 0 {
		t.Errorf("pass = %+v: deleted blobs a version or a stored index names", p)
	}
	got, err := s.Index(ctx, "left-pad", "1.0.0", 1)
	if err != nil {
		t.Fatalf("Index: %v", err)
	}
	for _, h := range got.Chunks {
		if !stored(t, s, h) {
			t.Errorf("chunk %x of the live index was deleted", h[:4])
		}
	}

	// A rebuild replaces the record: the old chunks are garbage.
	putBlobs(t, s, c3)
	rec.Chunks, rec.Size = []store.Hash{c3.Hash}, 17
	if err := s.PutIndex(ctx, "left-pad", "1.0.0", rec); err != nil {
		t.Fatalf("PutIndex (rebuild): %v", err)
	}
	age(t, s, 2*Grace)
	if p := collect(t, s, 2); p.Deleted != 2 {
		t.Errorf("pass = %+v, want the replaced index's 2 chunks deleted", p)
	}
	if stored(t, s, c1.Hash) || stored(t, s, c2.Hash) || !stored(t, s, c3.Hash) {
		t.Errorf("after the rebuild: chunk one %v, two %v, three %v stored; want only three",
			stored(t, s, c1.Hash), stored(t, s, c2.Hash), stored(t, s, c3.Hash))
	}
	checkReady(t, s, fx)

	// A version reset for re-ingest names no files and no index.
	if ok, err := s.ResetForReingest(ctx, "left-pad", "1.0.0", 2, "reingest"); !ok || err != nil {
		t.Fatalf("ResetForReingest = %v, %v", ok, err)
	}
	age(t, s, 2*Grace)
	if p := collect(t, s, 2); p.Deleted != len(fx.blobs)+1 {
		t.Errorf("pass = %+v, want the reset version's %d bodies and its index chunk deleted", p, len(fx.blobs))
	}
	// A chunk collected since it was put is refused, not recorded.
	if err := s.PutIndex(ctx, "left-pad", "1.0.0", rec); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PutIndex on the reset version: %v, want ErrNotFound", err)
	}
	commit(t, s, fx)
	if err := s.PutIndex(ctx, "left-pad", "1.0.0", rec); !errors.Is(err, store.ErrMissingBlob) {
		t.Errorf("PutIndex naming a collected chunk: %v, want ErrMissingBlob", err)
	}
}

// testCollectBounded: a pass examines at most limit blobs and the next
// goes on from there; a pass asked less than every after the last is
// skipped.
func testCollectBounded(t *testing.T, s store.Store) {
	ctx := t.Context()
	var blobs []store.Blob
	for _, b := range []string{"a", "b", "c", "d", "e"} {
		blobs = append(blobs, orphan("orphan "+b))
	}
	putBlobs(t, s, blobs...)
	age(t, s, 2*Grace)
	var deleted []int
	for range 3 {
		p, err := s.CollectBlobs(ctx, Grace, 0, 2)
		if err != nil {
			t.Fatal(err)
		}
		deleted = append(deleted, p.Deleted)
		if p.Examined > 2 {
			t.Errorf("pass examined %d blobs, limit 2", p.Examined)
		}
	}
	if deleted[0] != 2 || deleted[1] != 2 || deleted[2] != 1 {
		t.Errorf("passes deleted %v, want [2 2 1]", deleted)
	}
	for _, b := range blobs {
		if stored(t, s, b.Hash) {
			t.Errorf("blob %q survived", b.Data)
		}
	}
	p, err := s.CollectBlobs(ctx, Grace, time.Hour, 2)
	if err != nil {
		t.Fatal(err)
	}
	if p.Ran {
		t.Errorf("a pass asked an hour apart ran right after another: %+v", p)
	}
}

// GCMigration is the data the stores' tests of the collector's migration
// (00008) store at the schema before it, with their own SQL: a version
// with one file, an index of format 3 whose chunks name Chunk1 twice and
// Chunk2 once, and a body nothing names.
type GCMigration struct {
	File, Chunk1, Chunk2, Orphan []byte
}

// NewGCMigration returns the bodies.
func NewGCMigration() GCMigration {
	return GCMigration{[]byte("module.exports = 1;\n"), []byte("chunk one"), []byte("chunk two"), []byte("orphan")}
}

// Bodies are the four bodies to store, raw (codec 0).
func (m GCMigration) Bodies() [][]byte { return [][]byte{m.File, m.Chunk1, m.Chunk2, m.Orphan} }

// IndexChunks is the index row's chunks column.
func (m GCMigration) IndexChunks() []byte {
	h1, h2 := store.HashOf(m.Chunk1), store.HashOf(m.Chunk2)
	return store.JoinHashes([]store.Hash{h1, h2, h1})
}

// Check checks the store s, just migrated: the bodies stored before are
// young (a pass deletes nothing, however old they were), and once old
// only the orphan goes: the existing index's chunks were listed.
func (m GCMigration) Check(t *testing.T, s store.Store) {
	t.Helper()
	if p := collect(t, s, 100); p.Examined != 4 || p.Deleted != 0 {
		t.Fatalf("first pass after the migration = %+v; want 4 blobs examined, none deleted", p)
	}
	age(t, s, 2*Grace)
	if p := collect(t, s, 100); p.Deleted != 1 {
		t.Fatalf("pass = %+v; want the orphan deleted", p)
	}
	for _, b := range [][]byte{m.File, m.Chunk1, m.Chunk2} {
		if !stored(t, s, store.HashOf(b)) {
			t.Errorf("%q was deleted", b)
		}
	}
}
