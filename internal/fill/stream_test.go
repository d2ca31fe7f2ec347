package fill_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/postgres"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/unavailable"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// The fetch streams a tarball into the store while it downloads and
// checks its integrity only at the end. These tests hold it to the
// guarantees it had when the check came first, on both stores: whatever
// goes wrong mid-stream, nothing of the version is visible, and only
// what the same bytes would cause again is remembered as the version's.

// openStore opens a fresh store of kind: the embedded one, or a fresh
// Postgres schema.
func openStore(t *testing.T, kind string) store.Store {
	t.Helper()
	if kind == "postgres" {
		pg, err := postgres.Open(t.Context(), pgtest.URL(t), postgres.Options{})
		if err != nil {
			t.Fatalf("opening the Postgres store: %v", err)
		}
		t.Cleanup(func() { pg.Close() })
		return pg
	}
	lite, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	return lite
}

var storeKinds = []string{"sqlite", "postgres"}

// bigPackage is a tarball of several batches' worth of bodies (BatchBytes
// is lowered to 64 KiB; random hex, so half the tarball holds about half
// of them), so some are stored before a failure mid-stream. It returns
// the bodies too.
func bigPackage(t *testing.T) ([]byte, [][]byte) {
	rng := rand.New(rand.NewPCG(1, 2))
	files := map[string]string{"package.json": `{"name":"big"}`}
	var bodies [][]byte
	for i := range 16 {
		b := make([]byte, 16<<10)
		for j := range b {
			b[j] = "0123456789abcdef"[rng.IntN(16)]
		}
		files[fmt.Sprintf("lib/%d.js", i)] = string(b)
		bodies = append(bodies, b)
	}
	return tarballtest.Package(t, files), bodies
}

// streamEnv publishes big@1.0.0 with its tarball on h and returns a fill
// chain over st whose client allows h and caps tarballs at maxTarball.
func streamEnv(t *testing.T, st store.Store, data []byte, h *fakeregistry.TarballHost, maxTarball int64, opts ...fakeregistry.PublishOption) fill.Filler {
	t.Helper()
	reg := fakeregistry.New(t)
	reg.Publish("big", "1.0.0", data, append(opts, fakeregistry.WithTarballURL(h.URL()))...)
	up := upstream.New(reg.NPM(), upstream.Config{AllowedTarballHosts: []string{h.Host()}, MaxTarballBytes: maxTarball}, nil)
	return fill.New(st, up, fill.Options{Timeout: time.Minute, Ingest: smallBatches(), FailedRetryAfter: time.Hour})
}

// smallBatches are ingest's limits with 64 KiB batches, so that
// bigPackage's bodies span several PutBlobs.
func smallBatches() ingest.Limits {
	lim := ingest.DefaultLimits()
	lim.BatchBytes = 64 << 10
	return lim
}

// invisible fails the test when anything of big@1.0.0 can be listed.
func invisible(t *testing.T, st store.Store) {
	t.Helper()
	if files, err := st.Files(t.Context(), "big", "1.0.0"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("big@1.0.0 lists %d files (%v); want nothing visible", len(files), err)
	}
}

// TestStreamedFillFailures: an integrity mismatch found after every body
// went by, and a body without Content-Length that runs past
// max-tarball-bytes, are bad bytes: recorded, remembered (not downloaded
// again). A download cut short is the registry's outage: not recorded,
// and the next request ingests it whole. None leaves anything visible.
func TestStreamedFillFailures(t *testing.T) {
	t.Parallel()
	data, _ := bigPackage(t)
	wrong := fakeregistry.WithIntegrity("sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==")
	tests := []struct {
		name       string
		mode       fakeregistry.Mode
		maxTarball int64
		opts       []fakeregistry.PublishOption
		want       error // errors.Is; nil: an *unavailable.Error
		bad        bool
	}{
		{"integrity", fakeregistry.Whole, 0, []fakeregistry.PublishOption{wrong}, upstream.ErrIntegrity, true},
		{"too large", fakeregistry.Chunked, int64(len(data)) - 1, nil, upstream.ErrTooLarge, true},
		{"cut", fakeregistry.Cut, 0, nil, nil, false},
	}
	for _, tc := range tests {
		for _, kind := range storeKinds {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				t.Parallel()
				st := openStore(t, kind)
				h := fakeregistry.NewTarballHost(t, data, tc.mode)
				f := streamEnv(t, st, data, h, tc.maxTarball, tc.opts...)
				err := f.Fill(t.Context(), "big", "1.0.0")
				var ue *unavailable.Error
				if tc.want != nil && !errors.Is(err, tc.want) || tc.want == nil && !errors.As(err, &ue) {
					t.Fatalf("fill: %v, want %v", err, cmp.Or(tc.want, error(errors.New("the registry unavailable"))))
				}
				if fill.BadBytes(err) != tc.bad {
					t.Errorf("BadBytes(%v) = %v, want %v", err, !tc.bad, tc.bad)
				}
				invisible(t, st)
				v, verr := st.Version(t.Context(), "big", "1.0.0")
				if !tc.bad {
					if !errors.Is(verr, store.ErrNotFound) {
						t.Errorf("an outage left a record: %+v, %v", v, verr)
					}
					h.Set(fakeregistry.Whole)
					if err := f.Fill(t.Context(), "big", "1.0.0"); err != nil {
						t.Fatalf("the next fill, of a whole download: %v", err)
					}
					if files, err := st.Files(t.Context(), "big", "1.0.0"); err != nil || len(files) != 17 {
						t.Errorf("after the whole download: %d files, %v; want 17", len(files), err)
					}
					return
				}
				if verr != nil || v.State != store.StateFailed {
					t.Errorf("record %+v, %v; want failed", v, verr)
				}
				if err := f.Fill(t.Context(), "big", "1.0.0"); !errors.Is(err, tc.want) {
					t.Errorf("second fill: %v, want the remembered %v", err, tc.want)
				}
				if n := h.Requests(); n != 1 {
					t.Errorf("%d downloads, want 1 (the failure is remembered)", n)
				}
				invisible(t, st)
			})
		}
	}
}

// TestStreamCancelledMidDownload: the fill's context ending while the
// tarball is half downloaded, some of its bodies already stored, ends the
// ingest with that context's error and commits nothing.
func TestStreamCancelledMidDownload(t *testing.T) {
	t.Parallel()
	data, bodies := bigPackage(t)
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			st := openStore(t, kind)
			h := fakeregistry.NewTarballHost(t, data, fakeregistry.Stall)
			reg := fakeregistry.New(t)
			reg.Publish("big", "1.0.0", data, fakeregistry.WithTarballURL(h.URL()))
			up := upstream.New(reg.NPM(), upstream.Config{AllowedTarballHosts: []string{h.Host()}}, nil)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			pv, err := up.Version(ctx, "big", "1.0.0")
			if err != nil {
				t.Fatal(err)
			}
			d, err := up.Tarball(ctx, "big", pv)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			w := &firstPut{Store: st, done: make(chan struct{})}
			go func() { <-h.Sent(); <-w.done; cancel() }()
			_, err = ingest.Stream(ctx, w, "big", "1.0.0", pv.Dist.Integrity, d, smallBatches())
			if !errors.Is(err, context.Canceled) || fill.BadBytes(err) {
				t.Fatalf("Stream = %v, want context.Canceled", err)
			}
			invisible(t, st)
			if _, err := st.Version(t.Context(), "big", "1.0.0"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a cancelled ingest left a record: %v", err)
			}
			stored := 0
			for _, b := range bodies {
				if _, err := st.Blob(t.Context(), store.HashOf(b)); err == nil {
					stored++
				}
			}
			if stored == 0 || stored == len(bodies) {
				t.Errorf("%d of %d bodies stored before the cancel; want some, not all (the cancel came mid-stream)", stored, len(bodies))
			}
		})
	}
}

// firstPut closes done once a batch of bodies has been stored.
type firstPut struct {
	store.Store
	done chan struct{}
	once sync.Once
}

func (w *firstPut) PutBlobs(ctx context.Context, blobs []store.Blob) error {
	err := w.Store.PutBlobs(ctx, blobs)
	if err == nil {
		w.once.Do(func() { close(w.done) })
	}
	return err
}
