// Package lru is the mirror's one in-process cache bounded by cost: once
// the summed cost of its entries passes the budget, the least recently
// used go first. The cost is whatever the caller counts: bytes (packuments,
// MDN pages, file lists and bodies), files (jsDelivr listings) or 1 (a
// count).
//
// hashicorp's simplelru keeps the order; it bounds by count only, so the
// cost is kept here. The cost-aware libraries (ristretto, otter) are
// approximate and evict asynchronously, and ristretto may drop an Add under
// contention: a cache whose budget is a documented setting, and whose tests
// check what it keeps, needs exact, synchronous eviction.
package lru

import (
	"math"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Options tune a Cache.
type Options struct {
	// MaxEntryCost refuses entries that cost more; 0 means the budget. A
	// cache of values that vary a lot in size sets it to a fraction of
	// the budget, so that one large value cannot flush everything else.
	MaxEntryCost int64
	// Now is the clock for expiry; nil is time.Now.
	Now func() time.Time
}

// Cache is a cost-bounded LRU. It is safe for concurrent use.
type Cache[K comparable, V any] struct {
	mu       sync.Mutex
	order    *simplelru.LRU[K, entry[V]]
	cost     int64
	budget   int64
	maxEntry int64
	now      func() time.Time
}

type entry[V any] struct {
	v    V
	cost int64
	// expires is zero for entries that do not expire.
	expires time.Time
}

// New returns an empty cache holding entries of at most budget summed
// cost.
func New[K comparable, V any](budget int64, opt Options) *Cache[K, V] {
	c := &Cache[K, V]{budget: budget, maxEntry: opt.MaxEntryCost, now: opt.Now}
	if c.maxEntry <= 0 {
		c.maxEntry = budget
	}
	if c.now == nil {
		c.now = time.Now
	}
	// The count bound is never reached: Add enforces the budget.
	c.order, _ = simplelru.NewLRU[K, entry[V]](math.MaxInt, func(_ K, e entry[V]) { c.cost -= e.cost })
	return c
}

// Get returns k's value and marks it most recently used. An expired entry
// is dropped and not returned.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.order.Get(k)
	if ok && !e.expires.IsZero() && !c.now().Before(e.expires) {
		c.order.Remove(k)
		ok = false
	}
	if !ok {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Add stores v under k at cost, replacing any value k had, and evicts the
// least recently used entries past the budget. An entry costing more than
// MaxEntryCost is not stored (and k's older value is dropped).
func (c *Cache[K, V]) Add(k K, v V, cost int64) { c.AddExpiring(k, v, cost, time.Time{}) }

// AddExpiring is Add for an entry that Get stops returning at expires.
func (c *Cache[K, V]) AddExpiring(k K, v V, cost int64, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Remove(k) // Add would replace without telling the evict callback
	if cost > c.maxEntry {
		return
	}
	c.order.Add(k, entry[V]{v: v, cost: cost, expires: expires})
	c.cost += cost
	for c.cost > c.budget {
		c.order.RemoveOldest()
	}
}

// Remove drops k.
func (c *Cache[K, V]) Remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Remove(k)
}

// Keys returns the keys held, the least recently used first (expired
// ones not yet seen included).
func (c *Cache[K, V]) Keys() []K {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Keys()
}

// Len is the number of entries held (expired ones not yet seen included).
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Cost is the summed cost of the entries held.
func (c *Cache[K, V]) Cost() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cost
}
