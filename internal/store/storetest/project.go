package storetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/pkgscope/pkgscope/internal/store"
)

// testProject: a project reads back whole; an unknown id is ErrNotFound;
// putting the same id again, even concurrently, keeps the first record.
func testProject(t *testing.T, s store.Store) {
	ctx := context.Background()
	id := strings.Repeat("ab", 32)
	if _, err := s.Project(ctx, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Project of an unknown id: %v, want ErrNotFound", err)
	}
	p := store.Project{ID: id, Format: "package-lock@3", Packages: []store.ProjectPackage{
		{Path: "node_modules/@scope/x", Package: "@scope/x", Version: "1.0.0", Kind: "registry", Direct: true},
		{Path: "node_modules/a", Package: "a", Version: "1.0.0", Kind: "registry", Dev: true},
		{Path: "node_modules/a/node_modules/ms", Package: "ms", Version: "2.1.3", Kind: "registry"},
		{Path: "node_modules/git-dep", Package: "git-dep", Kind: "git", Reason: "git dependency", Direct: true},
		{Path: "node_modules/left", Package: "left-pad", Version: "1.3.0", Kind: "alias"},
	}}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := p
			if i > 0 {
				q.Format = "changed" // a later put must not replace the first
				q.Packages = p.Packages[:1]
			}
			errs[i] = s.PutProject(ctx, q)
		}()
		if i == 0 {
			wg.Wait() // the first put lands first
		}
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("PutProject #%d: %v", i, err)
		}
	}
	got, err := s.Project(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != id || got.Format != p.Format || got.CreatedAt.IsZero() {
		t.Fatalf("Project = %+v, want id, format %q and a creation time", got, p.Format)
	}
	if len(got.Packages) != len(p.Packages) {
		t.Fatalf("Project has %d packages, want %d: %+v", len(got.Packages), len(p.Packages), got.Packages)
	}
	for i := range p.Packages {
		if got.Packages[i] != p.Packages[i] {
			t.Errorf("package %d = %+v, want %+v", i, got.Packages[i], p.Packages[i])
		}
	}
}

// testVersionStates: one lookup answers the state of many versions, ready
// and failed (with the reason); versions never recorded are absent; an
// empty list is an empty map.
func testVersionStates(t *testing.T, s store.Store) {
	ctx := context.Background()
	if got, err := s.VersionStates(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("VersionStates(nil) = %v, %v; want an empty map", got, err)
	}
	commit(t, s, newFixture("vs-ready", "1.0.0", map[string][]byte{"a.js": []byte("x")}))
	if err := s.MarkFailed(ctx, "@vs/failed", "2.0.0", "tarball integrity mismatch"); err != nil {
		t.Fatal(err)
	}
	key := func(name, version string) store.VersionKey { return store.VersionKey{Name: name, Version: version} }
	keys := []store.VersionKey{key("vs-ready", "1.0.0"), key("@vs/failed", "2.0.0"), key("vs-ready", "9.9.9"), key("vs-none", "1.0.0"), key("vs-ready", "1.0.0")}
	got, err := s.VersionStates(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("VersionStates = %+v, want the 2 recorded versions", got)
	}
	if v := got[keys[0]]; v.State != store.StateReady || v.Name != "vs-ready" || v.Version != "1.0.0" {
		t.Errorf("ready version: %+v", v)
	}
	if v := got[keys[1]]; v.State != store.StateFailed || v.Reason != "tarball integrity mismatch" {
		t.Errorf("failed version: %+v", v)
	}
}
