package explore_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/pathglob"
	"github.com/pkgscope/pkgscope/internal/resolve"
	"github.com/pkgscope/pkgscope/internal/search"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
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

// TestColdVersionAnsweredFromTheVerifiedSpool: with the store's writes
// held, the first grep, list and read of a cold version are answered
// once its download is verified, from the fill's spool (core.fill,
// search.Searcher.Verified), before anything of it is in the store; the
// answers are the committed version's.
func TestColdVersionAnsweredFromTheVerifiedSpool(t *testing.T) {
	reg := fakeregistry.New(t)
	files := map[string]string{"package.json": `{"name":"cold"}`, "lib/a.js": "export const needle = 1;\n", "lib/b.js": "const other = 2;\n"}
	reg.Publish("cold", "1.0.0", tarballtest.Package(t, files))
	up := registryClient(t, reg)
	lite, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	held := &heldWrites{Store: lite, release: make(chan struct{})}
	s, err := search.New(lite, search.DefaultOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
