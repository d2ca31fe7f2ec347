package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/store"
)

// BenchFiles is the file count of the benchmark version: a large but
// ordinary package (typescript@5 has ~120 files, next@16 ~8,700; a few
// thousand is where per-row costs dominate).
const BenchFiles = 5000

// benchFixture builds a version of n small text files (1-3 KB, like
// transpiled modules) whose bodies are unique to seed.
func benchFixture(name, version string, n int, seed uint64) fixture {
	bodies := make(map[string][]byte, n)
	for i := range n {
		p := fmt.Sprintf("dist/esm/dir%03d/module%04d.js", i/50, i)
		bodies[p] = append(fmt.Appendf(nil, "// %d %d\n", seed, i), textBody(seed<<20|uint64(i), 1024+i%2048)...)
	}
	return newFixture(name, version, bodies)
}

// BenchmarkPutBlobs measures PutBlobs of BenchFiles new small bodies
// (compression included) per op.
func BenchmarkPutBlobs(b *testing.B, s store.Store) {
	var bytes int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		fx := benchFixture("bench", "1.0.0", BenchFiles, uint64(i)+1)
		bytes = fx.v.TotalBytes()
		b.StartTimer()
		if err := s.PutBlobs(b.Context(), fx.blobs); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(bytes)
}

// BenchmarkPutBlobsStored measures PutBlobs of BenchFiles bodies all
// stored already, per op: the next version of a package, whose files are
// mostly unchanged. It finds them stored and writes no body. With age
// set, every body's written time is moved back by it before each op
// (outside the timer; s must be a BlobAger), so a store refreshes them
// all, as for a version put long after the last: the cost of keeping
// them from the blob collector.
func BenchmarkPutBlobsStored(b *testing.B, s store.Store, age time.Duration) {
	fx := benchFixture("bench", "1.0.0", BenchFiles, 1)
	if err := s.PutBlobs(b.Context(), fx.blobs); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if age > 0 {
			b.StopTimer()
			if err := s.(BlobAger).AgeBlobs(b.Context(), age); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if err := s.PutBlobs(b.Context(), fx.blobs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCollectBlobs measures one blob collector pass over 10,000
// blobs, per op: a committed version's 5,000 bodies and 5,000 bodies
// nothing names, younger than the grace. Every blob is examined and none
// deleted, the steady state of a store whose garbage is gone: what a pass
// costs the database each blob-gc-interval.
func BenchmarkCollectBlobs(b *testing.B, s store.Store) {
	fx := benchFixture("bench", "1.0.0", BenchFiles, 1)
	orphans := benchFixture("orphans", "1.0.0", BenchFiles, 2)
	if err := s.PutBlobs(b.Context(), append(fx.blobs, orphans.blobs...)); err != nil {
		b.Fatal(err)
	}
	if err := s.CommitVersion(b.Context(), fx.v); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := s.CollectBlobs(b.Context(), Grace, 0, 2*BenchFiles+1)
		if err != nil {
			b.Fatal(err)
		}
		if p.Examined != 2*BenchFiles || p.Deleted != 0 {
			b.Fatalf("pass = %+v", p)
		}
	}
}

// BenchmarkCommitVersion measures CommitVersion of a BenchFiles-file
// version whose bodies are already stored, per op.
func BenchmarkCommitVersion(b *testing.B, s store.Store) {
	fx := benchFixture("bench", "1.0.0", BenchFiles, 1)
	if err := s.PutBlobs(b.Context(), fx.blobs); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fx.v.Version = fmt.Sprintf("1.0.%d", i)
		if err := s.CommitVersion(b.Context(), fx.v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFiles measures listing a BenchFiles-file version, per op.
func BenchmarkFiles(b *testing.B, s store.Store) {
	fx := benchFixture("bench", "1.0.0", BenchFiles, 1)
	if err := s.PutBlobs(b.Context(), fx.blobs); err != nil {
		b.Fatal(err)
	}
	if err := s.CommitVersion(b.Context(), fx.v); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		files, err := s.Files(b.Context(), "bench", "1.0.0")
		if err != nil {
			b.Fatal(err)
		}
		if len(files) != BenchFiles {
			b.Fatalf("Files returned %d files, want %d", len(files), BenchFiles)
		}
	}
}

// BenchmarkBlob measures reading one 2 KB compressed body, per op.
func BenchmarkBlob(b *testing.B, s store.Store) {
	fx := benchFixture("bench", "1.0.0", 1, 1)
	if err := s.PutBlobs(b.Context(), fx.blobs); err != nil {
		b.Fatal(err)
	}
	h := fx.blobs[0].Hash
	b.SetBytes(int64(len(fx.blobs[0].Data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Blob(b.Context(), h); err != nil {
			b.Fatal(err)
		}
	}
}
