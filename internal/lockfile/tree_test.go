package lockfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
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
