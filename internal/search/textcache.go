package search

import (
	"context"
	"fmt"

	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/lru"
	"github.com/pkgscope/pkgscope/internal/store"
)

// A version whose index file is not on this node's disk is served from
// the index's stored form (the file without its text, index.StoredForm),
// read from the store into memory and opened as it is (index.OpenStored):
// a search reads the text of only the contents it reaches, each the body
// the store holds under its hash, through the text cache below. Ten
// lucide-react versions each kept as a local file took 394 MiB of disk
// for 30.4 MB of text apiece; their stored forms are ~8 MB each, and the
// text cache shares the bodies the versions have in common.
//
// The text cache holds decompressed bodies by hash, bounded by bytes
// (Options.TextCacheBytes) with the mirror's one LRU (internal/lru). A
// miss reads the store once however many searches want the body
// (singleflight, detached from the search that asked, like a load), and
// checks the bytes: their SHA-256 must be the hash they were read under,
// or the search fails with an error wrapping index.ErrCorrupt and
// store.ErrCorruptBody, and the version's index is rebuilt (Search). So
// no text is served from the store unverified. A body larger than the
// whole cache is returned without being kept.
//
// A search reads its contents one after another, and on Postgres each miss
// is a round trip: so the cache is also an index.Prefetcher. Offered the
// contents a search will read next, it reads those it does not hold with
// one store request (store.BlobsReader: hash = ANY on Postgres), checks
// each body as a miss does (checkBody) and caches it; a body that fails
// the check is not cached, so the search's own read of it fails as above.
// A batch is at most an eighth of the cache's bound (so one search's
// batch is not evicted by the next few), and the batches of all searches
// in flight at once hold at most the bound (a semaphore of bytes).
//
// Memory: the cache's bound, plus the bodies searches hold while they scan
// them (a body evicted mid-scan lives until its scan ends), each at most
// the largest file body a version may have, plus the prefetch batches
// being read, at most the bound again.

// textCache is the Searcher's index.TextSource and index.Prefetcher.
type textCache struct {
	s     *Searcher
	lru   *lru.Cache[store.Hash, []byte]
	group singleflight.Group
	// batch is the most body bytes one Prefetch reads, inFlight the
	// bytes all of them together may be reading (the cache's bound).
	batch    int64
	inFlight *semaphore.Weighted
}

func newTextCache(s *Searcher, budget int64) *textCache {
	return &textCache{s: s, lru: lru.New[store.Hash, []byte](budget, lru.Options{}),
		batch: budget / 8, inFlight: semaphore.NewWeighted(budget)}
}

// Prefetch reads ahead, with one store request, the leading bodies of
// keys that fit a batch and are not cached, checks and caches them. It
// implements index.Prefetcher; what it fails to read, Body reads.
func (c *textCache) Prefetch(ctx context.Context, keys []string, sizes []int64) int {
	if c.batch == 0 {
		return len(keys) // nothing could be kept: Body reads each
	}
	var want []store.Hash
	var bytes int64
	n := 0
	for ; n < len(keys); n++ {
		if n > 0 && bytes+sizes[n] > c.batch {
			break
		}
		var h store.Hash
		if len(keys[n]) != len(h) || sizes[n] > c.batch {
			continue // Body reports the bad key, or reads the large body alone
		}
		copy(h[:], keys[n])
		if _, ok := c.lru.Get(h); ok {
			continue
		}
		want = append(want, h)
		bytes += sizes[n]
	}
	if len(want) == 0 || c.inFlight.Acquire(ctx, bytes) != nil {
		return n
	}
	defer c.inFlight.Release(bytes)
	s := c.s
	if !s.start(&s.loads) {
		return n
	}
	defer s.loads.Done()
	// An error ends the batch; the bodies it did not cache are read by
	// Body, which reports what is wrong.
	_ = s.st.Blobs(ctx, want, func(h store.Hash, b []byte) error {
		if checkBody(h, b) == nil {
			c.lru.Add(h, b, int64(len(b)))
		}
		return nil
	})
	return n
}

// Held returns the body whose hash is key when the cache holds it. It
// implements index.Prefetcher: a search reads held bodies without
// planning or offering any prefetch.
func (c *textCache) Held(key []byte) ([]byte, bool) {
	var h store.Hash
	if len(key) != len(h) {
		return nil, false // Body reports the bad key
	}
	copy(h[:], key)
	return c.lru.Get(h)
}

// Body returns the body whose hash is key, verified, from the cache or
// else the store. It implements index.TextSource.
func (c *textCache) Body(ctx context.Context, key string) ([]byte, error) {
	var h store.Hash
	if len(key) != len(h) {
		return nil, fmt.Errorf("search: a body key of %d bytes is not a store hash: %w", len(key), index.ErrCorrupt)
	}
	copy(h[:], key)
	if b, ok := c.lru.Get(h); ok {
		return b, nil
	}
	b, err := c.s.once(ctx, &c.group, key, func(fctx context.Context) (any, error) {
		b, err := c.s.body(fctx, h)
		if err != nil {
			return nil, err
		}
		c.lru.Add(h, b, int64(len(b))) // not kept when over the whole budget
		return b, nil
	})
	if err != nil {
		return nil, err
	}
	return b.([]byte), nil
}

// body reads the body h from the store and checks that it is the body
// named h: its SHA-256 is h. Bodies are checked when ingest stores them;
// this check is what keeps a store that returns other bytes (a bad disk,
// a bad restore, a bug) from being served as the version's text. It costs
// about 1 s of CPU per GB (0.19 s for next@16.4.6's 190 MB of text).
func (s *Searcher) body(ctx context.Context, h store.Hash) ([]byte, error) {
	b, err := s.st.Blob(ctx, h)
	if err != nil {
		return nil, err
	}
	if err := checkBody(h, b); err != nil {
		return nil, err
	}
	return b, nil
}

// checkBody returns a *corruptBodyError unless b's SHA-256 is h.
func checkBody(h store.Hash, b []byte) error {
	if store.HashOf(b) != h {
		return &corruptBodyError{hash: h}
	}
	return nil
}

// corruptBodyError is a body the store returned that is not the one
// named by its hash. It wraps both index.ErrCorrupt (an index served from
// its stored form cannot answer) and store.ErrCorruptBody.
type corruptBodyError struct{ hash store.Hash }

func (e *corruptBodyError) Error() string {
	return fmt.Sprintf("the store returned a body (sha256 %x) whose bytes do not match that hash", e.hash)
}

func (e *corruptBodyError) Unwrap() []error { return []error{store.ErrCorruptBody, index.ErrCorrupt} }
