package explore

import (
	"container/list"
	"sync"
)

// held is a bounded LRU of what depends only on a version (or a pair
// of versions) and is shared by every request about it: grep's tables
// (scope.go), a diff's changes (diffpairs.go). Each value has a cost (the
// files it covers); the least recently used go once the costs held pass
// max. A max of 0 holds nothing. Safe for concurrent use.
type held[K comparable, V any] struct {
	max   int
	mu    sync.Mutex
	cost  int
	order *list.List // of *heldEntry[K, V], most recently used first
	byKey map[K]*list.Element
}

type heldEntry[K comparable, V any] struct {
	key  K
	val  V
	cost int
}

func newHeld[K comparable, V any](max int) *held[K, V] {
	return &held[K, V]{max: max, order: list.New(), byKey: map[K]*list.Element{}}
}

// get returns k's value, made by make (outside the lock: two requests
// making the same value at once both make it, and the first kept stays)
// when it is not held; cost is what a value made for k costs. A value
// costing more than max is made and not kept.
func (h *held[K, V]) get(k K, cost int, make func() V) V {
	if h == nil || h.max <= 0 || cost > h.max {
		return make()
	}
	h.mu.Lock()
	if e, ok := h.byKey[k]; ok {
		h.order.MoveToFront(e)
		v := e.Value.(*heldEntry[K, V]).val
		h.mu.Unlock()
		return v
	}
	h.mu.Unlock()
	v := make()
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := h.byKey[k]; ok {
		return e.Value.(*heldEntry[K, V]).val
	}
	h.byKey[k] = h.order.PushFront(&heldEntry[K, V]{key: k, val: v, cost: cost})
	h.cost += cost
	for h.cost > h.max {
		e := h.order.Back()
		old := e.Value.(*heldEntry[K, V])
		h.order.Remove(e)
		delete(h.byKey, old.key)
		h.cost -= old.cost
	}
	return v
}
