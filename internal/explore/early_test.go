package explore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/pathglob"
	"github.com/pkgscope/pkgscope/internal/resolve"
	"github.com/pkgscope/pkgscope/internal/search"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// heldWrites is the embedded store with its body writes held until
// release is closed.
type heldWrites struct {
	*sqlite.Store
	release chan struct{}
}

func (h *heldWrites) PutBlobs(ctx context.Context, blobs []store.Blob) error {
	select {
	case <-h.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return h.Store.PutBlobs(ctx, blobs)
}

// coldEnv publishes cold@1.0.0 of files and returns a client of its
// registry, an embedded store and a searcher over it.
func coldEnv(t *testing.T, files map[string]string) (*upstream.Client, *sqlite.Store, *search.Searcher) {
	t.Helper()
	reg := fakeregistry.New(t)
	reg.Publish("cold", "1.0.0", tarballtest.Package(t, files))
	lite, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	s, err := search.New(lite, search.DefaultOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return registryClient(t, reg), lite, s
}

// TestColdVersionAnsweredFromTheVerifiedSpool: with the store's writes
// held, the first grep, list and read of a cold version are answered
// once its download is verified, from the fill's spool (core.fill,
// search.Searcher.Verified), before anything of it is in the store; the
// answers are the committed version's.
func TestColdVersionAnsweredFromTheVerifiedSpool(t *testing.T) {
	up, lite, s := coldEnv(t, map[string]string{"package.json": `{"name":"cold"}`, "lib/a.js": "export const needle = 1;\n", "lib/b.js": "const other = 2;\n"})
	held := &heldWrites{Store: lite, release: make(chan struct{})}
	f := fill.New(held, up, fill.Options{Timeout: time.Minute, Ingest: ingest.DefaultLimits(), Index: s.Later(time.Minute)})
	svc := explore.New(explore.Options{Store: lite, Resolver: resolve.New(up, lite), Filler: f, Searcher: s, Packuments: up,
		Limits: explore.Limits{DefaultReadLimit: 10, MaxReadLimit: 10, MaxLineWidth: 100, MaxReadBytes: 1000, DeprecationNoteBytes: 80, Glob: pathglob.DefaultLimits()}})

	answer := func(what string, v any, err error) string {
		t.Helper()
		if err != nil {
			t.Fatalf("%s while the store is held: %v", what, err)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	g, err := svc.Grep(t.Context(), explore.Request{Action: "grep", PackageName: "cold", Version: "1.0.0", Pattern: "needle"})
	if got := answer("grep", g, err); !strings.Contains(got, "lib/a.js") || strings.Contains(got, "lib/b.js") {
		t.Errorf("grep = %s, want lib/a.js's line", got)
	}
	l, err := svc.List(t.Context(), explore.Request{Action: "list", PackageName: "cold", Version: "1.0.0"})
	if got := answer("list", l, err); !strings.Contains(got, "a.js") || !strings.Contains(got, "b.js") {
		t.Errorf("list = %s, want both files", got)
	}
	r, err := svc.Read(t.Context(), explore.Request{Action: "read", PackageName: "cold", Version: "1.0.0", Path: "lib/b.js"})
	if got := answer("read", r, err); !strings.Contains(got, "const other = 2;") {
		t.Errorf("read = %s, want lib/b.js's line", got)
	}
	if _, err := lite.Files(t.Context(), "cold", "1.0.0"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the version is visible in the store while its writes are held: %v", err)
	}
	close(held.release)
	if err := f.Fill(t.Context(), "cold", "1.0.0"); err != nil { // joins the fill in flight
		t.Fatal(err)
	}
	if got, err := lite.Files(t.Context(), "cold", "1.0.0"); err != nil || len(got) != 3 {
		t.Errorf("after the release: %d files, %v; want 3", len(got), err)
	}
}

// failOnce is the embedded store with its body writes held until release
// is closed, the first of them then failing with fail.
type failOnce struct {
	*sqlite.Store
	release chan struct{}
	fail    error
	failed  atomic.Bool
}

func (h *failOnce) PutBlobs(ctx context.Context, blobs []store.Blob) error {
	select {
	case <-h.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	if h.failed.CompareAndSwap(false, true) {
		return h.fail
	}
	return h.Store.PutBlobs(ctx, blobs)
}

// failBeforeSearch is the searcher with a store failure between Open's
// early answer and the grep: its first Search releases the held writes
// and waits for the fill Open started to end before searching.
type failBeforeSearch struct {
	*search.Searcher
	held  *failOnce
	first chan error // the first fill's end
	once  sync.Once
	err   error
}

func (f *failBeforeSearch) Search(ctx context.Context, name, version string, q index.Query) (index.Result, error) {
	f.once.Do(func() {
		close(f.held.release)
		f.err = <-f.first
	})
	return f.Searcher.Search(ctx, name, version, q)
}

// TestGrepAfterAnEarlyOpenWaitsForTheFillWhenTheStoreFails: a grep whose
// version was opened from the verified spool, when the store fails
// before the grep reaches the searcher (the offer is withdrawn, nothing
// is committed), is not answered "the version vanished" (store.ErrNotFound,
// a 500) but goes back to the fill as a read does (core.committed): here
// the next fill succeeds and the grep answers.
func TestGrepAfterAnEarlyOpenWaitsForTheFillWhenTheStoreFails(t *testing.T) {
	up, lite, s := coldEnv(t, map[string]string{"package.json": `{"name":"cold"}`, "lib/a.js": "export const needle = 1;\n"})
	broken := fmt.Errorf("disk full: %w", store.ErrUnavailable)
	held := &failOnce{Store: lite, release: make(chan struct{}), fail: broken}
	f := fill.New(held, up, fill.Options{Timeout: time.Minute, Ingest: ingest.DefaultLimits(), Index: s.Later(time.Minute)})
	fs := &failBeforeSearch{Searcher: s, held: held, first: make(chan error, 1)}
	var calls atomic.Int32
	told := fill.FillerFunc(func(ctx context.Context, name, version string) error {
		err := f.Fill(ctx, name, version)
		if calls.Add(1) == 1 {
			fs.first <- err
		}
		return err
	})
	svc := explore.New(explore.Options{Store: lite, Resolver: resolve.New(up, lite), Filler: told, Searcher: fs, Packuments: up,
		Limits: explore.Limits{DefaultReadLimit: 10, MaxReadLimit: 10, MaxLineWidth: 100, MaxReadBytes: 1000, DeprecationNoteBytes: 80, Glob: pathglob.DefaultLimits()}})

	g, err := svc.Grep(t.Context(), explore.Request{Action: "grep", PackageName: "cold", Version: "1.0.0", Pattern: "needle"})
	if !errors.Is(fs.err, broken) {
		t.Fatalf("the first fill: %v, want the store's failure", fs.err)
	}
	if err != nil {
		t.Fatalf("grep after the store failed and the version was filled again: %v", err)
	}
	if b, _ := json.Marshal(g); !strings.Contains(string(b), "lib/a.js") {
		t.Errorf("grep = %s, want lib/a.js's line", b)
	}
	if got, err := lite.Files(t.Context(), "cold", "1.0.0"); err != nil || len(got) != 2 {
		t.Errorf("after the grep: %d files, %v; want the version committed by the second fill", len(got), err)
	}
}
