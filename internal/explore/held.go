package explore

import "github.com/pkgscope/pkgscope/internal/lru"

// held is the mirror's cost-bounded LRU (internal/lru) of what depends
// only on a version (or a pair of versions) and is shared by every
// request about it: grep's tables (scope.go), a diff's changes and the
// files its pages were cut inside (diffpairs.go), file trees
// (filetree.go). Each value has a cost (the files it covers, or for a
// file's diff its bytes); the least recently used go once the costs held
// pass max. A max of 0 holds nothing. Safe for concurrent use.
type held[K comparable, V any] struct {
	c *lru.Cache[K, V] // nil: holds nothing
}

func newHeld[K comparable, V any](max int) *held[K, V] {
	if max <= 0 {
		return &held[K, V]{}
	}
	return &held[K, V]{c: lru.New[K, V](int64(max), lru.Options{})}
}

// get returns k's value, made by make (outside the lock) when it is not
// held; cost is what a value made for k costs. Two requests making the
// same value at once both make it, and the one kept first is returned to
// a later third; the values are alike (made from the same versions). A
// value costing more than max is made and not kept.
func (h *held[K, V]) get(k K, cost int, make func() V) V {
	if v, ok := h.lookup(k); ok {
		return v
	}
	v := make()
	if kept, ok := h.lookup(k); ok {
		return kept
	}
	h.put(k, v, cost)
	return v
}

// lookup returns k's value if it is held, and marks it used.
func (h *held[K, V]) lookup(k K) (v V, ok bool) {
	if h == nil || h.c == nil {
		return v, false
	}
	return h.c.Get(k)
}

// put holds v, costing cost, as k's value in place of any held; a value
// costing more than max is not held (nor is the one it replaces).
func (h *held[K, V]) put(k K, v V, cost int) {
	if h != nil && h.c != nil {
		h.c.Add(k, v, int64(cost))
	}
}
