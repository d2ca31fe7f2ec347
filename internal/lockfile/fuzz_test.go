package lockfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzParse fuzzes Parse under each of names ("upload" exercises
// sniffing), seeded with the fixtures of those formats. Parse must never
// panic, must fail only with its error kinds, and what it returns must
// hold the package's promises. Seeds: the fixtures and
// testdata/fuzz/<target>.
func fuzzParse(f *testing.F, names ...string) {
	for i, name := range names {
		for _, fx := range fixtures {
			if name != "upload" && fx.file != name {
				continue
			}
			data, err := os.ReadFile(filepath.Join("testdata", fx.dir, fx.file))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), data)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		name := names[int(which)%len(names)]
		lf, err := Parse(name, data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("Parse(%s): error of no kind: %v", name, err)
			}
			return
		}
		checkInvariants(t, lf)
		// Tree parses the same bytes the same way, and every folder it
		// lays out ends in its package's name.
		tlf, tree, err := DefaultLimits().Tree(name, data, nil)
		if err != nil {
			t.Fatalf("Parse accepted the file but Tree did not: %v", err)
		}
		if len(tlf.Deps) != len(lf.Deps) {
			t.Fatalf("Tree read %d deps, Parse %d", len(tlf.Deps), len(lf.Deps))
		}
		for i, in := range tree {
			if !strings.HasSuffix(in.Path, "node_modules/"+in.Name) {
				t.Fatalf("folder %q does not end in node_modules/%s", in.Path, in.Name)
			}
			if i > 0 && tree[i-1].Path >= in.Path {
				t.Fatalf("folders not sorted and unique at %q", in.Path)
			}
		}
	})
}

func checkInvariants(t *testing.T, lf *Lockfile) {
	t.Helper()
	if lf.Format == "" {
		t.Fatal("empty Format")
	}
	for i, d := range lf.Deps {
		if i > 0 && compareDeps(lf.Deps[i-1], d) >= 0 {
			t.Fatalf("deps not sorted and unique at %d: %+v, %+v", i, lf.Deps[i-1], d)
		}
		if d.Name == "" || d.Kind < Registry || d.Kind > Other || d.Reason != d.Kind.reason() {
			t.Fatalf("bad dep %+v", d)
		}
		switch d.Kind {
		case Registry, Alias:
			if lf.Format != "package.json" && !isVersion(d.Version) {
				t.Fatalf("%s dep without an exact version: %+v", d.Kind, d)
			}
			if d.Version == "" || (d.Kind == Alias) != (d.Target != "") {
				t.Fatalf("bad %s dep %+v", d.Kind, d)
			}
		}
		if v, ok := lf.Locked(d.Name); ok && v == "" {
			t.Fatalf("Locked(%q) = \"\", true", d.Name)
		}
		if name, v, ok := d.Warm(); ok != d.Kind.Warmable() || (ok && (name == "" || v == "")) {
			t.Fatalf("Warm() = %q, %q, %v for %+v", name, v, ok, d)
		}
	}
}

func FuzzPackageLock(f *testing.F) {
	fuzzParse(f, "package-lock.json", "npm-shrinkwrap.json")
}

func FuzzPnpmLock(f *testing.F) { fuzzParse(f, "pnpm-lock.yaml") }

func FuzzYarnLock(f *testing.F) { fuzzParse(f, "yarn.lock") }

func FuzzBunLock(f *testing.F) { fuzzParse(f, "bun.lock") }

func FuzzPackageJSON(f *testing.F) { fuzzParse(f, "package.json") }

// FuzzSniff feeds every fixture to Parse under a name that says nothing.
func FuzzSniff(f *testing.F) { fuzzParse(f, "upload") }
