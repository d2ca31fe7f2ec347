package warm

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/lockfile"
	"github.com/pkgscope/pkgscope/internal/nodesemver"
)

// fixture is one lockfile of internal/lockfile/testdata (written there by
// npm, pnpm, yarn and bun themselves), parsed.
type fixture struct {
	name string
	lf   *lockfile.Lockfile
}

// fixtures parses every lockfile fixture, and returns the registry
// versions they lock, all together, as "name@version" (aliases as the
// package they alias).
func fixtures(t *testing.T) ([]fixture, []string) {
	t.Helper()
	dirs, err := filepath.Glob("../lockfile/testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	var out []fixture
	all := map[string]bool{}
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || filepath.Base(dir) == "fuzz" {
			continue // testdata/fuzz holds go test's fuzz corpus, not a project
		}
		path, err := lockfile.Find(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		lf, err := lockfile.ParseFile(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, fixture{filepath.Base(dir), lf})
		for _, d := range lf.Deps {
			if name, version, ok := d.Warm(); ok && lf.Format != "package.json" {
				all[name+"@"+version] = true
			}
		}
	}
	if len(out) < 8 {
		t.Fatalf("found %d lockfile fixtures, want at least 8 (npm v1-3, shrinkwrap, pnpm, yarn, berry, bun)", len(out))
	}
	return out, slices.Sorted(maps.Keys(all))
}

// decoy is a version published for every package and locked by none: the
// one "latest" would pick. Warming a lockfile must never fetch it.
const decoy = "99.0.0"

// TestLockfiles warms each lockfile fixture and checks that exactly its
// registry versions (aliases as what they alias) end up stored, each
// downloaded once, and that git, file, link, workspace and remote tarball
// dependencies are reported skipped with their reason.
func TestLockfiles(t *testing.T) {
	fxs, locked := fixtures(t)
	all := map[string][]string{} // name → every version any fixture locks
	for _, nv := range locked {
		w := ParseSpecArg(nv)
		all[w.Name] = append(all[w.Name], w.Spec)
	}
	for _, fx := range fxs {
		want := map[string]bool{}
		published := map[string][]string{} // what this fixture names, no more
		var skipped []string
		for _, d := range fx.lf.Deps {
			name, version, ok := d.Warm()
			switch {
			case !ok:
				skipped = append(skipped, d.Name)
			case fx.lf.Format == "package.json":
				// A declared range warms the highest published match,
				// among the versions the lockfiles lock.
				published[name] = all[name]
				best, found := nodesemver.MaxSatisfying(all[name], version, nodesemver.Loose)
				if !found {
					t.Fatalf("%s: no locked version of %s satisfies %q", fx.name, name, version)
				}
				want[name+"@"+best] = true
			default:
				if !want[name+"@"+version] {
					published[name] = append(published[name], version)
				}
				want[name+"@"+version] = true
			}
		}
		for _, kind := range backends {
			t.Run(fx.name+"/"+string(kind), func(t *testing.T) {
				t.Parallel()
				reg := fakeregistry.New(t)
				for name, versions := range published {
					for _, v := range append(slices.Clone(versions), decoy) {
						publish(t, reg, name, v)
					}
				}
				w := newWorker(t, reg, newLocation(t, kind).open(t), testConfig(), nil)
				w.start()
				p := w.warm(Wants(fx.lf)...)

				got := map[string]bool{}
				var gotSkipped []string
				for _, it := range p.Items {
					switch it.State {
					case Done:
						got[it.Name+"@"+it.Version] = true
					case Skipped:
						gotSkipped = append(gotSkipped, it.Name)
						if it.Reason == "" {
							t.Errorf("%s skipped without a reason", it.Name)
						}
					default:
						t.Errorf("%s@%s: %s %s", it.Name, it.Spec, it.State, it.Reason)
					}
				}
				if !maps.Equal(got, want) {
					t.Errorf("warmed %v\nwant %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
				}
				slices.Sort(skipped)
				slices.Sort(gotSkipped)
				if !slices.Equal(gotSkipped, skipped) {
					t.Errorf("skipped %q, want %q", gotSkipped, skipped)
				}
				for name, versions := range published {
					for _, v := range append(slices.Clone(versions), decoy) {
						wantN := 0
						if want[name+"@"+v] {
							wantN = 1
						}
						if n := reg.TarballDownloads(name, v); n != wantN {
							t.Errorf("%s@%s downloaded %d times, want %d", name, v, n, wantN)
						}
					}
				}
			})
		}
	}
}

// TestLockfileWarmsOnlyWhatIsMissing warms a lockfile twice: the second
// time every version is present and nothing is fetched.
func TestLockfileWarmsOnlyWhatIsMissing(t *testing.T) {
	t.Parallel()
	lf, err := lockfile.ParseFile("../lockfile/testdata/package-lock-v3/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	_, locked := fixtures(t)
	reg := fakeregistry.New(t)
	for _, nv := range locked {
		w := ParseSpecArg(nv)
		publish(t, reg, w.Name, w.Spec)
	}
	w := newWorker(t, reg, newLocation(t, sqliteBackend).open(t), testConfig(), nil)
	w.start()
	first := w.warm(Wants(lf)...)
	second := w.warm(Wants(lf)...)
	if first.Done == 0 || second.Present != first.Done || second.Done != 0 || second.Skipped != first.Skipped {
		t.Errorf("first %d done, %d skipped; second %d present, %d done, %d skipped",
			first.Done, first.Skipped, second.Present, second.Done, second.Skipped)
	}
	if second.Bytes != first.Bytes {
		t.Errorf("second warm counts %d bytes, first %d", second.Bytes, first.Bytes)
	}
	for _, nv := range locked {
		w := ParseSpecArg(nv)
		if n := reg.PackumentRequests(w.Name); n > 1 {
			t.Errorf("%s's packument requested %d times, want at most once", w.Name, n)
		}
	}
}
