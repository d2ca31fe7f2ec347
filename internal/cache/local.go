package cache

import (
	"math"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// entryOverhead is what one local entry costs besides its payload: the
// LRU's list element and map slot, the key and the entry header, measured
// at about 200 bytes on amd64 and rounded up.
const entryOverhead = 256

// local is the in-process layer: an LRU bounded by the bytes of its
// entries rather than their count, since a file list may be 50 bytes or 4
// MiB. It holds decoded values, so a hit costs no decoding.
type local struct {
	mu     sync.Mutex
	lru    *simplelru.LRU[string, localEntry]
	bytes  int64
	budget int64
}

type localEntry struct {
	v    any
	cost int64
	// expires is zero for immutable entries.
	expires time.Time
}

func newLocal(budget int64) *local {
	l := &local{budget: budget}
	// The count bound is never reached: evict enforces the byte budget.
	l.lru, _ = simplelru.NewLRU[string, localEntry](math.MaxInt, func(_ string, e localEntry) { l.bytes -= e.cost })
	return l
}

// get returns a live entry's value; an expired one is dropped.
func (l *local) get(key string, now func() time.Time) (any, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.lru.Get(key)
	if !ok {
		return nil, false
	}
	if !e.expires.IsZero() && !now().Before(e.expires) {
		l.lru.Remove(key)
		return nil, false
	}
	return e.v, true
}

// put adds or replaces key, evicting least recently used entries beyond
// the budget. An entry bigger than a quarter of the budget is not kept: it
// would flush much of the cache for one value.
func (l *local) put(key string, v any, cost int64, expires time.Time) {
	cost += int64(len(key)) + entryOverhead
	if cost > l.budget/4 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lru.Remove(key) // Add would replace without telling the evict callback
	l.lru.Add(key, localEntry{v: v, cost: cost, expires: expires})
	l.bytes += cost
	for l.bytes > l.budget {
		l.lru.RemoveOldest()
	}
}

func (l *local) size() (bytes int64, entries int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bytes, l.lru.Len()
}
