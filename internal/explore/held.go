package explore

import (
	"container/list"
	"sync"
)

// held is a bounded LRU of what depends only on a version (or a pair
// of versions) and is shared by every request about it: grep's tables
// (scope.go), a diff's changes and the files its pages were cut inside
// (diffpairs.go). Each value has a cost (the files it covers, or for a
// file's diff its bytes); the least recently used go once the costs held
// pass max. A max of 0 holds nothing. Safe for concurrent use.
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
	if v, ok := h.lookup(k); ok {
		return v
	}
	return h.keep(k, make(), cost, false)
}

// lookup returns k's value if it is held, and marks it used.
func (h *held[K, V]) lookup(k K) (v V, ok bool) {
	if h == nil || h.max <= 0 {
		return v, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.byKey[k]
	if !ok {
		return v, false
	}
	h.order.MoveToFront(e)
	return e.Value.(*heldEntry[K, V]).val, true
}

// put holds v, costing cost, as k's value in place of any held; a value
// costing more than max is not held (nor is the one it replaces).
func (h *held[K, V]) put(k K, v V, cost int) { h.keep(k, v, cost, true) }

// keep holds v as k's value and returns what k holds: v, or when k
// already holds a value and replace is false, that value. The least
// recently used values go until the costs fit max.
func (h *held[K, V]) keep(k K, v V, cost int, replace bool) V {
	if h == nil || h.max <= 0 {
		return v
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := h.byKey[k]; ok {
		if !replace {
			return e.Value.(*heldEntry[K, V]).val
		}
		h.remove(e)
	}
	if cost > h.max {
		return v
	}
	h.byKey[k] = h.order.PushFront(&heldEntry[K, V]{key: k, val: v, cost: cost})
	h.cost += cost
	for h.cost > h.max {
		h.remove(h.order.Back())
	}
	return v
}

func (h *held[K, V]) remove(e *list.Element) {
	old := e.Value.(*heldEntry[K, V])
	h.order.Remove(e)
	delete(h.byKey, old.key)
	h.cost -= old.cost
}
