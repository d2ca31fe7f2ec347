package warm

import (
	"context"
	"sync"
	"time"

	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// JobTiming splits one warm job's time between its stages, measured by
// the wrappers TimeRegistry, TimeStore and TimeIndexer around the fill
// chain's registry, store and search indexer. What is left of Total
// (Other) is the ingest's own CPU work: gunzip, untar, sha256 and zstd of
// each body.
type JobTiming struct {
	// Metadata is spent reading packuments (resolution and the fetch
	// link's dist lookup).
	Metadata time.Duration `json:"metadata"`
	// Download is spent waiting for the tarball's answer; its body streams
	// into the ingest, and reading and verifying it is counted there.
	Download time.Duration `json:"download"`
	// Store is spent in PutBlobs and CommitVersion.
	Store time.Duration `json:"store"`
	// Index is spent building and storing the search index.
	Index time.Duration `json:"index"`
	// Queued is spent waiting for the fill budget (fill.Budget,
	// max-fill-bytes), by the fill and its index build.
	Queued time.Duration `json:"queued"`
	// Total is the whole job.
	Total time.Duration `json:"total"`
	// DownloadBytes is the compressed tarball size.
	DownloadBytes int64 `json:"downloadBytes"`
}

// Other is Total less the measured stages.
func (t JobTiming) Other() time.Duration {
	return max(0, t.Total-t.Metadata-t.Download-t.Store-t.Index-t.Queued)
}

// Add sums u into t.
func (t *JobTiming) Add(u JobTiming) {
	t.Metadata += u.Metadata
	t.Download += u.Download
	t.Store += u.Store
	t.Index += u.Index
	t.Queued += u.Queued
	t.Total += u.Total
	t.DownloadBytes += u.DownloadBytes
}

// timer collects one job's timing; the wrappers find it in the context,
// which the fill chain passes down (its single-flight detaches the
// cancellation but keeps the values).
type timer struct {
	mu sync.Mutex
	t  JobTiming
}

type timerKey struct{}

// withTimer returns ctx carrying t, which is also told how long the
// job's fill waited for the fill budget (fill.ObserveBudget).
func withTimer(ctx context.Context, t *timer) context.Context {
	ctx = fill.ObserveBudget(ctx, func(waited time.Duration) {
		t.mu.Lock()
		t.t.Queued += waited
		t.mu.Unlock()
	})
	return context.WithValue(ctx, timerKey{}, t)
}

func record(ctx context.Context, f func(*JobTiming)) {
	if t, ok := ctx.Value(timerKey{}).(*timer); ok {
		t.mu.Lock()
		f(&t.t)
		t.mu.Unlock()
	}
}

func (t *timer) snapshot() JobTiming {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.t
}

// TimeRegistry wraps the fill chain's registry so that warm jobs record
// the time spent on packuments and tarballs. Calls from outside a warm
// job (the mirror's own misses) pass through.
func TimeRegistry(r fill.Registry) fill.Registry { return timedRegistry{r} }

type timedRegistry struct{ fill.Registry }

func (r timedRegistry) Packument(ctx context.Context, name string) (*upstream.Packument, error) {
	start := time.Now()
	p, err := r.Registry.Packument(ctx, name)
	record(ctx, func(t *JobTiming) { t.Metadata += time.Since(start) })
	return p, err
}

func (r timedRegistry) PackumentListing(ctx context.Context, name, version string) (*upstream.Packument, error) {
	start := time.Now()
	p, err := r.Registry.PackumentListing(ctx, name, version)
	record(ctx, func(t *JobTiming) { t.Metadata += time.Since(start) })
	return p, err
}

func (r timedRegistry) Version(ctx context.Context, name, version string) (upstream.PackumentVersion, error) {
	start := time.Now()
	v, err := r.Registry.Version(ctx, name, version)
	record(ctx, func(t *JobTiming) { t.Metadata += time.Since(start) })
	return v, err
}

// Tarball records the time to the tarball's answer and its size.
func (r timedRegistry) Tarball(ctx context.Context, name string, v upstream.PackumentVersion) (*upstream.Download, error) {
	start := time.Now()
	d, err := r.Registry.Tarball(ctx, name, v)
	record(ctx, func(t *JobTiming) {
		t.Download += time.Since(start)
		if d != nil {
			t.DownloadBytes += max(d.Size(), 0)
		}
	})
	return d, err
}

// TimeStore wraps the store the fill chain writes to so that warm jobs
// record the time spent writing. Calls from outside a warm job pass
// through unmeasured.
func TimeStore(s store.Store) store.Store { return timedStore{s} }

type timedStore struct{ store.Store }

func (s timedStore) PutBlobs(ctx context.Context, blobs []store.Blob) error {
	start := time.Now()
	err := s.Store.PutBlobs(ctx, blobs)
	record(ctx, func(t *JobTiming) { t.Store += time.Since(start) })
	return err
}

func (s timedStore) CommitVersion(ctx context.Context, v store.NewVersion) error {
	start := time.Now()
	err := s.Store.CommitVersion(ctx, v)
	record(ctx, func(t *JobTiming) { t.Store += time.Since(start) })
	return err
}

// Indexer builds a stored version's search index: the fill chain's index
// link (fill.Options.Index, a search.Searcher).
type Indexer interface {
	// Ensure makes sure name@version, which must be stored, has a search
	// index of the current format, building and storing it if needed.
	Ensure(ctx context.Context, name, version string) (index.Stats, error)
}

// TimeIndexer wraps the fill chain's indexer so that warm jobs record the
// time spent indexing. Pass it the searcher over the unwrapped store, so
// that the index's own writes count as indexing, not storing.
func TimeIndexer(ix Indexer) Indexer { return timedIndexer{ix} }

type timedIndexer struct{ Indexer }

func (ix timedIndexer) Ensure(ctx context.Context, name, version string) (index.Stats, error) {
	start := time.Now()
	st, err := ix.Indexer.Ensure(ctx, name, version)
	record(ctx, func(t *JobTiming) { t.Index += time.Since(start) })
	return st, err
}
