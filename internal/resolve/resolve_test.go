package resolve_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/resolve"
	"github.com/pkgscope/pkgscope/internal/semver"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is a resolver over the real registry client, against a fake
// registry, and the embedded store.
type env struct {
	reg *fakeregistry.Registry
	st  *sqlite.Store
	r   *resolve.Resolver
}

func newEnv(t *testing.T) *env {
	t.Helper()
	reg := fakeregistry.New(t)
	st, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// Refetch at once: a version published after the packument was cached
	// is found on the next exact request.
	up := upstream.New(reg.NPM(), upstream.Config{MinRefetchInterval: time.Nanosecond}, nil)
	return &env{reg: reg, st: st, r: resolve.New(up, st)}
}

func (e *env) publish(t *testing.T, name, version string, opts ...fakeregistry.PublishOption) {
	t.Helper()
	e.reg.Publish(name, version, tarballtest.Package(t, map[string]string{"package.json": `{"name":"` + name + `","version":"` + version + `"}`}), opts...)
}

func (e *env) resolve(t *testing.T, name, raw string) (string, error) {
	t.Helper()
	spec, err := npmspec.ParseSpec(raw)
	if err != nil {
		t.Fatalf("ParseSpec(%q): %v", raw, err)
	}
	return e.r.Resolve(t.Context(), name, spec)
}

func TestRangesAndTags(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, v := range []string{"1.0.0", "1.2.0", "2.0.0-beta.1", "2.0.0"} {
		e.publish(t, "pkg", v)
	}
	e.publish(t, "pkg", "1.3.0", fakeregistry.Deprecated("use 2"))
	e.publish(t, "pkg", "3.0.0-rc.1", fakeregistry.WithTag("next"))
	for spec, want := range map[string]string{
		"":          "2.0.0", // latest
		"latest":    "2.0.0",
		"next":      "3.0.0-rc.1",
		"^1":        "1.2.0", // 1.3.0 is deprecated: npm passes it over while another fits
		"1.3.0":     "1.3.0", // but an exact request gets it
		">=2.0.0-0": "2.0.0",
		"~1.0":      "1.0.0",
	} {
		if got, err := e.resolve(t, "pkg", spec); err != nil || got != want {
			t.Errorf("Resolve(pkg@%q) = %q, %v; want %q", spec, got, err, want)
		}
	}
	if _, err := e.resolve(t, "pkg", "^9"); !errors.Is(err, semver.ErrNoMatch) {
		t.Errorf("a range nothing fits: %v, want ErrNoMatch", err)
	}
	if _, err := e.resolve(t, "nope", "^1"); !errors.Is(err, upstream.ErrNotFound) {
		t.Errorf("an unknown package: %v, want upstream.ErrNotFound", err)
	}
}

// TestStoredExactVersionSkipsTheRegistry: an exact version already in the
// store resolves without a packument request, so it is served while the
// registry is down.
func TestStoredExactVersionSkipsTheRegistry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := []byte(`{"name":"held"}`)
	h := store.HashOf(body)
	if err := e.st.PutBlobs(t.Context(), []store.Blob{{Hash: h, Data: body}}); err != nil {
		t.Fatal(err)
	}
	if err := e.st.CommitVersion(t.Context(), store.NewVersion{Name: "held", Version: "1.0.0", Integrity: "sha512-x",
		Files: []store.File{{Path: "package.json", Size: int64(len(body)), Hash: h, Mode: store.ModeRegular | 0o644}}}); err != nil {
		t.Fatal(err)
	}
	if got, err := e.resolve(t, "held", "1.0.0"); err != nil || got != "1.0.0" {
		t.Errorf("Resolve(held@1.0.0) = %q, %v", got, err)
	}
	if n := e.reg.PackumentRequests("held"); n != 0 {
		t.Errorf("%d packument requests for a stored exact version, want 0", n)
	}
	// A range still asks the registry, which does not have it.
	if _, err := e.resolve(t, "held", "^1"); !errors.Is(err, upstream.ErrNotFound) {
		t.Errorf("a range of a package only the store has: %v, want upstream.ErrNotFound", err)
	}
}

// TestJustPublishedExactVersion: a version published after the packument
// was cached resolves by exact version (the client fetches the packument
// again because it lacks that version).
func TestJustPublishedExactVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(t, "fresh", "1.0.0")
	if got, err := e.resolve(t, "fresh", "^1"); err != nil || got != "1.0.0" {
		t.Fatalf("Resolve(fresh@^1) = %q, %v", got, err)
	}
	e.publish(t, "fresh", "1.0.1")
	if got, err := e.resolve(t, "fresh", "1.0.1"); err != nil || got != "1.0.1" {
		t.Errorf("Resolve(fresh@1.0.1) after publishing it = %q, %v", got, err)
	}
}

// TestStoreFailureIsNotAMiss: a store that cannot answer is an error, not
// a reason to ask the registry and answer as if the version were absent.
func TestStoreFailureIsNotAMiss(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(t, "pkg", "1.0.0")
	e.st.Close()
	_, err := e.resolve(t, "pkg", "1.0.0")
	if err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Resolve with the store closed = %v, want the store's error", err)
	}
	if n := e.reg.PackumentRequests("pkg"); n != 0 {
		t.Errorf("%d packument requests after a store failure, want 0", n)
	}
}

// TestColdExactVersionReadsItsManifest: an exact version the store does
// not hold resolves from its manifest, without the packument (21 MB for
// next); a registry that does not serve the version endpoint is read from
// the packument; a range reads the packument as before; a missing version
// is still "not published".
func TestColdExactVersionReadsItsManifest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(t, "@s/p", "1.0.0")
	e.publish(t, "@s/p", "1.1.0")
	if v, err := e.resolve(t, "@s/p", "1.0.0"); err != nil || v != "1.0.0" {
		t.Fatalf("Resolve(1.0.0) = %q, %v", v, err)
	}
	if m, p := e.reg.VersionRequests("@s/p", "1.0.0"), e.reg.PackumentRequests("@s/p"); m != 1 || p != 0 {
		t.Errorf("%d manifest and %d packument requests, want 1 and 0", m, p)
	}
	e.reg.RefuseVersions(405)
	if v, err := e.resolve(t, "@s/p", "1.1.0"); err != nil || v != "1.1.0" {
		t.Fatalf("Resolve(1.1.0) without the version endpoint = %q, %v", v, err)
	}
	if p := e.reg.PackumentRequests("@s/p"); p != 1 {
		t.Errorf("%d packument requests without the version endpoint, want 1", p)
	}
	e.reg.RefuseVersions(0)
	if v, err := e.resolve(t, "@s/p", "^1.0.0"); err != nil || v != "1.1.0" {
		t.Errorf("Resolve(^1.0.0) = %q, %v; want 1.1.0", v, err)
	}
	if _, err := e.resolve(t, "@s/p", "2.0.0"); !errors.Is(err, semver.ErrNoMatch) {
		t.Errorf("Resolve(2.0.0) = %v, want semver.ErrNoMatch", err)
	}
}

// TestDeprecationMatchesNPM: the real npm CLI (npm-pick-manifest) is the
// oracle for which version a spec gets when some versions are deprecated:
// a range or no version at all passes over deprecated versions while one
// that is not satisfies the spec (npm install name reads the range "*"),
// and takes the highest deprecated one when all are; a dist-tag or an
// exact version is taken even when deprecated.
func TestDeprecationMatchesNPM(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(t, "dep-latest", "1.0.0")
	e.publish(t, "dep-latest", "1.1.0", fakeregistry.Deprecated("use 1.0.0"))
	e.publish(t, "dep-all", "1.0.0", fakeregistry.Deprecated("gone"))
	e.publish(t, "dep-all", "1.1.0", fakeregistry.Deprecated("gone"))
	e.publish(t, "dep-mid", "1.0.0")
	e.publish(t, "dep-mid", "1.1.0", fakeregistry.Deprecated("broken"))
	e.publish(t, "dep-mid", "1.2.0")
	e.publish(t, "dep-mid", "2.0.0", fakeregistry.Deprecated("broken"))
	e.reg.SetDistTag("dep-mid", "latest", "1.2.0")
	cases := []struct{ name, spec string }{
		{"dep-latest", ""}, {"dep-latest", "latest"}, {"dep-latest", "^1"}, {"dep-latest", "*"}, {"dep-latest", "1.1.0"},
		{"dep-all", ""}, {"dep-all", "^1"},
		{"dep-mid", ""}, {"dep-mid", ">=1.1.0"}, {"dep-mid", "~1.1.0"}, {"dep-mid", "^2"}, {"dep-mid", "2 || 1.1"},
	}
	// Two npm runs: the bare names, then every spec under an alias
	// (a0@npm:name@spec), which npm picks for exactly as for name@spec.
	var bare, aliased []string
	key := make([]string, len(cases))
	for i, c := range cases {
		if c.spec == "" {
			bare, key[i] = append(bare, c.name), c.name
		} else {
			key[i] = fmt.Sprintf("a%d", i)
			aliased = append(aliased, fmt.Sprintf("%s@npm:%s@%s", key[i], c.name, c.spec))
		}
	}
	installed := map[string]string{}
	for _, args := range [][]string{bare, aliased} {
		dir := t.TempDir()
		e.reg.RunNPM(t, dir, append([]string{"install", "--package-lock-only"}, args...)...)
		var lock struct {
			Packages map[string]struct{ Version string } `json:"packages"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
		if err == nil {
			err = json.Unmarshal(b, &lock)
		}
		if err != nil {
			t.Fatal(err)
		}
		for path, p := range lock.Packages {
			installed[strings.TrimPrefix(path, "node_modules/")] = p.Version
		}
	}
	for i, c := range cases {
		want := installed[key[i]]
		if want == "" {
			t.Fatalf("npm installed no %s (%s@%s)", key[i], c.name, c.spec)
		}
		if got, err := e.resolve(t, c.name, c.spec); err != nil || got != want {
			t.Errorf("Resolve(%s@%q) = %q, %v; npm installs %q", c.name, c.spec, got, err, want)
		}
	}
}
