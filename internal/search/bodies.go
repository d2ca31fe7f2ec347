package search

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"sync"

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

	mu   sync.Mutex
	at   map[store.Hash]span
	n    int64 // bytes written, counted in s.spooled
	off  bool  // stopped spooling: over SpoolBytes, or a write failed
	refs int   // under s.mu: the ingest, the registration, each build
}

// span is where one body sits in a spool file, and its CRC-32C.
type span struct {
	off, n int64
	crc    uint32
}

// castagnoli is the CRC-32C table (SSE 4.2 on amd64: ~15x sha256's pace).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Spool returns w with its bodies also spooled for name@version's first
// index builds, and done, which the caller calls once it is finished with
// the returned writer (after CommitVersion, or after failing). Bodies
// written through it go to w unchanged; its CommitVersion, once w's
// succeeds, hands the spool to the builds. With no local index cache, or
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
	return &spoolWriter{Writer: w, b: b, key: key(name, version)}, func() { s.releaseBodies(b) }
}

// spoolWriter is the store.Writer Spool returns.
type spoolWriter struct {
	store.Writer
	b   *bodies
	key string
}

// PutBlobs spools blobs while w stores them.
func (w *spoolWriter) PutBlobs(ctx context.Context, blobs []store.Blob) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.b.add(blobs)
	}()
	err := w.Writer.PutBlobs(ctx, blobs)
	<-done
	return err
}

// CommitVersion commits through w, then registers the spool for the
// version's builds.
func (w *spoolWriter) CommitVersion(ctx context.Context, v store.NewVersion) error {
	if err := w.Writer.CommitVersion(ctx, v); err != nil {
		return err
	}
	w.b.s.registerBodies(w.key, w.b)
	return nil
}

// add appends the bodies not yet spooled, unless spooling stopped.
func (b *bodies) add(blobs []store.Blob) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, bl := range blobs {
		if b.off {
			return
		}
		if _, ok := b.at[bl.Hash]; ok {
			continue
		}
		n := int64(len(bl.Data))
		if b.s.spooled.Add(n) > b.s.opt.SpoolBytes {
			b.s.spooled.Add(-n)
			b.stop("over spool-bytes")
			return
		}
		if _, err := b.f.WriteAt(bl.Data, b.n); err != nil {
			b.s.spooled.Add(-n)
			b.stop(err.Error())
			return
		}
		b.at[bl.Hash] = span{b.n, n, crc32.Checksum(bl.Data, castagnoli)}
		b.n += n
	}
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
	if crc32.Checksum(data, castagnoli) != sp.crc {
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
