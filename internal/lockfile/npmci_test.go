package lockfile_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/lockfile"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// pkgSpec is one published version and its dependencies (name → exact
// version: the test's ranges are exact, so npm and the yarn.lock below
// agree on every edge).
type pkgSpec struct {
	name, version string
	deps          map[string]string
}

// conflicts is a graph that makes npm nest: ms@2.0.0 at the root and
// ms@2.1.3 below two dependents; a@1 at the root and a@2 below @scope/x;
// d@1 at the root and d@2 below b, whose own dependency e hoists.
var conflicts = []pkgSpec{
	{"a", "1.0.0", map[string]string{"ms": "2.1.3"}},
	{"a", "2.0.0", map[string]string{"ms": "2.0.0"}},
	{"b", "1.0.0", map[string]string{"c": "1.0.0", "d": "2.0.0"}},
	{"c", "1.0.0", map[string]string{"ms": "2.1.3"}},
	{"d", "1.0.0", nil},
	{"d", "2.0.0", map[string]string{"e": "1.0.0"}},
	{"e", "1.0.0", map[string]string{"b": "1.0.0"}}, // a cycle back to b
	{"ms", "2.0.0", nil},
	{"ms", "2.1.3", nil},
	{"@scope/x", "1.0.0", map[string]string{"a": "2.0.0"}},
}

var conflictsRoot = map[string]string{"a": "1.0.0", "b": "1.0.0", "d": "1.0.0", "ms": "2.0.0", "@scope/x": "1.0.0"}

// TestTreeIsWhatNPMInstalls installs a project with the real npm CLI from
// the fake registry, then checks that Tree lays out exactly the package
// folders npm created: from the package-lock.json npm wrote (read back
// after `npm ci --ignore-scripts`), and from a yarn.lock of the same graph
// (hoisted by Tree itself).
func TestTreeIsWhatNPMInstalls(t *testing.T) {
	reg := fakeregistry.New(t)
	for _, p := range conflicts {
		manifest, _ := json.Marshal(map[string]any{"name": p.name, "version": p.version, "dependencies": p.deps})
		reg.Publish(p.name, p.version, tarballtest.Package(t, map[string]string{
			"package.json": string(manifest),
			"index.js":     "module.exports = " + fmt.Sprintf("%q", p.name+"@"+p.version) + ";\n",
		}), fakeregistry.WithDependencies(p.deps))
	}
	dir := t.TempDir()
	manifest, _ := json.Marshal(map[string]any{"name": "app", "version": "1.0.0", "private": true, "dependencies": conflictsRoot})
	write(t, filepath.Join(dir, "package.json"), string(manifest))
	reg.RunNPM(t, dir, "install")
	if err := os.RemoveAll(filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	reg.RunNPM(t, dir, "ci")
	installed := packageFolders(t, dir)
	if len(installed) <= len(conflictsRoot) {
		t.Fatalf("npm installed only %v: the graph should nest", installed)
	}

	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, tree, err := lockfile.DefaultLimits().Tree("package-lock.json", lock, manifest)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(tree); !slices.Equal(got, installed) {
		t.Errorf("package-lock.json:\ninstalled %v\nTree      %v", installed, got)
	}

	_, tree, err = lockfile.DefaultLimits().Tree("yarn.lock", []byte(yarnLock(reg.URL())), manifest)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(tree); !slices.Equal(got, installed) {
		t.Errorf("yarn.lock of the same graph, hoisted:\ninstalled %v\nTree      %v", installed, got)
	}
}

// yarnLock writes the conflicts graph as yarn classic would.
func yarnLock(registry string) string {
	var b strings.Builder
	b.WriteString("# yarn lockfile v1\n\n")
	for _, p := range conflicts {
		base := p.name[strings.LastIndexByte(p.name, '/')+1:]
		fmt.Fprintf(&b, "\"%s@%s\":\n  version \"%s\"\n  resolved \"%s%s/-/%s-%s.tgz\"\n", p.name, p.version, p.version, registry, p.name, base, p.version)
		if len(p.deps) > 0 {
			b.WriteString("  dependencies:\n")
			for _, n := range slices.Sorted(maps.Keys(p.deps)) {
				fmt.Fprintf(&b, "    \"%s\" \"%s\"\n", n, p.deps[n])
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// packageFolders lists the folders under dir/node_modules that hold a
// package (a package.json directly below a node_modules or @scope
// folder), skipping npm's bookkeeping (.package-lock.json, .bin).
func packageFolders(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(dir, "node_modules"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".bin" {
			return fs.SkipDir
		}
		if d.Name() != "package.json" {
			return nil
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		i := strings.LastIndex(rel, "node_modules/")
		name := rel[i+len("node_modules/"):]
		if strings.Count(name, "/") == 0 || (strings.HasPrefix(name, "@") && strings.Count(name, "/") == 1) {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func paths(tree []lockfile.Install) []string {
	out := make([]string, len(tree))
	for i, in := range tree {
		out[i] = in.Path
	}
	return out
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
