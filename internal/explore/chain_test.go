package explore_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/jsdelivr"
	"github.com/pkgscope/pkgscope/internal/jsdelivr/fakejsdelivr"
	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/pathglob"
	"github.com/pkgscope/pkgscope/internal/resolve"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/unavailable"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// chain is a read chain built by explore.New from real parts: the
// embedded store, a fake registry, the fill chain and a fake jsDelivr as
// the fallback. It refuses any package under @priv/.
type chain struct {
	svc *explore.Service
	reg *fakeregistry.Registry
	fj  *fakejsdelivr.Server
}

func newChain(t *testing.T) *chain {
	t.Helper()
	reg, fj := fakeregistry.New(t), fakejsdelivr.New(t)
	up := registryClient(t, reg)
	st, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	jc, err := jsdelivr.New(jsdelivr.Config{DataURL: fj.DataURL(), CDNURL: fj.CDNURL(), Timeout: 5 * time.Second, MaxListingBytes: 1 << 20, MaxFileBytes: 1 << 20}, &http.Client{})
	if err != nil {
		t.Fatal(err)
	}
	svc := explore.New(explore.Options{
		Store: st, Resolver: resolve.New(up, st), Filler: fill.New(st, up, fill.Options{Timeout: time.Minute, Ingest: ingest.DefaultLimits()}), Packuments: up,
		Access: func(_ context.Context, name string) error {
			if strings.HasPrefix(name, "@priv/") {
				return &explore.ForbiddenError{Name: name, Why: "test"}
			}
			return nil
		},
		Fallback: jsdelivr.NewFallback(jc, jsdelivr.DefaultFallbackOptions()),
		Limits:   explore.Limits{DefaultReadLimit: 10, MaxReadLimit: 10, MaxLineWidth: 100, MaxReadBytes: 1000, DeprecationNoteBytes: 80, Glob: pathglob.DefaultLimits()},
	})
	return &chain{svc: svc, reg: reg, fj: fj}
}

// registryClient is the registry client of a mirror whose npm config
// names reg and nothing else.
func registryClient(t *testing.T, reg *fakeregistry.Registry) *upstream.Client {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "npmrc")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"npm_config_registry": reg.URL(), "NPM_CONFIG_USERCONFIG": empty, "NPM_CONFIG_GLOBALCONFIG": empty, "HOME": t.TempDir()}
	npm, err := npmrc.Load(t.TempDir(), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return upstream.New(npm, upstream.DefaultConfig(), &http.Client{})
}

// TestAccessIsTheFirstLink: a package the caller may not read is refused
// before anything is asked of the registry or the fallback, through every
// way into the chain, with and without the fallback link.
func TestAccessIsTheFirstLink(t *testing.T) {
	c := newChain(t)
	tgz := tarballtest.Package(t, map[string]string{"a.js": "secret\n"})
	c.reg.Publish("@priv/x", "1.0.0", tgz)
	c.fj.Publish("@priv/x", "1.0.0", tgz)
	c.reg.Fail("@priv/x", http.StatusServiceUnavailable, "") // the fallback would answer
	target := explore.Target{PackageName: "@priv/x", Version: "1.0.0"}
	for _, svc := range []*explore.Service{c.svc, c.svc.StoreOnly()} {
		ctx := t.Context()
		_, openErr := svc.Open(ctx, target)
		spec, err := target.Spec()
		if err != nil {
			t.Fatal(err)
		}
		_, resolveErr := svc.Versions().Resolve(ctx, "@priv/x", spec)
		_, packErr := svc.Versions().Packument(ctx, "@priv/x")
		_, storedErr := svc.Versions().Stored(ctx, "@priv/x", "1.0.0")
		// An Opened made by hand, as if a caller kept one from before its
		// token lost the package.
		kept := &explore.Opened{Name: "@priv/x", Version: "1.0.0", Files: []store.File{{Path: "a.js"}}}
		_, _, _, fileErr := svc.FileOf(ctx, kept, "a.js")
		_, listErr := svc.List(ctx, explore.Request{Action: "list", PackageName: "@priv/x", Version: "1.0.0"})
		_, readErr := svc.Read(ctx, explore.Request{Action: "read", PackageName: "@priv/x", Version: "1.0.0", Path: "a.js"})
		for what, err := range map[string]error{"Open": openErr, "Resolve": resolveErr, "Packument": packErr, "Stored": storedErr, "FileOf": fileErr, "List": listErr, "Read": readErr} {
			var fe *explore.ForbiddenError
			if !errors.As(err, &fe) || fe.Name != "@priv/x" {
				t.Errorf("%s: %v, want a *ForbiddenError naming @priv/x", what, err)
			}
		}
	}
	if n := c.reg.PackumentRequests("@priv/x"); n != 0 {
		t.Errorf("the registry was asked %d times for a refused package", n)
	}
	if n := c.fj.TotalRequests(); n != 0 {
		t.Errorf("jsDelivr was asked %d times for a refused package", n)
	}
}

// TestStoredHasNoFallback: with the registry failing, the full chain
// answers from the fallback and Stored, the same chain without that link,
// answers the registry's 503 without asking it.
func TestStoredHasNoFallback(t *testing.T) {
	c := newChain(t)
	tgz := tarballtest.Package(t, map[string]string{"a.js": "x\n"})
	c.reg.Publish("p", "1.0.0", tgz)
	c.fj.Publish("p", "1.0.0", tgz)
	c.reg.Fail("p", http.StatusServiceUnavailable, "")
	target := explore.Target{PackageName: "p", Version: "1.0.0"}
	o, err := c.svc.Open(t.Context(), target)
	if err != nil || o.Source != explore.SourceJSDelivr {
		t.Fatalf("full chain: %+v %v, want jsDelivr's answer", o, err)
	}
	before := c.fj.TotalRequests()
	_, err = c.svc.StoreOnly().Open(t.Context(), target)
	var unav *unavailable.Error
	if !errors.As(err, &unav) {
		t.Errorf("store-only chain: %v, want the registry's *unavailable.Error", err)
	}
	if n := c.fj.TotalRequests() - before; n != 0 {
		t.Errorf("the store-only chain asked jsDelivr %d times", n)
	}
}

// TestCheckedIsTheHeadLink: a name that cannot be an npm package name is
// a 400 naming packageName on every way into the chain, before the access
// check or the registry sees it.
func TestCheckedIsTheHeadLink(t *testing.T) {
	c := newChain(t)
	const bad = "../etc/passwd"
	spec, err := explore.Target{PackageName: "p", Version: "1.0.0"}.Spec()
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range []*explore.Service{c.svc, c.svc.StoreOnly()} {
		ctx := t.Context()
		v := svc.Versions()
		_, packErr := v.Packument(ctx, bad)
		_, resolveErr := v.Resolve(ctx, bad, spec)
		_, storedErr := v.Stored(ctx, bad, "1.0.0")
		_, openErr := v.Open(ctx, bad, spec)
		for what, err := range map[string]error{"Packument": packErr, "Resolve": resolveErr, "Stored": storedErr, "Open": openErr} {
			var in *explore.InputError
			if !errors.As(err, &in) || in.Field != "packageName" {
				t.Errorf("%s: %v, want an *InputError for packageName", what, err)
			}
		}
	}
	if n := c.reg.PackumentRequests(bad); n != 0 {
		t.Errorf("the registry was asked %d times for an invalid name", n)
	}
}
