package ingest

import "unsafe"

// arenaFirstChunk is the size of an arena's first chunk; each new chunk
// is at least twice the one before, up to Limits.BatchBytes, so a small
// package costs a small arena and a large one a handful of chunks.
const arenaFirstChunk = 64 << 10

// arena is the memory one batch's bodies are read into. An ingest keeps
// two, as it keeps two batches (one being read, one being written), and
// reads each batch into the arena of the batch before last, once the
// store has written that batch (store.Writer.PutBlobs keeps no body after
// it returns). Reading every body into fresh memory was ~20% of a cold
// ingest of next@16.4.6's CPU: each of its 190 MB of bodies allocated,
// faulted in page by page, and copied as its buffer grew.
//
// An arena's chunks total at most 2*Limits.BatchBytes, which holds any
// batch (flushed once it holds BatchBytes) whose bodies are no bigger
// than a chunk; a body that does not fit flushes the batch first
// (unpacker.read), and one bigger than BatchBytes is read into a buffer
// of its own (readBody).
type arena struct {
	size   int64    // the largest chunk: Limits.BatchBytes
	chunks [][]byte // allocated as needed, kept for the next batch
	total  int64    // bytes in chunks
	cur    int      // chunk being carved
	off    int      // bytes carved from chunks[cur]
	last   []byte   // the latest carve, which give can take back
}

// take returns n bytes of the arena, or nil when they do not fit in what
// is left of it. A chunk is allocated only when a body needs it, so a
// header that lies about a body's size costs at most one chunk of
// BatchBytes.
func (a *arena) take(n int64) []byte {
	if n > a.size {
		return nil
	}
	cur, off := a.cur, a.off
	for cur < len(a.chunks) && int64(off)+n > int64(len(a.chunks[cur])) {
		cur, off = cur+1, 0
	}
	if cur == len(a.chunks) {
		s := max(n, arenaFirstChunk)
		if cur > 0 {
			s = max(s, 2*int64(len(a.chunks[cur-1])))
		}
		s = min(s, a.size, 2*a.size-a.total)
		if s < n {
			return nil
		}
		a.chunks = append(a.chunks, make([]byte, s))
		a.total += s
	}
	b := a.chunks[cur][off : off+int(n) : off+int(n)]
	a.cur, a.off = cur, off+int(n)
	a.last = b
	return b
}

// give takes b back when it is the latest carve: a body that is not
// queued (a duplicate) leaves its room to the next one.
func (a *arena) give(b []byte) {
	if len(b) == 0 || len(a.last) != len(b) || unsafe.SliceData(a.last) != unsafe.SliceData(b) {
		return
	}
	a.off -= len(b)
	a.last = nil
}

// reset makes all of the arena's chunks free for the next batch. The
// bodies carved from them must no longer be in use.
func (a *arena) reset() {
	a.cur, a.off, a.last = 0, 0, nil
}
