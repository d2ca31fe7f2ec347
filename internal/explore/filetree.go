package explore

import (
	"context"
	"sort"
	"strings"

	"github.com/pkgscope/pkgscope/internal/pathglob"
	"github.com/pkgscope/pkgscope/internal/store"
)

// fileTree is a listing's every file and folder (tree(files, "", -1)),
// each with its depth and what it costs in an answer: what list, glob and
// a read of a folder need of a version that depends only on the version.
// Made per request, the tree was the largest part of a warm glob's or
// list's CPU (a quarter of a glob's, two fifths of a list's, whose
// automatic depth built it once per depth tried), whatever the answer
// held; made once per listing (Service.trees), a request walks it.
//
// A list of a folder to a depth is a run of it (the folder's entries are
// one run in byte order), filtered by depth: a folder's totals are the
// same at every depth.
//
// A fileTree is shared by every request that asks for it: read only.
type fileTree struct {
	entries []Entry
	// slashes counts the '/' of each entry's path, a folder's final one
	// included; cost is each entry's cost().
	slashes []int32
	cost    []int32
}

// newFileTree builds the tree of files (sorted by path).
func newFileTree(files []store.File) *fileTree {
	t := &fileTree{entries: tree(files, "", -1)}
	t.slashes = make([]int32, len(t.entries))
	t.cost = make([]int32, len(t.entries))
	for i, e := range t.entries {
		t.slashes[i] = int32(strings.Count(e.Path, "/"))
		t.cost[i] = int32(e.cost())
	}
	return t
}

// trees holds fileTrees, costed by their listing's files (next 16.4.6's
// 8,711 files and 690 folders: 9,401 entries of 56 bytes, 0.5 MB).
type trees = held[listingKey, *fileTree]

func newTrees(maxFiles int) *trees { return newHeld[listingKey, *fileTree](maxFiles) }

// treeOf returns the fileTree of o's listing, made once and kept while
// the bound allows.
func (s *Service) treeOf(o *Opened) *fileTree {
	return s.trees.get(o.listingKey(), len(o.Files), func() *fileTree { return newFileTree(o.Files) })
}

// globbed is what a glob selected of a tree: which entries, the first,
// how many, and the bytes of the files among them.
type globbed struct {
	sel   []bool
	first int
	n     int
	bytes int64
}

// glob returns the entries m selects. A page is cut from the tree itself
// (globbed.page), so a glob allocates a byte per entry, not a copy of
// what it matched.
func (t *fileTree) glob(ctx context.Context, m *pathglob.Matcher) (*globbed, error) {
	g := &globbed{sel: make([]bool, len(t.entries)), first: -1}
	err := pathglob.Each(ctx, m, len(t.entries), func(i int) string { return strings.TrimSuffix(t.entries[i].Path, "/") }, func(i int) {
		g.sel[i] = true
		if g.n++; g.first < 0 {
			g.first = i
		}
		if e := t.entries[i]; e.Type == EntryFile {
			g.bytes += e.Bytes
		}
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// page fills res with the entries g selected of t after r's cursor while
// b lasts, as PageEntries does with them.
func (g *globbed) page(res *ListResult, t *fileTree, b *Budget, r Request) {
	pageEntries(res, t.entries, t.cost, func(i int) bool { return g.sel[i] }, b, r)
}

// view is the entries of a tree below one folder, as tree(under(files,
// dir), dir, depth) lists them at each depth: indexes lo..hi of the
// tree, those deeper than the depth left out.
type view struct {
	t      *fileTree
	lo, hi int
	base   int32 // the '/' of the folder's own path, its final one included
}

// below returns the view of the entries under folder dir ("" for all).
func (t *fileTree) below(dir string) view {
	v := view{t: t, hi: len(t.entries)}
	if dir != "" {
		prefix := dir + "/"
		v.lo = sort.Search(len(t.entries), func(i int) bool { return t.entries[i].Path > prefix })
		v.hi = v.lo + sort.Search(len(t.entries)-v.lo, func(i int) bool { return !strings.HasPrefix(t.entries[v.lo+i].Path, prefix) })
		v.base = int32(strings.Count(prefix, "/"))
	}
	return v
}

// level is the depth from which entry i is shown: a folder from its own
// level (tree lists it to depths at or past it), a file from the level
// below its folder's.
func (v view) level(i int) int {
	l := int(v.t.slashes[i] - v.base)
	if v.t.entries[i].Type == EntryFile {
		l++
	}
	return l
}

// shows reports whether the view lists entry i (of the tree) at depth
// (tree's meaning: 0 every file and no folder, -1 everything).
func (v view) shows(i, depth int) bool {
	switch {
	case depth < 0:
		return true
	case depth == 0:
		return v.t.entries[i].Type == EntryFile
	}
	return v.level(i) <= depth
}

// filesFit reports whether every file of the view, one entry each,
// costs at most left (the view at depth 0).
func (v view) filesFit(left int) bool {
	for i := v.lo; i < v.hi; i++ {
		if v.t.entries[i].Type == EntryFile {
			if left -= int(v.t.cost[i]); left < 0 {
				return false
			}
		}
	}
	return true
}

// autoDepth picks what a list without depth shows: every file (0) when
// they fit in left bytes, else the deepest tree that fits (at least 1),
// learned in one pass from the entries' counts and costs by level. A
// list of next's 8,711 files built, sorted and encoded the whole file
// tree to learn that it did not fit, then built it again for each depth
// (issue 27).
func (v view) autoDepth(left int) int {
	if v.filesFit(left) {
		return 0
	}
	const deepest = 32 // the deepest tree tried
	var count, cost [deepest + 2]int
	for i := v.lo; i < v.hi; i++ {
		if l := v.level(i); l <= deepest+1 {
			count[l]++
			cost[l] += int(v.t.cost[i])
		}
	}
	for l := 1; l < len(count); l++ { // what the tree to depth l holds
		count[l] += count[l-1]
		cost[l] += cost[l-1]
	}
	best := 1
	for d := 2; d < deepest; d++ {
		if cost[d] > left {
			break
		}
		best = d
		if count[d] == count[d+1] {
			break // no deeper level left
		}
	}
	return best
}

// page fills res with the entries the view shows at depth after r's
// cursor while b lasts, as PageEntries does.
func (v view) page(res *ListResult, depth int, b *Budget, r Request) {
	all, cost := v.t.entries[v.lo:v.hi], v.t.cost[v.lo:v.hi]
	if depth < 0 {
		pageEntries(res, all, cost, nil, b, r)
		return
	}
	pageEntries(res, all, cost, func(i int) bool { return v.shows(v.lo+i, depth) }, b, r)
}
