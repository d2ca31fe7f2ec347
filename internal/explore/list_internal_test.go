package explore

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/store"
)

// TestEntryCost: the counted cost of a list entry is what Cost, which
// encodes it, says, so that pages cut where they did before.
func TestEntryCost(t *testing.T) {
	for _, e := range []Entry{
		{},
		{Path: "index.js", Type: EntryFile, Bytes: 2640},
		{Path: "dist/", Type: EntryFolder, Bytes: 183_000_000, Files: 8711},
		{Path: "a<b>&c\"d\\e\n\t\x01.js", Type: EntryFile, Bytes: 9},
		{Path: "ünï/\u2028\xff.md", Type: EntryFile, Bytes: 10},
		{Path: "x", Type: EntryFolder, Bytes: -12, Files: -3},
		{Path: "y", Type: EntryFile, Bytes: math.MaxInt64, Files: math.MinInt32},
		{Path: "z", Type: EntryFile, Bytes: math.MinInt64},
	} {
		if got, want := e.cost(), Cost(e); got != want {
			t.Errorf("%+v: cost %d, Cost %d", e, got, want)
		}
	}
}

// FuzzEntryCost holds the counted cost to Cost for any path and sizes.
func FuzzEntryCost(f *testing.F) {
	f.Add("dist/index.d.ts", int64(1234), 0)
	f.Add("<&>\xff", int64(-1), 7)
	f.Fuzz(func(t *testing.T, path string, bytes int64, files int) {
		e := Entry{Path: path, Type: EntryFile, Bytes: bytes, Files: files}
		if got, want := e.cost(), Cost(e); got != want {
			t.Errorf("%+v: cost %d, Cost %d", e, got, want)
		}
	})
}

// TestTreeSameEntries: tree answers what a plain walk of the folders
// answers, for files in path order and out of it, at every depth.
func TestTreeSameEntries(t *testing.T) {
	paths := []string{"README.md", "dist/a.js", "dist/b/c.js", "dist/b/d/e.js", "dist/b/f.js", "dist/g.js",
		"lib/x/y/z.js", "lib/x/z.js", "package.json", "src/b/c.js"}
	var files []store.File
	for i, p := range paths {
		files = append(files, store.File{Path: p, Size: int64(10 * (i + 1))})
	}
	shuffled := append([]store.File(nil), files...)
	slices.Reverse(shuffled)
	for _, in := range [][]store.File{files, shuffled} {
		for _, dir := range []string{"", "dist"} {
			sub := in
			if dir != "" {
				sub = nil
				for _, f := range in {
					if strings.HasPrefix(f.Path, dir+"/") {
						sub = append(sub, f)
					}
				}
			}
			for depth := -1; depth <= 4; depth++ {
				if got, want := tree(sub, dir, depth), walkTree(sub, dir, depth); !slices.Equal(got, want) {
					t.Errorf("dir %q depth %d:\n got %v\nwant %v", dir, depth, got, want)
				}
			}
		}
	}
}

// walkTree is tree written plainly: each folder's totals from a map.
func walkTree(files []store.File, dir string, depth int) []Entry {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	folders := map[string]*Entry{}
	var out []Entry
	for _, f := range files {
		parts := strings.Split(strings.TrimPrefix(f.Path, prefix), "/")
		for l := 1; l < len(parts) && depth != 0 && (depth < 0 || l <= depth); l++ {
			p := prefix + strings.Join(parts[:l], "/") + "/"
			if folders[p] == nil {
				folders[p] = &Entry{Path: p, Type: EntryFolder}
			}
			folders[p].Files++
			folders[p].Bytes += f.Size
		}
		if depth <= 0 || len(parts)-1 < depth {
			out = append(out, Entry{Path: f.Path, Type: EntryFile, Bytes: f.Size})
		}
	}
	for _, e := range folders {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return out
}
