package explore

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/pathglob"
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

// TestFileTreeAnswersAsTrees: a version's shared tree answers list, a
// read of a folder and glob as the trees built per request did: the same
// pages (every depth, folder, cursor and budget), the same automatic
// depth, the same glob matches.
func TestFileTreeAnswersAsTrees(t *testing.T) {
	var files []store.File
	for i := range 400 {
		p := fmt.Sprintf("dist/%s/m%03d.js", []string{"a", "a/b", "a/b/c", "esm/x", "b"}[i%5], i)
		if i%7 == 0 {
			p = fmt.Sprintf("f%02d.md", i)
		}
		files = append(files, store.File{Path: p, Size: int64(i * 37)})
	}
	files = append(files, store.File{Path: "dist.js", Size: 1}, store.File{Path: "dist/a/b/c/d/e/f/g/h.d.ts", Size: 9})
	slices.SortFunc(files, func(a, b store.File) int { return strings.Compare(a.Path, b.Path) })
	ft := newFileTree(files)
	for _, dir := range []string{"", "dist", "dist/a", "dist/a/b/c", "dist/esm/x"} {
		sub := files
		if dir != "" {
			sub = under(files, dir)
		}
		v := ft.below(dir)
		for _, left := range []int{100, 2000, 6000, 10_000, 15_000, 20_000, 1 << 20} {
			if got, want := v.autoDepth(left), autoDepthByTrees(sub, dir, left); got != want {
				t.Errorf("dir %q, %d bytes left: automatic depth %d, by trees %d", dir, left, got, want)
			}
		}
		for depth := -1; depth <= 5; depth++ {
			for _, cursor := range []string{"", "l:" + sub[len(sub)/3].Path, "l:dist/a/"} {
				r := Request{Cursor: cursor}
				got, want := &ListResult{}, &ListResult{}
				v.page(got, depth, &Budget{limit: 3000}, r)
				PageEntries(want, tree(sub, dir, depth), &Budget{limit: 3000}, r)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("dir %q depth %d cursor %q:\n got %+v\nwant %+v", dir, depth, cursor, got, want)
				}
			}
		}
	}
	for _, ps := range [][]string{{"**/*.d.ts"}, {"dist/a/**", "!dist/a/b/c/**"}, {"*"}, {"dist/*/*"}, {"nothing/**"}} {
		m, err := pathglob.Compile(ps, pathglob.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		g, err := ft.glob(t.Context(), m)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := pathglob.Select(t.Context(), m, tree(files, "", -1), func(e Entry) string { return strings.TrimSuffix(e.Path, "/") })
		var got []Entry
		var bytes int64
		for i, e := range ft.entries {
			if g.sel[i] {
				got = append(got, e)
				if e.Type == EntryFile {
					bytes += e.Bytes
				}
			}
		}
		if !slices.Equal(got, want) || g.n != len(got) || g.bytes != bytes || len(got) > 0 && ft.entries[g.first] != got[0] {
			t.Errorf("glob %q: %d matched, %d bytes, first %d:\n got %v\nwant %v", ps, g.n, g.bytes, g.first, got, want)
		}
		for _, cursor := range []string{"", "l:dist/a/"} {
			r := Request{Cursor: cursor}
			gotPage, wantPage := &ListResult{}, &ListResult{}
			g.page(gotPage, ft, &Budget{limit: 2000}, r)
			PageEntries(wantPage, want, &Budget{limit: 2000}, r)
			if !reflect.DeepEqual(gotPage, wantPage) {
				t.Errorf("glob %q cursor %q:\n got %+v\nwant %+v", ps, cursor, gotPage, wantPage)
			}
		}
	}
}

// autoDepthByTrees is view.autoDepth as it was written per request: each
// tree built and weighed until one is over left.
func autoDepthByTrees(files []store.File, dir string, left int) int {
	fits := func(es []Entry) bool {
		n := 0
		for _, e := range es {
			n += e.cost()
		}
		return n <= left
	}
	if fits(tree(files, dir, 0)) {
		return 0
	}
	best := 1
	for d := 2; d < 32; d++ {
		t := tree(files, dir, d)
		if !fits(t) {
			break
		}
		best = d
		if len(t) == len(tree(files, dir, d+1)) {
			break // no deeper level left
		}
	}
	return best
}
