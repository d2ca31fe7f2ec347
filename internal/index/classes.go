package index

import (
	"sync"
	"weak"
)

// Classes is a caller's class of each file of an index, by path (such as
// internal/explore's tier of a file in a grep's scope), made once for the
// index it is used with and kept: a search with Query.Classes drops a
// file whose class Query.ClassMask leaves out by a table lookup, with no
// path made and no Filter asked. A grep page makes several searches (a
// tier and pass each, and a count), and asking Filter about each
// candidate file in each made a path string and looked it up in a map
// of the version's files: 15% of a warm grep of next 16.4.6's useRouter.
//
// A Classes is safe for concurrent use. It holds the table of the last
// index it was used with: an index reopened (or another one) makes a new
// table, one classify call per file (8,711 for next 16.4.6). It names that
// index by a weak pointer: a caller keeping its Classes past the index's
// eviction from the searcher's cache (explore's scopes outlive it) does
// not keep the index's tables in memory (a stored form's are several MB).
type Classes struct {
	classify func(path string) int
	mu       sync.Mutex
	ix       weak.Pointer[Index]
	table    []int8
}

// NewClasses returns the classes classify gives files: each a class in
// [0, 63], or a negative number for a file no search with these classes
// visits.
func NewClasses(classify func(path string) int) *Classes {
	return &Classes{classify: classify}
}

// of returns ix's table: the class of each file by its id, negative for
// none (or a class past 63, which no mask holds).
func (c *Classes) of(ix *Index) []int8 {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := weak.Make(ix)
	if c.ix == w {
		return c.table
	}
	t := make([]int8, len(ix.files))
	for fi := range ix.files {
		k := c.classify(ix.filePath(fi))
		if k < 0 || k > 63 {
			k = -1
		}
		t[fi] = int8(k)
	}
	c.ix, c.table = w, t
	return t
}

// inClass reports whether file fi's class is in Query.ClassMask (always,
// without Query.Classes).
func (s *searcher) inClass(fi int) bool {
	if s.classes == nil {
		return true
	}
	k := s.classes[fi]
	return k >= 0 && s.q.ClassMask&(1<<k) != 0
}
