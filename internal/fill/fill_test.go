package fill_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/search"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is the chain fill.New builds over the real registry client (against
// a fake registry), the embedded store and a real searcher.
type env struct {
	reg *fakeregistry.Registry
	st  *sqlite.Store
	up  *upstream.Client
	s   *search.Searcher
}

func newEnv(t *testing.T) *env {
	t.Helper()
	reg := fakeregistry.New(t)
	st, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := search.New(st, search.DefaultOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); st.Close() })
	return &env{reg: reg, st: st, up: upstream.New(reg.NPM(), upstream.Config{}, nil), s: s}
}

func (e *env) filler(opt fill.Options) fill.Filler {
	opt.Ingest = ingest.DefaultLimits()
	return fill.New(e.st, e.up, opt)
}

func (e *env) publish(t *testing.T, name, version string, opts ...fakeregistry.PublishOption) {
	t.Helper()
	e.reg.Publish(name, version, tarballtest.Package(t, map[string]string{
		"package.json": `{"name":"` + name + `","version":"` + version + `"}`,
		"index.js":     "module.exports = 42;\n",
	}), opts...)
}

// TestColdFillStoresAndIndexes: a miss downloads once, commits the files,
// builds the index (Options.Index), and the next call is a store hit.
func TestColdFillStoresAndIndexes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(t, "cold", "1.0.0")
	f := e.filler(fill.Options{Timeout: time.Minute, Index: e.s})
	for range 2 {
		if err := f.Fill(t.Context(), "cold", "1.0.0"); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.reg.TarballDownloads("cold", "1.0.0"); n != 1 {
		t.Errorf("%d downloads, want 1 (the second fill is a store hit)", n)
	}
	files, err := e.st.Files(t.Context(), "cold", "1.0.0")
	if err != nil || len(files) != 2 {
		t.Errorf("stored files %+v, %v; want index.js and package.json", files, err)
	}
	if _, err := e.st.Index(t.Context(), "cold", "1.0.0", index.FormatVersion); err != nil {
		t.Errorf("no index after the fill: %v", err)
	}
}

// TestConcurrentFillsDownloadOnce: callers asking for the same cold
// version at once share one download, and a caller giving up does not
// cancel it for the others (the fill runs detached).
func TestConcurrentFillsDownloadOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(t, "busy", "1.0.0")
	f := e.filler(fill.Options{Timeout: time.Minute})
	arrived := e.reg.Arrived("busy")
	release := e.reg.Hold("busy")
	defer release()

	quitter, quit := context.WithCancel(t.Context())
	first := make(chan error, 1)
	go func() { first <- f.Fill(quitter, "busy", "1.0.0") }()
	<-arrived // the fetch is in flight, held
	quit()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("the caller that gave up got %v, want context.Canceled", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() { errs <- f.Fill(t.Context(), "busy", "1.0.0") })
	}
	release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a waiting caller: %v", err)
		}
	}
	if n := e.reg.TarballDownloads("busy", "1.0.0"); n != 1 {
		t.Errorf("%d downloads, want 1", n)
	}
}

// TestBadBytesAreRemembered: a tarball that fails its integrity check is
// recorded as failed and answered from memory for FailedRetryAfter, not
// downloaded again.
func TestBadBytesAreRemembered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(t, "bad", "1.0.0", fakeregistry.WithIntegrity("sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="))
	f := e.filler(fill.Options{Timeout: time.Minute, FailedRetryAfter: time.Hour})
	for i := range 2 {
		err := f.Fill(t.Context(), "bad", "1.0.0")
		if !errors.Is(err, upstream.ErrIntegrity) || !fill.BadBytes(err) {
			t.Fatalf("fill %d: %v, want an integrity failure", i, err)
		}
	}
	if n := e.reg.TarballDownloads("bad", "1.0.0"); n != 1 {
		t.Errorf("%d downloads, want 1 (the failure is remembered)", n)
	}
	v, err := e.st.Version(t.Context(), "bad", "1.0.0")
	if err != nil || v.State != store.StateFailed {
		t.Errorf("store record %+v, %v; want failed", v, err)
	}
}

// TestUnknownVersionIsNotFound: a version the registry does not list is
// upstream.ErrNotFound, and nothing is recorded.
func TestUnknownVersionIsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(t, "pkg", "1.0.0")
	f := e.filler(fill.Options{Timeout: time.Minute})
	if err := f.Fill(t.Context(), "pkg", "9.9.9"); !errors.Is(err, upstream.ErrNotFound) {
		t.Errorf("Fill(pkg@9.9.9) = %v, want upstream.ErrNotFound", err)
	}
	if _, err := e.st.Version(t.Context(), "pkg", "9.9.9"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a missing version left a record: %v", err)
	}
}

// spoolRecorder is the searcher, recording what the fetch hands Spool.
type spoolRecorder struct {
	*search.Searcher
	mu     sync.Mutex
	spools []string
	bodies int
	done   int
}

func (r *spoolRecorder) Spool(w store.Writer, name, version string) (store.Writer, func()) {
	r.mu.Lock()
	r.spools = append(r.spools, name+"@"+version)
	r.mu.Unlock()
	inner, done := r.Searcher.Spool(w, name, version)
	return countingWriter{Writer: inner, r: r}, func() {
		r.mu.Lock()
		r.done++
		r.mu.Unlock()
		done()
	}
}

type countingWriter struct {
	store.Writer
	r *spoolRecorder
}

func (w countingWriter) PutBlobs(ctx context.Context, blobs []store.Blob) error {
	w.r.mu.Lock()
	w.r.bodies += len(blobs)
	w.r.mu.Unlock()
	return w.Writer.PutBlobs(ctx, blobs)
}

// TestColdFillSpoolsBodiesForTheIndex: when the indexer is a Spooler, the
// fetch writes every body through its Spool and ends it once, so the
// version's first index builds need not read the bodies back.
func TestColdFillSpoolsBodiesForTheIndex(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(t, "spooled", "1.0.0")
	r := &spoolRecorder{Searcher: e.s}
	f := e.filler(fill.Options{Timeout: time.Minute, Index: r})
	if err := f.Fill(t.Context(), "spooled", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.spools) != 1 || r.spools[0] != "spooled@1.0.0" || r.done != 1 || r.bodies != 2 {
		t.Errorf("spools %v, ended %d times, %d bodies through it; want spooled@1.0.0 once, ended once, 2 bodies",
			r.spools, r.done, r.bodies)
	}
	if _, err := e.s.Search(t.Context(), "spooled", "1.0.0", index.Query{Pattern: "exports"}); err != nil {
		t.Fatal(err)
	}
}

// TestFillRecordsDeprecation: a version the registry marks deprecated is
// stored with its message (so answers can say so without the registry),
// through the index spool too; one that is not, with none.
func TestFillRecordsDeprecation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(t, "old", "1.0.0", fakeregistry.Deprecated("use new@2 instead"))
	e.publish(t, "old", "1.0.1")
	f := e.filler(fill.Options{Timeout: time.Minute, Index: e.s})
	for v, want := range map[string]string{"1.0.0": "use new@2 instead", "1.0.1": ""} {
		if err := f.Fill(t.Context(), "old", v); err != nil {
			t.Fatal(err)
		}
		got, err := e.st.Version(t.Context(), "old", v)
		if err != nil || got.Deprecated != want {
			t.Errorf("old@%s stored with deprecation %q, %v; want %q", v, got.Deprecated, err, want)
		}
	}
}
