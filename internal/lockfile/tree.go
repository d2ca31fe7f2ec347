package lockfile

import (
	"cmp"
	"container/heap"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Install is one package folder of the node_modules tree a lockfile
// installs.
type Install struct {
	// Path is the folder relative to the project directory, as npm's
	// lockfile keys write it: "node_modules/a", nested copies
	// "node_modules/a/node_modules/b", and a workspace's own copies
	// "packages/app/node_modules/c".
	Path string
	// Dep is the package installed there. Dep.Name is the folder's name
	// (an alias's own name), so Path always ends in "node_modules/"+Name.
	Dep
}

// Tree parses a lockfile like ParseWithManifest and also returns the
// folders `npm ci --ignore-scripts` installs, sorted by Path:
//
//   - npm lockfiles 2 and 3: the "packages" keys, which are npm's install
//     paths (folders links point to, such as workspaces, are left out: they
//     are the project's own files, not node_modules);
//   - npm lockfile 1: the nesting of "dependencies", which is npm 6's
//     layout and the tree npm 7+ installs from such a file;
//   - pnpm, yarn and bun: these record a dependency graph, not a layout,
//     so the tree is the hoisted layout npm would compute from that graph
//     (hoist, below).
//
// Optional packages for other platforms (os, cpu, libc) are in the tree:
// the tree is the project's, not one machine's, while npm ci skips them on
// a machine they do not fit.
func (lim Limits) Tree(filename string, data, manifest []byte) (*Lockfile, []Install, error) {
	lf, err := lim.parse(filename, data, manifest, true)
	if err != nil {
		return nil, nil, err
	}
	tree, capped := lf.tree, false
	if lf.graph != nil {
		tree, capped = hoist(lf.graph, lim.MaxFolders)
	}
	lf.tree, lf.graph = nil, nil
	if tree == nil {
		// package.json alone: its ranges are not versions, nothing is
		// installed that a lockfile pins.
		tree = []Install{}
	}
	slices.SortFunc(tree, func(a, b Install) int { return cmp.Compare(a.Path, b.Path) })
	tree = slices.CompactFunc(tree, func(a, b Install) bool { return a.Path == b.Path })
	if capped || lim.MaxFolders > 0 && len(tree) > lim.MaxFolders {
		return nil, nil, fmt.Errorf("lockfile: %s installs more than %d package folders (the limit MaxFolders): %w",
			filepath.Base(filename), lim.MaxFolders, ErrTooManyFolders)
	}
	return lf, tree, nil
}

// installPath joins installed names into a folder path: ["a", "b"] is
// "node_modules/a/node_modules/b".
func installPath(parent, name string) string {
	if parent == "" {
		return nodeModules + name
	}
	return parent + "/" + nodeModules + name
}

// hoist lays out g as npm's arborist would (buildIdealTree's PlaceDep),
// with the versions the lockfile chose:
//
//   - folders are visited breadth first, shallowest first and then by
//     path, as arborist's queue is; each folder's dependencies in name
//     order;
//   - a dependency goes as high above its dependent as it can: up to the
//     first folder on the way to the root that already holds that name
//     (where the same instance is reused, and a different one stops it
//     one level below), and not to a folder where it would shadow the copy
//     a folder below already resolves to;
//   - workspace folders resolve through the project root, so their
//     dependencies hoist to the root's node_modules unless that conflicts.
//
// What it leaves out of arborist: peer dependency sets placed together,
// replacing an already placed copy by a newer one that satisfies more
// dependents (it cannot arise: the lockfile fixed every edge's version),
// and the order of a package's own declarations (name order is used;
// published manifests are nearly always sorted). The test against npm's
// own layout of testdata/midsize-app measures the difference.
//
// It stops once it has laid out more than maxFolders folders (when
// positive), and says so: the layout of a graph can be quadratic in its
// size or more, so its cost is bounded by the cap, not by the lockfile's.
func hoist(g *depGraph, maxFolders int) (out []Install, capped bool) {
	type folder struct {
		path   string
		depth  int
		parent *folder
		inst   int // -1 for an importer
		kids   map[string]*folder
	}
	root := &folder{inst: -1, kids: map[string]*folder{}}
	importers := map[string]*folder{"": root}
	needs := map[*folder][]int{}
	roots := g.roots
	if len(roots) == 0 {
		// A lockfile read without the manifest that says the roots (yarn
		// classic): its guessed direct dependencies.
		for i, d := range g.deps {
			if d.Direct {
				roots = append(roots, graphRoot{i: i})
			}
		}
	}
	for _, r := range roots {
		f := importers[r.dir]
		if f == nil {
			f = &folder{path: r.dir, depth: 1, parent: root, inst: -1, kids: map[string]*folder{}}
			importers[r.dir] = f
		}
		needs[f] = append(needs[f], r.i)
	}
	// resolved records, per name, which folder's dependency was answered
	// by which folder's copy, for the shadowing check.
	type resolution struct{ from, at *folder }
	resolved := map[string][]resolution{}
	within := func(f, anc *folder) bool { // f is anc or below it
		for ; f != nil; f = f.parent {
			if f == anc {
				return true
			}
		}
		return false
	}
	q := &folderQueue{}
	push := func(f *folder) { heap.Push(q, queued{f.depth, f.path, f}) }
	for _, f := range importers {
		push(f)
	}
	for q.Len() > 0 {
		f := heap.Pop(q).(queued).f.(*folder)
		want := needs[f]
		if f.inst >= 0 {
			want = nil
			if installable(g.deps[f.inst]) {
				// A link's own dependencies live in its target folder.
				want = slices.Concat(g.edges[f.inst], g.soft[f.inst])
			}
		}
		want = slices.Clone(want)
		slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(g.deps[a].Name, g.deps[b].Name) })
		for _, j := range want {
			d := g.deps[j]
			// Candidates: f and its ancestors up to the first that holds
			// the name.
			var cands []*folder
			var at *folder
			for c := f; c != nil; c = c.parent {
				if k, ok := c.kids[d.Name]; ok {
					at = k
					break
				}
				cands = append(cands, c)
			}
			if at != nil && sameInstance(g.deps[at.inst], d) {
				resolved[d.Name] = append(resolved[d.Name], resolution{f, at.parent})
				continue
			}
			// Highest candidate first; f itself always fits.
			target := f
			for k := len(cands) - 1; k > 0; k-- {
				c := cands[k]
				ok := true
				// Its peers must resolve from c to the copies it was locked
				// with (arborist places a peer set together).
				for _, p := range slices.Concat(g.edges[j], g.soft[j]) {
					if !g.peers[[2]int{j, p}] {
						continue
					}
					for a := c; a != nil; a = a.parent {
						if held, has := a.kids[g.deps[p].Name]; has {
							ok = ok && sameInstance(g.deps[held.inst], g.deps[p])
							break
						}
					}
				}
				for _, r := range resolved[d.Name] {
					if within(r.from, c) && r.at != c && !within(r.at, c) {
						if held := r.at.kids[d.Name]; !sameInstance(g.deps[held.inst], d) {
							ok = false
							break
						}
					}
				}
				if ok {
					target = c
					break
				}
			}
			path := installPath(target.path, d.Name)
			kid := &folder{path: path, depth: target.depth + 1, parent: target, inst: j, kids: map[string]*folder{}}
			target.kids[d.Name] = kid
			resolved[d.Name] = append(resolved[d.Name], resolution{f, target})
			out = append(out, Install{Path: path, Dep: d})
			if maxFolders > 0 && len(out) > maxFolders {
				return out, true
			}
			push(kid)
		}
	}
	return out, false
}

// installable reports whether d's dependencies are installed beside it:
// not for links and workspaces, whose folders are the project's own.
func installable(d Dep) bool { return d.Kind != Link && d.Kind != Workspace }

// sameInstance reports whether a and b are the same package instance.
func sameInstance(a, b Dep) bool {
	return a.Name == b.Name && a.Version == b.Version && a.Kind == b.Kind && a.Target == b.Target
}

// queued is a folder waiting for its dependencies to be placed.
type queued struct {
	depth int
	path  string
	f     any
}

// folderQueue orders folders as arborist's depsQueue does: shallowest
// first, then by path.
type folderQueue []queued

func (q folderQueue) Len() int { return len(q) }
func (q folderQueue) Less(i, j int) bool {
	return cmp.Or(cmp.Compare(q[i].depth, q[j].depth), strings.Compare(q[i].path, q[j].path)) < 0
}
func (q folderQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *folderQueue) Push(x any)   { *q = append(*q, x.(queued)) }
func (q *folderQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// String renders an install for test failures.
func (in Install) String() string {
	return fmt.Sprintf("%s %s@%s", in.Path, in.Name, in.Version)
}
