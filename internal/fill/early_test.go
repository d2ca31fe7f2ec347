package fill_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/search"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// A cold version is answered from the verified spool before the store has
// written it (internal/search early.go, behind.go). These tests hold the
// store's writes (heldStore, a real store underneath) and check what is
// answered meanwhile, and what is left when the store then fails.

// heldStore is a store whose PutBlobs waits until release is closed, then
// fails with fail when it is set.
type heldStore struct {
	store.Store
	release chan struct{}
	fail    error
}

func (h *heldStore) PutBlobs(ctx context.Context, blobs []store.Blob) error {
	select {
	case <-h.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	if h.fail != nil {
		return h.fail
	}
	return h.Store.PutBlobs(ctx, blobs)
}

// newHeld is a heldStore over a fresh store of kind, failing with fail
// once released (nil: writing).
func newHeld(t *testing.T, kind string, fail error) *heldStore {
	return &heldStore{Store: openStore(t, kind), release: make(chan struct{}), fail: fail}
}

// emptyCache checks that nothing, no spool nor index, is left in the index
// cache dir.
func emptyCache(t *testing.T, dir string) {
	t.Helper()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left in the index cache: %v", ents)
	}
}

// earlyEnv is streamEnv with the mirror's searcher as the fill's index
// (the background indexer, which spools the fill's bodies), over held.
func earlyEnv(t *testing.T, held *heldStore, data []byte, opts ...fakeregistry.PublishOption) (fill.Filler, *search.Searcher, string) {
	t.Helper()
	s, dir := heldSearcher(t, held)
	h := fakeregistry.NewTarballHost(t, data, fakeregistry.Whole)
	reg := fakeregistry.New(t)
	reg.Publish("big", "1.0.0", data, append(opts, fakeregistry.WithTarballURL(h.URL()))...)
	up := upstream.New(reg.NPM(), upstream.Config{AllowedTarballHosts: []string{h.Host()}}, nil)
	f := fill.New(held, up, fill.Options{Timeout: time.Minute, Ingest: smallBatches(), Index: s.Later(time.Minute)})
	return f, s, dir
}

// heldSearcher is the mirror's searcher over held, with its index cache
// in a fresh dir (returned), closed when the test ends.
func heldSearcher(t *testing.T, held *heldStore) (*search.Searcher, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := search.New(held.Store, search.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// fillAsync starts f's fill of big@1.0.0; the channel closes when it ends,
// after which *err holds its error.
func fillAsync(t *testing.T, f fill.Filler, err *error) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		*err = f.Fill(context.WithoutCancel(t.Context()), "big", "1.0.0")
	}()
	return done
}

// unstored checks that none of bodies is in st.
func unstored(t *testing.T, st store.Store, bodies [][]byte, why string) {
	t.Helper()
	for i, b := range bodies {
		if _, err := st.Blob(t.Context(), store.HashOf(b)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("body %d reached the store %s: %v", i, why, err)
		}
	}
}

// offeredFill is fillAsync, returning once the version is offered.
func offeredFill(t *testing.T, f fill.Filler, s *search.Searcher, held *heldStore, err *error) chan struct{} {
	t.Helper()
	done := fillAsync(t, f, err)
	if _, ok := s.Verified(t.Context(), "big", "1.0.0", done); !ok {
		close(held.release)
		<-done
		t.Fatalf("the version was not offered (fill: %v)", *err)
	}
	return done
}

// needle is a grep for the first 24 characters of body.
func needle(body []byte) index.Query {
	return index.Query{Pattern: string(body[:24]), FixedStrings: true, MaxMatches: 10}
}

// TestGrepAnsweredFromTheVerifiedSpoolWhileTheStoreIsHeld: once the
// download is verified, a grep of the cold version is answered from the
// spool while no body has been written to the store; the version becomes
// visible in the store only once the writes are released, whole.
func TestGrepAnsweredFromTheVerifiedSpoolWhileTheStoreIsHeld(t *testing.T) {
	t.Parallel()
	data, bodies := bigPackage(t)
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			held := newHeld(t, kind, nil)
			f, s, _ := earlyEnv(t, held, data)
			var ferr error
			done := fillAsync(t, f, &ferr)
			files, ok := s.Verified(t.Context(), "big", "1.0.0", done)
			if !ok || len(files) != 17 {
				close(held.release)
				<-done
				t.Fatalf("Verified = %d files, %v (fill: %v); want the 17 files before the store's writes", len(files), ok, ferr)
			}
			res, err := s.Search(t.Context(), "big", "1.0.0", needle(bodies[3]))
			if err != nil || len(res.Matches) != 1 || res.Matches[0].File != "lib/3.js" {
				t.Errorf("grep before the store's writes: %+v, %v; want lib/3.js", res.Matches, err)
			}
			body, ok := s.VerifiedBody("big", "1.0.0", store.HashOf(bodies[5]))
			if !ok || string(body) != string(bodies[5]) {
				t.Errorf("VerifiedBody: %d bytes, %v; want lib/5.js's body", len(body), ok)
			}
			invisible(t, held.Store)
			if _, err := held.Store.Blob(t.Context(), store.HashOf(bodies[3])); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a body is stored while the writes are held: %v", err)
			}
			close(held.release)
			<-done
			if ferr != nil {
				t.Fatalf("fill: %v", ferr)
			}
			if got, err := held.Store.Files(t.Context(), "big", "1.0.0"); err != nil || len(got) != 17 {
				t.Errorf("after the release: %d files, %v; want 17", len(got), err)
			}
			if _, ok := s.VerifiedBody("big", "1.0.0", store.HashOf(bodies[5])); ok {
				t.Errorf("the spool still serves bodies of a committed version")
			}
			if res, err := s.Search(t.Context(), "big", "1.0.0", needle(bodies[3])); err != nil || len(res.Matches) != 1 {
				t.Errorf("grep after the commit: %+v, %v", res.Matches, err)
			}
		})
	}
}

// TestStoreFailureAfterAnEarlyAnswerCommitsNothing: when the store fails
// after a grep was answered from the verified spool, nothing of the
// version is committed, the fill returns the store's error, and a later
// grep gets an error, not the early answer's index.
func TestStoreFailureAfterAnEarlyAnswerCommitsNothing(t *testing.T) {
	t.Parallel()
	data, bodies := bigPackage(t)
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			broken := errors.New("disk full")
			held := newHeld(t, kind, broken)
			f, s, dir := earlyEnv(t, held, data)
			var ferr error
			done := offeredFill(t, f, s, held, &ferr)
			if res, err := s.Search(t.Context(), "big", "1.0.0", needle(bodies[3])); err != nil || len(res.Matches) != 1 {
				t.Fatalf("early grep: %+v, %v", res.Matches, err)
			}
			close(held.release)
			<-done
			if !errors.Is(ferr, broken) {
				t.Fatalf("fill: %v, want the store's failure", ferr)
			}
			invisible(t, held.Store)
			if res, err := s.Search(t.Context(), "big", "1.0.0", needle(bodies[3])); err == nil {
				t.Errorf("a grep after the store failed answered %+v; want an error", res.Matches)
			}
			if _, ok := s.VerifiedBody("big", "1.0.0", store.HashOf(bodies[5])); ok {
				t.Errorf("the spool serves a version whose store failed")
			}
			emptyCache(t, dir)
		})
	}
}

// TestTamperedTarballIsNeverOfferedNorStored: a tarball failing its
// integrity check is never offered to a grep, and since the store's
// writes wait for the check, none of its bodies reaches the store.
func TestTamperedTarballIsNeverOfferedNorStored(t *testing.T) {
	t.Parallel()
	data, bodies := bigPackage(t)
	wrong := fakeregistry.WithIntegrity("sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==")
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			held := newHeld(t, kind, nil)
			close(held.release) // writes pass: only the check stops them
			f, s, dir := earlyEnv(t, held, data, wrong)
			var ferr error
			done := fillAsync(t, f, &ferr)
			if files, ok := s.Verified(t.Context(), "big", "1.0.0", done); ok {
				t.Errorf("a tarball failing its integrity was offered with %d files", len(files))
			}
			<-done
			if !errors.Is(ferr, upstream.ErrIntegrity) {
				t.Fatalf("fill: %v, want ErrIntegrity", ferr)
			}
			if _, err := s.Search(t.Context(), "big", "1.0.0", needle(bodies[3])); err == nil {
				t.Errorf("a grep of the tampered version answered")
			}
			invisible(t, held.Store)
			unstored(t, held.Store, bodies, "of the tampered tarball")
			emptyCache(t, dir)
		})
	}
}

// TestCancelledIngestLeavesNoSpool: an ingest whose context ends after
// its version was offered, while the store's writes are held, ends with
// that error, commits nothing, withdraws the offer and leaves no spool.
func TestCancelledIngestLeavesNoSpool(t *testing.T) {
	t.Parallel()
	data, bodies := bigPackage(t)
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			held := newHeld(t, kind, nil)
			defer close(held.release)
			s, dir := heldSearcher(t, held)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			w, release := s.Spool(held, "big", "1.0.0")
			done := make(chan struct{})
			var err error
			go func() {
				defer close(done)
				defer release()
				_, err = ingest.Ingest(ctx, w, "big", "1.0.0", "sha512-checked", data, smallBatches())
			}()
			if _, ok := s.Verified(t.Context(), "big", "1.0.0", done); !ok {
				t.Fatalf("not offered: %v", err)
			}
			cancel()
			<-done
			if !errors.Is(err, context.Canceled) {
				t.Errorf("ingest: %v, want context.Canceled", err)
			}
			invisible(t, held.Store)
			if _, ok := s.VerifiedBody("big", "1.0.0", store.HashOf(bodies[0])); ok {
				t.Errorf("a cancelled ingest's spool still serves")
			}
			emptyCache(t, dir)
		})
	}
}

// TestCloseWhileOfferedStoresNothingAfterIt: closing the searcher while a
// version is offered and its store writes are pending cancels them and
// waits for them: the store, which the mirror closes next, gets no write
// and no commit after Close, the offer is withdrawn, and no spool is left.
func TestCloseWhileOfferedStoresNothingAfterIt(t *testing.T) {
	t.Parallel()
	data, bodies := bigPackage(t)
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			held := newHeld(t, kind, nil)
			f, s, dir := earlyEnv(t, held, data)
			var ferr error
			done := offeredFill(t, f, s, held, &ferr)
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			close(held.release) // a write still pending would now reach the store
			<-done
			if ferr == nil {
				t.Errorf("the fill succeeded after the searcher was closed")
			}
			invisible(t, held.Store)
			unstored(t, held.Store, bodies, "after Close")
			if _, ok := s.VerifiedBody("big", "1.0.0", store.HashOf(bodies[0])); ok {
				t.Errorf("a closed searcher's spool still serves")
			}
			emptyCache(t, dir)
		})
	}
}
