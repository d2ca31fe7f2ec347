package sqlite

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/storetest"
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
	storetest.Run(t, func(t *testing.T) store.Store { return openTest(t) })
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

func BenchmarkPutBlobs(b *testing.B)      { storetest.BenchmarkPutBlobs(b, openBench(b)) }
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
	rng := rand.New(rand.NewPCG(1, 2))
	var blobs []store.Blob
	for range 64 {
		b := make([]byte, 256<<10)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		blobs = append(blobs, store.Blob{Hash: store.HashOf(b), Data: b})
	}
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
