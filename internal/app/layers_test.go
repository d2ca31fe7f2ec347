package app

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// layers is docs/ARCHITECTURE.md's "Layers" table: a package may import
// packages of its own layer or below, never above. Test helpers (fakes,
// *test packages) sit with the transports: they may use anything but the
// wiring.
var layers = map[string]int{
	// 0: leaves, no imports of ours.
	"nodesemver": 0, "pathglob": 0, "pkgpath": 0, "index": 0, "lru": 0, "npmrc": 0, "closest": 0,
	"redisconn": 0, "pglock": 0, "store": 0, "breaker": 0, "unavailable": 0, "english": 0, "strictjson": 0,
	"race": 0, "logbuf": 0, "version": 0, "gendoc": 0,
	// 1: vocabulary, storage, registry and Redis clients, ingest, grep.
	"npmspec": 1, "semver": 1, "store/blobcodec": 1, "store/postgres": 1, "store/sqlite": 1,
	"redislock": 1, "auth": 1, "session": 1, "ratelimit": 1, "upstream": 1, "ingest": 1, "search": 1,
	"diff": 1, "lockfile": 1, "popular": 1, "cache": 1, "blobgc": 1,
	// 2: resolution and the miss path.
	"resolve": 2, "fill": 2,
	// 3: the read service.
	"explore": 3,
	// 4: sources and services built on it.
	"jsdelivr": 4, "webdocs": 4, "warm": 4, "project": 4,
	// 5: transports.
	"api": 5, "mcp": 5, "web": 5, "client": 5, "metrics": 5,
	// 6: wiring.
	"config": 6, "app": 6,
}

// helperLayer is where test helpers sit.
const helperLayer = 5

func layerOf(pkg string) (int, bool) {
	if strings.HasPrefix(pkg, "cmd/") {
		return 7, true
	}
	rel := strings.TrimPrefix(pkg, "internal/")
	if l, ok := layers[rel]; ok {
		return l, true
	}
	base := filepath.Base(rel)
	if strings.HasSuffix(base, "test") || strings.HasPrefix(base, "fake") || base == "faultproxy" ||
		base == "indexmem" || base == "grepbench" {
		return helperLayer, true
	}
	return 0, false
}

// TestLayers: no package imports one above it, and every package has a
// layer (a new one is added to the table and to docs/ARCHITECTURE.md).
func TestLayers(t *testing.T) {
	t.Parallel()
	const module = "github.com/pkgscope/pkgscope/"
	root := filepath.Join("..", "..")
	checked := 0
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(dir string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() || d.Name() == "testdata" {
				if d != nil && d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return err
			}
			p, err := build.ImportDir(dir, 0)
			if err != nil {
				return nil // no Go files, or only tests
			}
			rel, _ := filepath.Rel(root, dir)
			pkg := filepath.ToSlash(rel)
			from, ok := layerOf(pkg)
			if !ok {
				t.Errorf("%s has no layer: add it to layers and to docs/ARCHITECTURE.md", pkg)
				return nil
			}
			checked++
			for _, imp := range p.Imports {
				dep, ours := strings.CutPrefix(imp, module)
				if !ours {
					continue
				}
				if to, ok := layerOf(dep); ok && to > from {
					t.Errorf("%s (layer %d) imports %s (layer %d), a layer above it", pkg, from, dep, to)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 40 {
		t.Fatalf("checked only %d packages: is the walk rooted at the module?", checked)
	}
}
