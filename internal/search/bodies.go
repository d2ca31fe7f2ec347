package search

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/store"
)

// A version's first index builds (the scan index for its first grep, the
// full one behind it) read every body. Read back from the store, each is a
// database read and a zstd decode: on next@16.4.6 that was 1.2 s of the
// scan build's 1.7 s of CPU, paid twice since both builds run at once. So
// a fill passes its bodies through Spool on their way to the store, and
// the builds read them from that spool, a file in the index cache, instead.
//
// The spool is a convenience, never a source of truth:
//   - it is used only once the version is committed (the store decided the
//     version is whole), and only for the builds of that version;
//   - each body read from it is checked against the CRC-32C of the bytes
//     written (which ingest hashed, and which the integrity check then
//     vouched for); a body that fails the check, or is missing, is read
//     from the store. The spool is this process's own unlinked file, so
//     the check guards against the disk and the page cache, not against
//     an adversary, like the index cache's file identities (ARCHITECTURE
//     "Grep"); it was the body's sha256, 0.19 s of the 0.85 s of CPU the
//     first grep of next@16.4.6 took, and again in the full build;
//   - its file is unlinked as soon as it is created, so a crash leaves
//     nothing behind, and it is closed when the full build ends;
//   - all spools together take at most Options.SpoolBytes of disk; an
//     ingest past it stops spooling and its builds read the store.

// bodies is one ingest's spool: its bodies, appended to an unlinked file.
type bodies struct {
	s *Searcher
	f *os.File

	mu    sync.Mutex
	at    map[store.Hash]span
	n     int64 // bytes written, counted in s.spooled
	off   bool  // stopped spooling: over SpoolBytes, or a write failed
	refs  int   // under s.mu: the ingest, the registration, each build
	holds       // the store's writes wait while a grep's scan reads (behind.go)
}

// span is where one body sits in a spool file, and its CRC-32C.
type span struct {
	off, n int64
	crc    uint32
}

// intact reports whether data, read back from the span, is what was
// spooled there.
func (s span) intact(data []byte) bool { return crc32.Checksum(data, castagnoli) == s.crc }

// castagnoli is the CRC-32C table (SSE 4.2 on amd64: ~15x sha256's pace).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Spool returns w with its bodies also spooled for name@version's first
// index builds, and done, which the caller calls once it is finished with
// the returned writer (after CommitVersion, or after failing). Its
// PutBlobs returns once the bodies are in the spool, so the tarball's
// reader never waits for the store's compression and writes. Its
// CommitVersion, called once the download is verified, first offers the
// version to the requests waiting on it (Searcher.Verified; early.go),
// then writes the spooled bodies to w (behind.go), commits through w,
// and hands the spool to the builds. With no local index cache, or
// SpoolBytes 0, it returns w itself.
func (s *Searcher) Spool(w store.Writer, name, version string) (store.Writer, func()) {
	if s.opt.Dir == "" || s.opt.SpoolBytes <= 0 {
		return w, func() {}
	}
	f, err := os.CreateTemp(s.opt.Dir, ".bodies-*")
	if err != nil {
		s.log.Warn("cannot spool bodies for indexing; builds will read the store", "dir", s.opt.Dir, "err", err)
		return w, func() {}
	}
	if err := os.Remove(f.Name()); err != nil {
		// An unlinked spool is what lets a crash leave nothing behind.
		f.Close()
		os.Remove(f.Name())
		return w, func() {}
	}
	b := &bodies{s: s, f: f, at: map[store.Hash]span{}, refs: 1}
	sw := &spoolWriter{Writer: w, b: b, key: key(name, version), behind: behind{w: w, b: b}}
	return sw, func() { s.releaseBodies(b) }
}

// spoolWriter is the store.Writer Spool returns.
type spoolWriter struct {
	store.Writer
	b      *bodies
	key    string
	behind behind
}

// PutBlobs spools blobs and queues them for the store; the bodies the
// spool cannot take (over SpoolBytes, or its disk failed) are stored
// before it returns, as without a spool.
func (w *spoolWriter) PutBlobs(ctx context.Context, blobs []store.Blob) error {
	queued, rest := w.b.add(blobs)
	if len(queued.bodies) > 0 {
		w.behind.runs = append(w.behind.runs, queued)
	}
	if len(rest) == 0 {
		return nil
	}
	return w.Writer.PutBlobs(ctx, rest)
}

// PutStream spools a body larger than an ingest batch as it is read
// (ingest.Streamer), so the ingest never holds it whole, and queues it for
// the store like PutBlobs' bodies: written back alone, under
// WriteBackBytes. It declines (ingest.ErrNotStreamed) when spooling has
// stopped or the body would pass SpoolBytes. Once it has begun, a failed
// write fails the ingest: the bytes read cannot be read again.
func (w *spoolWriter) PutStream(ctx context.Context, n int64, r io.Reader, sum func() store.Hash) error {
	b := w.b
	b.mu.Lock()
	if b.off || b.s.spooled.Add(n) > b.s.opt.SpoolBytes {
		if !b.off {
			b.s.spooled.Add(-n)
		}
		b.mu.Unlock()
		return ingest.ErrNotStreamed
	}
	off := b.n
	b.n += n // reserved: add appends after it meanwhile
	b.mu.Unlock()
	crc := crc32.New(castagnoli)
	copied, err := io.CopyBuffer(io.MultiWriter(io.NewOffsetWriter(b.f, off), crc), r, make([]byte, streamChunk))
	if err == nil && copied != n {
		err = fmt.Errorf("spooling a body: %d of its %d bytes arrived", copied, n)
	}
	if err != nil {
		b.mu.Lock()
		b.stop(err.Error())
		b.mu.Unlock()
		return fmt.Errorf("spooling a body: %w", err)
	}
	sp := span{off, n, crc.Sum32()}
	h := sum()
	b.mu.Lock()
	if _, ok := b.at[h]; !ok {
		b.at[h] = sp
	}
	b.mu.Unlock()
	w.behind.runs = append(w.behind.runs, run{off: off, bodies: []spooledBody{{hash: h, span: sp}}})
	return nil
}

// streamChunk is PutStream's copy buffer: 1 MiB, a few hundred writes for
// the largest body a tarball may hold (max-file-bytes, 256 MiB).
const streamChunk = 1 << 20

// CommitVersion is called once the download is verified: it offers the
// version to the requests waiting on it (when every body is spooled),
// writes the spooled bodies to the store, commits through w, then
// registers the spool for the version's builds. When the store fails,
// nothing is committed and the offer is withdrawn, with any scan index
// built from it (Searcher.unverify).
//
// Its writes are the Searcher's: Close cancels them (nothing is then
// committed, as for any failure) and waits for them, so the store, which
// the caller closes next, sees none after Close; once closed, it stores
// nothing.
func (w *spoolWriter) CommitVersion(ctx context.Context, v store.NewVersion) error {
	s := w.b.s
	if !s.start(&s.commits) {
		return fmt.Errorf("storing %s: %w", w.key, errClosed)
	}
	defer s.commits.Done()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(s.bgCtx, stop)()
	view := s.verify(w.key, w.b, v.Files)
	err := w.behind.store(ctx)
	if err == nil {
		err = w.Writer.CommitVersion(ctx, v)
	}
	if err == nil {
		s.registerBodies(w.key, w.b)
	}
	// Another ingest committing the same version first (ErrExists) is a
	// success for the fill: the same verified bytes are stored.
	if err != nil && !errors.Is(err, store.ErrExists) {
		s.unverify(view, fmt.Errorf("storing %s: %w", w.key, err))
	} else {
		s.unverify(view, nil)
	}
	return err
}

// add appends the bodies not yet spooled, unless spooling stopped, and
// returns the part of the spool it wrote (for the store, behind) and the
// blobs it could not spool.
func (b *bodies) add(blobs []store.Blob) (queued run, rest []store.Blob) {
	b.mu.Lock()
	defer b.mu.Unlock()
	queued.off = b.n
	for i, bl := range blobs {
		if b.off {
			return queued, blobs[i:]
		}
		if _, ok := b.at[bl.Hash]; ok {
			continue
		}
		n := int64(len(bl.Data))
		if b.s.spooled.Add(n) > b.s.opt.SpoolBytes {
			b.s.spooled.Add(-n)
			b.stop("over spool-bytes")
			return queued, blobs[i:]
		}
		if _, err := b.f.WriteAt(bl.Data, b.n); err != nil {
			b.s.spooled.Add(-n)
			b.stop(err.Error())
			return queued, blobs[i:]
		}
		sp := span{b.n, n, crc32.Checksum(bl.Data, castagnoli)}
		b.at[bl.Hash] = sp
		queued.bodies = append(queued.bodies, spooledBody{hash: bl.Hash, span: sp})
		b.n += n
	}
	return queued, nil
}

// stop ends spooling; the builds then read the store. Under b.mu.
func (b *bodies) stop(why string) {
	b.off = true
	b.s.log.Info("stopped spooling bodies for indexing; builds will read the store", "why", why, "spooled_bytes", b.n)
}

// get returns the body with hash h when the spool holds it intact.
func (b *bodies) get(h store.Hash) ([]byte, bool) {
	b.mu.Lock()
	sp, ok := b.at[h]
	b.mu.Unlock()
	if !ok {
		return nil, false
	}
	data := make([]byte, sp.n)
	if _, err := b.f.ReadAt(data, sp.off); err != nil {
		b.s.log.Warn("spooled body unreadable; reading the store", "err", err)
		return nil, false
	}
	if !sp.intact(data) {
		b.s.log.Warn("spooled body does not match its checksum; reading the store", "sha256", fmt.Sprintf("%x", h))
		return nil, false
	}
	return data, true
}

// registerBodies hands b to the builds of k. A spool that stopped, or a
// closed Searcher, is not registered.
func (s *Searcher) registerBodies(k string, b *bodies) {
	b.mu.Lock()
	off := b.off
	b.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if off || s.closed {
		return
	}
	if old := s.spools[k]; old != nil {
		s.releaseBodiesLocked(old)
	}
	b.refs++
	s.spools[k] = b
}

// takeBodies returns k's spool with a reference held, or nil.
func (s *Searcher) takeBodies(k string) *bodies {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.spools[k]
	if b != nil {
		b.refs++
	}
	return b
}

// dropBodies unregisters k's spool: its full build has ended.
func (s *Searcher) dropBodies(k string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.spools[k]; b != nil {
		delete(s.spools, k)
		s.releaseBodiesLocked(b)
	}
}

func (s *Searcher) releaseBodies(b *bodies) {
	if b == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseBodiesLocked(b)
}

// releaseBodiesLocked drops a reference; the last one closes the file,
// which frees its disk, and gives its bytes back to SpoolBytes.
func (s *Searcher) releaseBodiesLocked(b *bodies) {
	b.refs--
	if b.refs > 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s.spooled.Add(-b.n)
	b.n, b.off = 0, true
	clear(b.at)
	if err := b.f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		s.log.Warn("closing a body spool", "err", err)
	}
}
