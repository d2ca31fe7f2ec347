package search

import (
	"context"
	"sync"
	"time"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/store"
)

// A cold version can be grepped before the store commits it. Once a fill
// through Spool has read the tarball to its end, checked every byte
// against the registry's integrity (ingest calls CommitVersion only then)
// and spooled every body, the spool holds the whole version as the
// registry published it; only the store's compression and writes, behind
// the ingest (behind.go), are left before the commit. So the spool's
// CommitVersion offers the version here first (verify), and a grep
// waiting on the fill (explore's core, through Verified) is answered by a
// scan index built from the spool while the store catches up.
//
// What this answers is the whole verified tarball, never part of it, and
// nothing is answered before the integrity check. It is not yet stored:
// if the store then fails, nothing is committed (the version stays
// invisible to every reader of the store), the offer is withdrawn, a scan
// index built from it is closed, and the fill's callers, and every later
// reader, get the error; answers already given stand, as answers from the
// registry's bytes. A crash leaves nothing: the offer lives in this
// process, the spool is an unlinked file.

// A grep waiting for the offer is what an agent is waiting for. On 2
// cores the store's writes behind the ingest (behind.go), which start the
// moment the download is verified, shared the cores with its scan build
// and search: the mirror's CPU until lucide-react's first grep was
// answered was 0.37-0.52 s, and 0.28-0.32 s with those writes held off
// (bench/cold, docs/BENCHMARKS.md), against 0.34-0.44 s for download +
// untar + rg at its fastest. So when a grep waits (ForGrep) as the
// version is offered, the offer holds the store's writes until the first
// search of its scan index ends, or earlyHoldMax passes (a grep that gave
// up must not hold the commit back for long). A list or a read waiting
// holds nothing: it is answered from the file list or one body.

// earlyHoldMax bounds how long an offer holds the store's writes for a
// waiting grep: next@16.4.6's scan index, the largest common case, builds
// in about 1 s.
const earlyHoldMax = 3 * time.Second

type grepKey struct{}

// ForGrep marks ctx as a grep's: Verified called with it counts as a grep
// waiting for the version (see above).
func ForGrep(ctx context.Context) context.Context { return context.WithValue(ctx, grepKey{}, true) }

// verified is a version offered before its commit.
type verified struct {
	key   string
	files []store.File  // sorted by path, every body in b
	b     *bodies       // a reference held until unverify
	err   error         // under s.mu: the store failed; the offer is void
	ended chan struct{} // closed when the offer is withdrawn
	// firstGrep, when a grep waited for the offer, releases the hold it
	// took on the store's writes (once; nil otherwise).
	firstGrep func()
}

// verify offers k, whose files are files and whose bodies b holds, to
// the greps waiting on it. It returns nil, offering nothing, when the
// spool stopped or lacks a body (those versions wait for the commit).
func (s *Searcher) verify(k string, b *bodies, files []store.File) *verified {
	b.mu.Lock()
	whole := !b.off
	for _, f := range files {
		if !whole {
			break
		}
		_, whole = b.at[f.Hash]
	}
	b.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !whole || s.closed {
		return nil
	}
	b.refs++
	v := &verified{key: k, files: files, b: b, ended: make(chan struct{})}
	if s.grepWaits[k] > 0 {
		b.hold()
		v.firstGrep = sync.OnceFunc(b.release)
		time.AfterFunc(earlyHoldMax, v.firstGrep)
	}
	s.verified[k] = v
	close(s.verifiedSig)
	s.verifiedSig = make(chan struct{})
	return v
}

// unverify withdraws v's offer once its fill has committed (err nil) or
// failed. On failure a scan index built from v is closed (once its
// searches end), and one still being built is not opened (insert).
func (s *Searcher) unverify(v *verified, err error) {
	if v == nil {
		return
	}
	var closing []*index.Index
	s.mu.Lock()
	if s.verified[v.key] == v {
		delete(s.verified, v.key)
	}
	if err != nil {
		v.err = err
		if e := s.open[v.key]; e != nil && e.early == v {
			closing = s.evictLocked(e)
		}
	}
	if v.firstGrep != nil {
		v.firstGrep()
	}
	s.releaseBodiesLocked(v.b)
	close(v.ended)
	s.mu.Unlock()
	for _, ix := range closing {
		_ = ix.Close()
	}
}

// Verified returns name@version's files once a fill has verified its
// tarball and spooled every body, before the store commits it (true), or
// false when done closes (the fill ended: the version is committed, or it
// failed) or ctx ends first. A grep of those files is answered from the
// spool (Search); a read must wait for the commit.
func (s *Searcher) Verified(ctx context.Context, name, version string, done <-chan struct{}) ([]store.File, bool) {
	k := key(name, version)
	if ctx.Value(grepKey{}) != nil {
		s.mu.Lock()
		s.grepWaits[k]++
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			if s.grepWaits[k]--; s.grepWaits[k] == 0 {
				delete(s.grepWaits, k)
			}
			s.mu.Unlock()
		}()
	}
	for {
		s.mu.Lock()
		v, sig := s.verified[k], s.verifiedSig
		s.mu.Unlock()
		if v != nil {
			return v.files, true
		}
		select {
		case <-sig:
		case <-done:
			return nil, false
		case <-ctx.Done():
			return nil, false
		}
	}
}

// takeVerified returns k's offer with a reference to its spool held
// (release it with releaseBodies), or nil.
func (s *Searcher) takeVerified(k string) *verified {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.verified[k]
	if v != nil {
		v.b.refs++
	}
	return v
}

// VerifiedBody returns the body with hash h of name@version while the
// version is offered before its commit (Verified), read from the spool
// and checked against the CRC-32C taken as it was spooled; false when it
// is not offered (any more) or the spool cannot give the body intact.
func (s *Searcher) VerifiedBody(name, version string, h store.Hash) ([]byte, bool) {
	v := s.takeVerified(key(name, version))
	if v == nil {
		return nil, false
	}
	defer s.releaseBodies(v.b)
	return v.b.get(h)
}

// committed waits until k, when it is offered before its commit, is
// committed or has failed: what builds the full index reads the store.
func (s *Searcher) committed(ctx context.Context, k string) error {
	s.mu.Lock()
	v := s.verified[k]
	s.mu.Unlock()
	if v == nil {
		return nil
	}
	select {
	case <-v.ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
