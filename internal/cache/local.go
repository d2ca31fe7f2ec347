package cache

import (
	"time"

	"github.com/pkgscope/pkgscope/internal/lru"
)

// entryOverhead is what one local entry costs besides its payload: the
// LRU's list element and map slot, the key and the entry header, measured
// at about 200 bytes on amd64 and rounded up.
const entryOverhead = 256

// local is the in-process layer: an LRU bounded by the bytes of its
// entries rather than their count, since a file list may be 50 bytes or 4
// MiB. It holds decoded values, so a hit costs no decoding.
type local struct {
	lru *lru.Cache[string, any]
}

// newLocal holds budget bytes. An entry bigger than a quarter of the
// budget is not kept: it would flush much of the cache for one value.
func newLocal(budget int64, now func() time.Time) *local {
	return &local{lru: lru.New[string, any](budget, lru.Options{MaxEntryCost: budget / 4, Now: now})}
}

// get returns a live entry's value; an expired one is dropped.
func (l *local) get(key string) (any, bool) { return l.lru.Get(key) }

// put adds or replaces key, which expires at expires (zero: never),
// evicting least recently used entries beyond the budget.
func (l *local) put(key string, v any, cost int64, expires time.Time) {
	l.lru.AddExpiring(key, v, cost+int64(len(key))+entryOverhead, expires)
}

func (l *local) size() (bytes int64, entries int) { return l.lru.Cost(), l.lru.Len() }
