package search

import (
	"context"
	"fmt"
	"sync"

	"github.com/pkgscope/pkgscope/internal/store"
)

// A fill through Spool writes its bodies to the store after the ingest,
// not during it: the ingest's PutBlobs returns once the bodies are in the
// spool, and once the download is verified, the spool's CommitVersion
// reads them back (the page cache, one read per batch) and stores them,
// compressing as the store does, then commits. On next@16.4.6 the store's
// zstd and SQLite writes were ~1.8 s of the ingest's ~3.4 s of CPU; with
// the store writing during the ingest (first with back-pressure on the
// tarball's reader, then behind it on the other core), every second of it
// was spent while the first grep waited, and under load it took that
// grep's CPU. Now the reader's pace is gunzip's and the spool's, a grep
// is answered from the verified spool (early.go), and the store's writes
// pause while that grep's scan index is built from the spool (hold).
//
// The price: on an idle machine the store no longer overlaps the ingest
// on the second core, so the commit comes later by the store's time
// (about 1 s on next@16.4.6), while the list, the greps and the reads of
// the version are answered from the verified spool meanwhile. Bodies of a
// tarball that fails its integrity check are never written to the store.
//
// Memory stays bounded: what waits for the store is on disk, in the
// spool, which Options.SpoolBytes bounds; the queue holds only where each
// body sits; what is read back for the store, Options.WriteBackBytes. A body the spool cannot take is stored before the ingest's
// PutBlobs returns, as without a spool.

// run is a stretch of the spool written by one PutBlobs: its bodies sit
// one after another from off.
type run struct {
	off    int64
	bodies []spooledBody
}

// spooledBody is where one body sits in the spool.
type spooledBody struct {
	hash store.Hash
	span
}

// behind is one spool's queue of runs for the store.
type behind struct {
	w    store.Writer
	b    *bodies
	runs []run // owned by the ingest's goroutine: PutBlobs, then CommitVersion
}

// store writes every queued run to the store, in order, pausing while a
// scan index is built from the spool for a waiting grep (bodies.hold).
//
// A run read back is in memory until the store has written it, and the
// store holds its compressed copy meanwhile, so the runs read back at
// once, all fills together, are bounded by Options.WriteBackBytes: each
// is charged its bytes before it is read, and one larger than the whole
// bound is charged all of it and written alone. Without the bound, the
// 406 packages of a midsize app peaked at 2.3 GiB RSS: nine @next/swc
// packages each hold one 90-140 MB binary, and eight warm fills read
// theirs back at once (777 MB of such runs live in one heap profile).
func (h *behind) store(ctx context.Context) error {
	s := h.b.s
	var buf []byte // kept for the next run while no larger than keep
	keep := min(writeBackKeep, s.opt.WriteBackBytes)
	for len(h.runs) > 0 {
		if err := h.b.unheld(ctx); err != nil {
			return err
		}
		r := h.runs[0]
		n := r.bytes()
		charge := min(max(n, int64(cap(buf))), s.opt.WriteBackBytes)
		if !s.writeBack.TryAcquire(charge) {
			// No buffer is kept uncharged while waiting.
			buf = nil
			charge = min(n, s.opt.WriteBackBytes)
			if s.onWriteBackWait != nil {
				s.onWriteBackWait()
			}
			if err := s.writeBack.Acquire(ctx, charge); err != nil {
				return err
			}
		}
		blobs, next, err := h.b.read(r, buf)
		if err == nil {
			if err = h.w.PutBlobs(ctx, blobs); err != nil {
				err = fmt.Errorf("storing %d file bodies: %w", len(blobs), err)
			}
		}
		s.writeBack.Release(charge)
		if err != nil {
			return err
		}
		// PutBlobs keeps no body once it returns (store.Writer).
		buf = next
		if int64(cap(buf)) > keep {
			buf = nil
		}
		h.runs = h.runs[1:]
	}
	return nil
}

// writeBackKeep is the largest buffer a fill's write-back keeps from one
// run for the next: two of ingest's default 8 MiB batches, so the runs
// of an ordinary fill share one buffer, and a large body's is let go.
const writeBackKeep = 16 << 20

// bytes is how many bytes of the spool r spans.
func (r run) bytes() int64 {
	last := r.bodies[len(r.bodies)-1]
	return last.off + last.n - r.off
}

// read reads r's bodies back from the spool in one read, into buf (grown
// as needed and returned for the next run), each checked against the
// CRC-32C taken as it was spooled. The blobs point into buf. A body that
// does not match fails the write: it can no longer be read from anywhere
// else, and the store must hold only bodies matching their hash.
func (b *bodies) read(r run, buf []byte) ([]store.Blob, []byte, error) {
	n := r.bytes()
	if buf == nil || int64(cap(buf)) < n {
		// Never nil, even for a run of empty bodies: a store takes a
		// nil body for a missing one (SQLite: NULL).
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := b.f.ReadAt(buf, r.off); err != nil {
		return nil, buf, fmt.Errorf("reading spooled bodies for the store: %w", err)
	}
	blobs := make([]store.Blob, len(r.bodies))
	for i, sb := range r.bodies {
		data := buf[sb.off-r.off : sb.off-r.off+sb.n : sb.off-r.off+sb.n]
		if !sb.intact(data) {
			return nil, buf, fmt.Errorf("a spooled body (sha256 %x) does not match its checksum", sb.hash)
		}
		blobs[i] = store.Blob{Hash: sb.hash, Data: data}
	}
	return blobs, buf, nil
}

// holds pauses the store's writes from one spool while a grep's scan
// index is built from it: on 2 cores, the scan build and the store's
// compression workers would otherwise share them.
type holds struct {
	mu   sync.Mutex
	n    int
	free chan struct{} // closed when n drops to 0; nil while n is 0
}

// hold pauses the writes until release.
func (h *holds) hold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		h.free = make(chan struct{})
	}
	h.n++
}

func (h *holds) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n--
	if h.n == 0 {
		close(h.free)
		h.free = nil
	}
}

// unheld waits until nothing holds the writes, or ctx ends.
func (h *holds) unheld(ctx context.Context) error {
	h.mu.Lock()
	free := h.free
	h.mu.Unlock()
	if free == nil {
		return nil
	}
	select {
	case <-free:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
