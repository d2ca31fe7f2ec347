package ingest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder stands for Ingest's caller, not for a database: it records what
// Ingest asked the store to do and checks each call against the
// store.Writer contract. The real stores are tested by the store
// conformance suite.
type recorder struct {
	mu      sync.Mutex
	blobs   map[store.Hash][]byte
	batches [][]store.Blob // each PutBlobs call, bodies copied
	commits []store.NewVersion
	failed  []string
	// streamed holds the size of each body a Streamer took (bigbody_test)
	streamed map[store.Hash]int64

	// hooks, for tests of failure and cancellation
	onPut    func(batch []store.Blob) error
	onCommit func(v store.NewVersion) error
}

var _ store.Writer = (*recorder)(nil)

func newRecorder() *recorder {
	return &recorder{blobs: map[store.Hash][]byte{}, streamed: map[store.Hash]int64{}}
}

func (r *recorder) PutBlobs(ctx context.Context, blobs []store.Blob) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.onPut != nil {
		if err := r.onPut(blobs); err != nil {
			return err
		}
	}
	batch := make([]store.Blob, len(blobs))
	for i, b := range blobs {
		if store.HashOf(b.Data) != b.Hash {
			return fmt.Errorf("recorder: blob %x: hash does not match its data", b.Hash[:4])
		}
		batch[i] = store.Blob{Hash: b.Hash, Data: slices.Clone(b.Data)}
		r.blobs[b.Hash] = batch[i].Data
	}
	r.batches = append(r.batches, batch)
	return nil
}

func (r *recorder) CommitVersion(ctx context.Context, v store.NewVersion) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.onCommit != nil {
		if err := r.onCommit(v); err != nil {
			return err
		}
	}
	for i, f := range v.Files {
		if i > 0 && v.Files[i-1].Path >= f.Path {
			return fmt.Errorf("recorder: files not in strict path order: %q then %q", v.Files[i-1].Path, f.Path)
		}
		if n, ok := r.streamed[f.Hash]; ok {
			if n != f.Size {
				return fmt.Errorf("recorder: %q: size %d, streamed body has %d bytes", f.Path, f.Size, n)
			}
			continue
		}
		b, ok := r.blobs[f.Hash]
		if !ok {
			return fmt.Errorf("recorder: %q: blob not stored before commit", f.Path)
		}
		if int64(len(b)) != f.Size {
			return fmt.Errorf("recorder: %q: size %d, blob has %d bytes", f.Path, f.Size, len(b))
		}
	}
	v.Files = slices.Clone(v.Files)
	r.commits = append(r.commits, v)
	return nil
}

func (r *recorder) MarkFailed(ctx context.Context, name, version, reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, name+"@"+version+": "+reason)
	return nil
}

// committed returns the one committed version's files as path → body.
func (r *recorder) committed(t testing.TB) map[string]string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.commits) != 1 {
		t.Fatalf("%d commits, want 1", len(r.commits))
	}
	out := map[string]string{}
	for _, f := range r.commits[0].Files {
		out[f.Path] = string(r.blobs[f.Hash])
	}
	return out
}

// nothingCommitted fails the test if a version was committed.
func (r *recorder) nothingCommitted(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.commits) != 0 {
		t.Fatalf("a version was committed with %d files; want nothing", len(r.commits[0].Files))
	}
}

// wrote reports whether any body stored equals body.
func (r *recorder) wrote(body string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.blobs {
		if string(b) == body {
			return true
		}
	}
	return false
}

// mustIngest ingests tgz as demo@1.0.0 and returns the committed files.
func mustIngest(t testing.TB, tgz []byte, lim Limits) (map[string]string, Result) {
	t.Helper()
	rec := newRecorder()
	res, err := Ingest(context.Background(), rec, "demo", "1.0.0", "sha512-test", tgz, lim)
	if err != nil {
		t.Fatalf("Ingest: %v", err)
	}
	files := rec.committed(t)
	if len(res.Files) != len(files) {
		t.Fatalf("Result has %d files, commit %d", len(res.Files), len(files))
	}
	var total int64
	for _, f := range res.Files {
		total += f.Size
	}
	if total != res.TotalBytes {
		t.Fatalf("Result.TotalBytes = %d, files sum to %d", res.TotalBytes, total)
	}
	return files, res
}
