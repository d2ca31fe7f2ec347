package jsdelivr

import (
	"container/list"

	"github.com/pkgscope/pkgscope/internal/store"
)

// lru keeps listings of exact versions (immutable), bounded by their total
// number of files, dropping the least recently used first. It is not safe
// for concurrent use; Fallback guards it.
type lru struct {
	max, cost int
	order     *list.List // front = most recent; elements hold *lruEntry
	items     map[string]*list.Element
}

type lruEntry struct {
	key   string
	files []store.File
}

func newLRU(maxFiles int) *lru {
	return &lru{max: maxFiles, order: list.New(), items: map[string]*list.Element{}}
}

func (c *lru) get(key string) ([]store.File, bool) {
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry).files, true
}

// put keeps files under key unless they alone exceed the budget.
func (c *lru) put(key string, files []store.File) {
	if e, ok := c.items[key]; ok {
		c.remove(e)
	}
	if len(files) > c.max {
		return
	}
	c.items[key] = c.order.PushFront(&lruEntry{key, files})
	c.cost += len(files)
	for c.cost > c.max {
		c.remove(c.order.Back())
	}
}

func (c *lru) remove(e *list.Element) {
	ent := e.Value.(*lruEntry)
	c.order.Remove(e)
	delete(c.items, ent.key)
	c.cost -= len(ent.files)
}
