package lockfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/lockfile/lockfiletest"
)

// readTree lays out the lockfile dir/file with the package.json beside it.
func readTree(t *testing.T, dir, file string) []Install {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", dir, file))
	if err != nil {
		t.Fatal(err)
	}
	man, err := os.ReadFile(filepath.Join("testdata", dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, tree, err := DefaultLimits().Tree(file, data, man)
	if err != nil {
		t.Fatalf("%s/%s: %v", dir, file, err)
	}
	return tree
}

// diffTrees lists the folders only one side has, or that hold different
// versions.
func diffTrees(want, got []Install) (missing, extra []string) {
	w := map[string]string{}
	for _, in := range want {
		w[in.Path] = in.Name + "@" + in.Version
	}
	g := map[string]string{}
	for _, in := range got {
		g[in.Path] = in.Name + "@" + in.Version
	}
	for p, v := range w {
		if g[p] != v {
			missing = append(missing, p+" "+v)
		}
	}
	for p, v := range g {
		if w[p] != v {
			extra = append(extra, p+" "+v)
		}
	}
	return missing, extra
}

// TestHoistMatchesNPM lays out the midsize app's pnpm, yarn and bun
// lockfiles and compares with the layout npm 11 computed for the same
// project (its package-lock.json keys).
func TestHoistMatchesNPM(t *testing.T) {
	want := readTree(t, "midsize-app", "package-lock.json")
	if len(want) < 300 {
		t.Fatalf("package-lock.json tree has %d folders, want the whole app", len(want))
	}
	for _, file := range []string{"pnpm-lock.yaml", "yarn.lock", "bun.lock"} {
		t.Run(file, func(t *testing.T) {
			got := readTree(t, "midsize-app", file)
			missing, extra := diffTrees(want, got)
			if file == "yarn.lock" {
				// yarn.lock does not record peer dependencies, so the peer
				// ajv@8 that keeps npm from hoisting ajv-keywords@5 to the
				// root (where ajv@6 is) is unknown: the one difference.
				missing = slices.DeleteFunc(missing, func(s string) bool {
					return s == "node_modules/schema-utils/node_modules/ajv-keywords ajv-keywords@5.1.0"
				})
				extra = slices.DeleteFunc(extra, func(s string) bool { return s == "node_modules/ajv-keywords ajv-keywords@5.1.0" })
			}
			if len(missing)+len(extra) > 0 {
				t.Errorf("%d of %d folders differ from npm's layout\nnpm has: %v\nhoist has: %v", len(missing), len(want), missing, extra)
			}
		})
	}
}

// TestHoistFixtures compares every fixture's registry packages with the
// layout npm 11 wrote for the same project (package-lock-v3). Folders of
// other kinds differ by design: the lockfiles record no version for git,
// file: and tarball packages, and npm alone links workspaces into
// node_modules.
func TestHoistFixtures(t *testing.T) {
	registry := func(tree []Install) []Install {
		var out []Install
		for _, in := range tree {
			if in.Kind.Warmable() {
				out = append(out, in)
			}
		}
		return out
	}
	want := registry(readTree(t, "package-lock-v3", "package-lock.json"))
	for _, fx := range fixtures {
		if fx.dir == "package-json" {
			continue
		}
		t.Run(fx.dir, func(t *testing.T) {
			got := registry(readTree(t, fx.dir, fx.file))
			missing, extra := diffTrees(want, got)
			// Without the workspace (npm 6, pnpm without one), or with
			// yarn classic, which does not list workspaces, the
			// workspace's own is-number@6 is not in the lockfile.
			if !fx.workspace || fx.dir == "yarn-v1" {
				missing = slices.DeleteFunc(missing, func(s string) bool { return s == "packages/app/node_modules/is-number is-number@6.0.0" })
			}
			if len(missing)+len(extra) > 0 {
				t.Errorf("npm has: %v\nhoist has: %v", missing, extra)
			}
		})
	}
}

// TestTreeStopsAtMaxFolders: a layout past MaxFolders stops there and
// fails with ErrTooManyFolders, so its cost is the cap's. Before, the
// 280-package NestingPnpm lockfile (280 KB) was laid out whole, 78,680
// folders, before the caller's count refused it (and 700 packages, a
// 737 KB file, took 3 minutes of CPU and 1.1 GiB in the mirror).
func TestTreeStopsAtMaxFolders(t *testing.T) {
	data := []byte(lockfiletest.NestingPnpm(280, 40))
	lim := DefaultLimits()
	g, err := lim.parse("pnpm-lock.yaml", data, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if out, capped := hoist(g.graph, 2000); len(out) != 2001 || !capped {
		t.Errorf("hoist with a cap of 2000 laid out %d folders (capped %v), want 2001 and capped", len(out), capped)
	}
	lim.MaxFolders = 2000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, tree, err := lim.Tree("pnpm-lock.yaml", data, nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooManyFolders) || !strings.Contains(err.Error(), "more than 2000") || tree != nil {
		t.Errorf("Tree over MaxFolders: %d folders, %v; want ErrTooManyFolders saying more than 2000", len(tree), err)
	}
	// The parse itself allocates about 10 MiB; the whole layout 350.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 48<<20 {
		t.Errorf("Tree over MaxFolders allocated %d MiB, want under 48: the layout did not stop at the cap", alloc>>20)
	}
	// Within the cap, the whole layout: n·(n+1) folders.
	lim.MaxFolders = 100_000
	if _, tree, err := lim.Tree("pnpm-lock.yaml", data, nil); err != nil || len(tree) != 78_680 {
		t.Errorf("Tree within MaxFolders: %d folders, %v; want 78,680", len(tree), err)
	}
}
