package store

import (
	"context"
	"time"
)

// BlobCollector deletes the bodies nothing refers to: those left by
// ingests that failed (integrity, limits, a crash) or were reset for
// re-ingest, and index chunks of an index that was replaced.
//
// A body is kept while a file row or a stored index names it, and for
// grace after PutBlobs last wrote it; PutBlobs of a body already stored
// refreshes that time. An ingest writes its bodies before it commits,
// within fill-timeout, so a grace longer than that never takes a body
// from an ingest in flight, however old the body: its PutBlobs made it
// young again (docs/RELIABILITY.md, "Blob garbage collection").
type BlobCollector interface {
	// CollectBlobs runs one pass: it examines up to limit blobs in hash
	// order, from where the last pass stopped (after the last blob it
	// starts again from the first), and deletes those that no file row
	// and no stored index names and that PutBlobs last wrote more than
	// grace ago by the store's clock (the database's, for Postgres). The
	// DELETE itself checks those conditions, so a blob that a PutBlobs
	// refreshes, a commit or a PutIndex names while the pass runs is kept.
	//
	// Passes are shared by every process on the database: a pass is
	// skipped (BlobPass.Ran false) while another runs, or when the last
	// one started less than every ago, so replicas each calling it every
	// interval run one pass per interval between them, from one position.
	CollectBlobs(ctx context.Context, grace, every time.Duration, limit int) (BlobPass, error)
}

// BlobPass is what one CollectBlobs pass did.
type BlobPass struct {
	// Ran is false when the pass was skipped (another ran or runs).
	Ran bool
	// Examined blobs, of which Deleted were deleted, freeing Freed
	// stored (compressed) bytes.
	Examined, Deleted int
	Freed             int64
	// Wrapped: the pass reached the last blob, so the next starts from
	// the first. A sweep of the whole store ends with a wrapped pass.
	Wrapped bool
}

// Add counts pass q into p, a sum of passes: Ran and Wrapped when any was.
func (p *BlobPass) Add(q BlobPass) {
	p.Ran = p.Ran || q.Ran
	p.Examined += q.Examined
	p.Deleted += q.Deleted
	p.Freed += q.Freed
	p.Wrapped = p.Wrapped || q.Wrapped
}
