package upstream

import "container/list"

// lru is a map bounded by the total cost of its entries that drops the
// least recently used first. It is not safe for concurrent use; Client
// guards it with its mutex.
type lru[K comparable, V any] struct {
	maxCost, cost int64
	order         *list.List // front = most recent; elements hold *lruEntry
	items         map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key  K
	val  V
	cost int64
}

func newLRU[K comparable, V any](maxCost int64) *lru[K, V] {
	return &lru[K, V]{maxCost: maxCost, order: list.New(), items: map[K]*list.Element{}}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	if e, ok := c.items[k]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruEntry[K, V]).val, true
	}
	var zero V
	return zero, false
}

// put stores v at cost; an entry costing more than the whole budget is
// not stored (and drops any older value for k).
func (c *lru[K, V]) put(k K, v V, cost int64) {
	if e, ok := c.items[k]; ok {
		c.remove(e)
	}
	if cost > c.maxCost {
		return
	}
	c.items[k] = c.order.PushFront(&lruEntry[K, V]{k, v, cost})
	c.cost += cost
	for c.cost > c.maxCost {
		c.remove(c.order.Back())
	}
}

func (c *lru[K, V]) remove(e *list.Element) {
	ent := e.Value.(*lruEntry[K, V])
	c.order.Remove(e)
	delete(c.items, ent.key)
	c.cost -= ent.cost
}

func (c *lru[K, V]) len() int { return c.order.Len() }
