package sqlite

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/storetest"
	"github.com/pkgscope/pkgscope/migrations"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func openTest(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return aged{openTest(t)} })
}

// aged is the store with storetest.BlobAger, for the collector's tests.
type aged struct{ *Store }

func (a aged) AgeBlobs(ctx context.Context, d time.Duration) error {
	_, err := a.w.ExecContext(ctx, `UPDATE blob_written SET written_at = written_at - ?`, d.Microseconds())
	return err
}

// TestReopenKeepsData closes and reopens a store on the same directory:
// migrations find nothing to do and committed data survives.
func TestReopenKeepsData(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir?with#odd chars")
	ctx := context.Background()
	s, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("module.exports = 1;\n")
	h := store.HashOf(body)
	if err := s.PutBlobs(ctx, []store.Blob{{Hash: h, Data: body}}); err != nil {
		t.Fatal(err)
	}
	err = s.CommitVersion(ctx, store.NewVersion{Name: "one", Version: "1.0.0",
		Files: []store.File{{Path: "index.js", Size: int64(len(body)), Hash: h}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("store directory mode = %o, want 700", perm)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
		t.Errorf("database file: %v", err)
	}

	s, err = Open(ctx, dir, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	files, err := s.Files(ctx, "one", "1.0.0")
	if err != nil || len(files) != 1 || files[0].Hash != h {
		t.Fatalf("Files after reopen = %+v, %v", files, err)
	}
}

// openBench opens a store closed when b ends.
func openBench(b *testing.B) *Store {
	s := openTest(b)
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkPutBlobs(b *testing.B)       { storetest.BenchmarkPutBlobs(b, openBench(b)) }
func BenchmarkPutBlobsStored(b *testing.B) { storetest.BenchmarkPutBlobsStored(b, openBench(b), 0) }
func BenchmarkCollectBlobs(b *testing.B)   { storetest.BenchmarkCollectBlobs(b, openBench(b)) }
func BenchmarkPutBlobsStoredOld(b *testing.B) {
	storetest.BenchmarkPutBlobsStored(b, aged{openBench(b)}, 24*time.Hour)
}
func BenchmarkCommitVersion(b *testing.B) { storetest.BenchmarkCommitVersion(b, openBench(b)) }
func BenchmarkFiles(b *testing.B)         { storetest.BenchmarkFiles(b, openBench(b)) }
func BenchmarkBlob(b *testing.B)          { storetest.BenchmarkBlob(b, openBench(b)) }

// TestWALIsTruncatedAfterCheckpoint: a large write leaves no WAL of its
// size behind once the next write has found it checkpointed, so the
// store's disk is what it holds (journal_size_limit, dsn).
func TestWALIsTruncatedAfterCheckpoint(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// 16 MiB of bodies zstd cannot shrink: one write transaction of
	// about that size, over SQLite's 1,000-page auto-checkpoint.
	blobs := incompressible(1, 64, 256<<10)
	if err := s.PutBlobs(ctx, blobs); err != nil {
		t.Fatal(err)
	}
	small := []byte("module.exports = 2;\n")
	if err := s.PutBlobs(ctx, []store.Blob{{Hash: store.HashOf(small), Data: small}}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, FileName+"-wal"))
	if err != nil {
		t.Fatal(err)
	}
	// The small write's own frames, at most a few pages each.
	if fi.Size() > 1<<20 {
		t.Errorf("the WAL is %d bytes after a 16 MiB write was checkpointed; want it truncated (under 1 MiB)", fi.Size())
	}
}

// TestCollectReturnsDisk: the pages of collected blobs go back to the file
// system (auto_vacuum=incremental and PRAGMA incremental_vacuum after a
// pass), not only to SQLite's free list: the file holds what it stores.
func TestCollectReturnsDisk(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// 16 MiB of bodies zstd cannot shrink, left by an ingest that failed.
	blobs := incompressible(3, 64, 256<<10)
	if err := s.PutBlobs(ctx, blobs); err != nil {
		t.Fatal(err)
	}
	pages := func() (total, free int64) {
		t.Helper()
		if err := s.w.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&total); err != nil {
			t.Fatal(err)
		}
		if err := s.w.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
			t.Fatal(err)
		}
		return total, free
	}
	before, _ := pages()
	if err := (aged{s}).AgeBlobs(ctx, 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	p, err := s.CollectBlobs(ctx, time.Hour, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if p.Deleted != len(blobs) {
		t.Fatalf("pass = %+v, want all %d blobs deleted", p, len(blobs))
	}
	after, free := pages()
	var pageSize int64
	if err := s.w.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	t.Logf("pages %d -> %d (%d free), %d bytes a page; %d stored bytes freed", before, after, free, pageSize, p.Freed)
	if free != 0 || (before-after)*pageSize < p.Freed {
		t.Errorf("after the pass the file has %d pages (%d free), was %d: want the %d freed bytes handed back, no free pages",
			after, free, before, p.Freed)
	}
}

// TestMigrateBlobGC opens a file holding a version and its index at the
// schema before the collector (migration 00007), and migrates it: every
// stored body gets a written time (now: the first pass after the upgrade
// deletes nothing, whatever the bodies' age) and the existing index's
// chunks are listed in index_chunks, so they are kept once old.
func TestMigrateBlobGC(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, FileName), DefaultOptions(), false))
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 7); err != nil {
		t.Fatal(err)
	}
	m := storetest.NewGCMigration()
	for _, b := range m.Bodies() {
		h := store.HashOf(b)
		if _, err := db.ExecContext(ctx, `INSERT INTO blobs (hash, size, codec, data) VALUES (?, ?, 0, ?)`, h[:], len(b), b); err != nil {
			t.Fatal(err)
		}
	}
	hb := store.HashOf(m.File)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO versions (id, name, version, state, file_count, created_at, updated_at) VALUES (1, 'one', '1.0.0', 'ready', 1, 0, 0)`, nil},
		{`INSERT INTO files (version_id, path, hash, size, is_binary) VALUES (1, X'696e6465782e6a73', ?, 20, 0)`, []any{hb[:]}},
		{`INSERT INTO version_indexes (version_id, format, size, chunks, coverage, stats, created_at) VALUES (1, 3, 18, ?, 1, '{}', 0)`,
			[]any{m.IndexChunks()}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m.Check(t, aged{s})
}

// incompressible returns n random bodies of size bytes, from seed.
func incompressible(seed uint64, n, size int) []store.Blob {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	blobs := make([]store.Blob, n)
	for k := range blobs {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		blobs[k] = store.Blob{Hash: store.HashOf(b), Data: b}
	}
	return blobs
}
