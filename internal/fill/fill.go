// Package fill is the miss path: it brings a package version that the store
// does not have into it, once, however many callers ask at the same moment.
//
// The path is a chain of small Fillers, each wrapping the next (as athens'
// stasher does), wired in one place, New:
//
//	store hit → recent bad-bytes failure → in-process single-flight → fill slot → cross-replica lock → store re-check → index → fetch
//
// where fetch is: the version's entry (its manifest, or the packument) →
// declared-size check → its bytes taken from the fill budget → tarball
// download streamed into unpack and store (upstream, ingest) → integrity
// check of every byte → commit, and
// index then builds the search index of what fetch committed (in the
// background for the mirror, Options.Index). The lock (Options.Lock; lock.go)
// is optional: in production it is Pair(Redis, Postgres) when the store is
// Postgres (Postgres alone without Redis), Redis alone over the embedded
// store (one process, where single-flight already suffices). The jsDelivr fallback is not a link
// of this chain but of the read chain in front of it (explore.New): it
// answers from the CDN when this chain fails or is slow, and never writes
// to the store.
//
// The fill slot (Options.Slots; slots.go) bounds the distinct versions
// this process fetches at once (max-fills) and those waiting for a turn
// (max-fill-waiters; past it a miss is refused at once, 503). It comes
// after the single-flight, so a caller joining a fill already running
// never takes a slot, and before the lock, so a waiting fill holds no
// lock (in Postgres, a connection).
//
// The fill budget (Options.Budget; budget.go, max-fill-bytes) bounds the
// bytes of the versions this process fills at once, callers' misses and
// warm jobs alike, and of the index builds after them: the slots count
// fills, the budget weighs them, so four versions of one 200 MiB line
// each are read one after another, not at once (issue 25 §1). It is
// taken inside fetch, where the version's declared size is known, so a
// fill waiting for it holds its slot and the lock; a body larger than an
// ingest batch streams to the search spool (ingest.Streamer) and is
// never held whole by the ingest.
//
// The single-flight runs a fill detached from its callers, under the
// process's Flights (Options.Flights; flights.go), which shutdown closes
// before the store: fills in flight get its patience, then are cancelled.
package fill

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/unavailable"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// Filler brings name@version into the store.
type Filler interface {
	// Fill returns nil once name@version is ready in the store.
	Fill(ctx context.Context, name, version string) error
}

// FillerFunc adapts a function to Filler.
type FillerFunc func(ctx context.Context, name, version string) error

// Fill calls f.
func (f FillerFunc) Fill(ctx context.Context, name, version string) error {
	return f(ctx, name, version)
}

// Registry is what the fetch link needs from the upstream client (and,
// for the indexer's warm jobs, what their resolver needs of the same
// wrapped client).
type Registry interface {
	Packument(ctx context.Context, name string) (*upstream.Packument, error)
	// PackumentListing is Packument, fetched again early when the cached
	// one does not list version (published since it was cached).
	PackumentListing(ctx context.Context, name, version string) (*upstream.Packument, error)
	// Version is one exact version's entry, from its manifest when the
	// registry serves it, else from the packument.
	Version(ctx context.Context, name, version string) (upstream.PackumentVersion, error)
	// Tarball starts the download; the caller reads it, Verifies it and
	// Closes it.
	Tarball(ctx context.Context, name string, v upstream.PackumentVersion) (*upstream.Download, error)
}

// Indexer builds a stored version's search index (internal/search).
type Indexer interface {
	Ensure(ctx context.Context, name, version string) (index.Stats, error)
}

// Spooler is an Indexer that builds a version's first indexes faster from
// the bodies its fill writes than from the store (search.Searcher.Spool):
// Spool wraps the writer ingest stores through, and done is called once
// the ingest has ended, committed or not. The wrapped writer keeps the
// bodies in its spool and writes them to the store once the download is
// verified, in CommitVersion, after offering the version to the requests
// waiting on it (the spool then answers them: docs/ARCHITECTURE.md "The
// miss path").
type Spooler interface {
	Spool(w store.Writer, name, version string) (_ store.Writer, done func())
}

// Options configure the chain.
type Options struct {
	// Timeout bounds one fill. The fill runs detached from the request
	// that started it (STYLE §11), so one caller giving up does not fail
	// the others waiting on the same version.
	Timeout time.Duration
	Ingest  ingest.Limits
	Logger  *slog.Logger
	// Lock, when set, makes replicas take turns on a cold version; nil
	// leaves only the in-process single-flight.
	Lock Lock
	// Slots, when set, bound the fills in flight (NewSlots); several
	// chains may share one. Nil leaves them unbounded: the indexer's
	// warm jobs are bounded by their workers instead.
	Slots *Slots
	// FailedRetryAfter is how long a version whose bytes failed (BadBytes)
	// is answered with that failure from memory instead of being
	// downloaded again: without it each request for a tarball that fails
	// its integrity check re-downloads it (up to max-tarball-bytes). Zero
	// means DefaultFailedRetryAfter.
	FailedRetryAfter time.Duration
	// Index, when set, builds the search index of every version the chain
	// fetches, after its files are committed. The mirror passes
	// search.Searcher.Later (a list should not wait for the index; a grep
	// joins the same build); the indexer's warm jobs pass the Searcher
	// itself, so a warmed version is indexed when the job ends. When it
	// is also a Spooler, the fetch passes it the bodies it stores.
	Index Indexer
	// Budget, when set, weighs every fill of the chain in bytes
	// (max-fill-bytes): the fetch takes the version's declared unpacked
	// size before its download, grows it to the bytes actually read, and
	// gives it back once the version is committed or has failed. One
	// Budget serves every chain of a process, and its index builds
	// (search.Options.Budget). Nil leaves fills weighed by nothing.
	Budget *Budget
	// Flights, when set, tracks the fills in flight, so that shutdown
	// ends them before it closes the store (Flights.Close); one Flights
	// serves every chain of a process. Nil leaves them untracked.
	Flights *Flights
}

// New wires the miss path over st and reg.
func New(st store.Store, reg Registry, opt Options) Filler {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	spool, _ := opt.Index.(Spooler)
	var f Filler = &fetch{st: st, reg: reg, lim: opt.Ingest, log: opt.Logger, spool: spool, budget: opt.Budget}
	if opt.Index != nil {
		f = indexAfter(f, opt.Index)
	}
	f = storeHit(st, f) // re-check: another flight may have filled it meanwhile
	if opt.Lock != nil {
		f = &locked{lock: opt.Lock, st: st, next: f}
	}
	if opt.Slots != nil {
		f = slotted(opt.Slots, f)
	}
	f = &singleFlight{next: f, timeout: opt.Timeout, flights: opt.Flights}
	f = rememberFailures(f, opt.FailedRetryAfter)
	return storeHit(st, f)
}

// DefaultFailedRetryAfter is FailedRetryAfter's default: a republished
// fix takes a new version anyway, and a registry glitch clears in minutes.
const DefaultFailedRetryAfter = 5 * time.Minute

// rememberFailures answers a version whose bytes just failed with that
// failure, for ttl, from a bounded in-process memory (maxRemembered
// versions; when full, the oldest is forgotten).
func rememberFailures(next Filler, ttl time.Duration) Filler {
	if ttl <= 0 {
		ttl = DefaultFailedRetryAfter
	}
	m := &failures{ttl: ttl, at: map[string]failure{}}
	return FillerFunc(func(ctx context.Context, name, version string) error {
		k := name + "@" + version
		if err := m.get(k); err != nil {
			return err
		}
		err := next.Fill(ctx, name, version)
		if BadBytes(err) {
			m.add(k, err)
		}
		return err
	})
}

const maxRemembered = 10_000

type failure struct {
	err   error
	until time.Time
}

type failures struct {
	mu    sync.Mutex
	ttl   time.Duration
	at    map[string]failure
	order []string // insertion order, for eviction
}

func (m *failures) get(k string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.at[k]
	if !ok || time.Now().After(f.until) {
		return nil
	}
	return f.err
}

func (m *failures) add(k string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.at[k]; !ok {
		m.order = append(m.order, k)
	}
	m.at[k] = failure{err: err, until: time.Now().Add(m.ttl)}
	for len(m.order) > maxRemembered {
		delete(m.at, m.order[0])
		m.order = m.order[1:]
	}
}

// storeHit answers from the store when the version is ready there.
func storeHit(st store.VersionReader, next Filler) Filler {
	return FillerFunc(func(ctx context.Context, name, version string) error {
		v, err := st.Version(ctx, name, version)
		switch {
		case err == nil && v.State == store.StateReady:
			return nil
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("checking the store: %w", err)
		}
		return next.Fill(ctx, name, version)
	})
}

// indexAfter builds the index of what next fetched.
func indexAfter(next Filler, ix Indexer) Filler {
	return FillerFunc(func(ctx context.Context, name, version string) error {
		if err := next.Fill(ctx, name, version); err != nil {
			return err
		}
		if _, err := ix.Ensure(ctx, name, version); err != nil {
			return fmt.Errorf("indexing %s@%s: %w", name, version, err)
		}
		return nil
	})
}

// singleFlight joins concurrent fills of one version into one, which runs
// detached from its callers, under flights (Flights.run).
type singleFlight struct {
	g       singleflight.Group
	next    Filler
	timeout time.Duration
	flights *Flights
}

func (s *singleFlight) Fill(ctx context.Context, name, version string) error {
	ch := s.g.DoChan(name+"@"+version, func() (any, error) {
		return nil, s.flights.run(ctx, s.timeout, name, version, func(fctx context.Context) error {
			return s.next.Fill(fctx, name, version)
		})
	})
	select {
	case r := <-ch:
		return r.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fetch downloads, verifies, unpacks and commits one version.
type fetch struct {
	st     store.Store
	reg    Registry
	lim    ingest.Limits
	log    *slog.Logger
	spool  Spooler // nil: the index is built from the store alone
	budget *Budget // nil: not weighed
}

func (f *fetch) Fill(ctx context.Context, name, version string) error {
	pv, err := f.reg.Version(ctx, name, version)
	if err != nil {
		return err
	}
	start := time.Now()
	err = f.ingest(ctx, name, version, pv)
	if err != nil && permanent(err) {
		// Recorded so operators can see why; a later request tries again.
		if merr := f.st.MarkFailed(context.WithoutCancel(ctx), name, version, err.Error()); merr != nil {
			f.log.Error("recording a failed ingest", "package", name, "version", version, "err", merr)
		}
	}
	if err != nil {
		return err
	}
	f.log.Info("ingested", "package", name, "version", version, "duration", time.Since(start))
	return nil
}

func (f *fetch) ingest(ctx context.Context, name, version string, pv upstream.PackumentVersion) error {
	if err := ingest.CheckDeclared(pv.Dist.UnpackedSize, pv.Dist.FileCount, f.lim); err != nil {
		return err
	}
	// Weighed before the download by what the registry declares, so no
	// connection idles while the fill waits; else by the download's size.
	var charge *Charge
	var err error
	if pv.Dist.UnpackedSize > 0 {
		if charge, err = f.budget.Take(ctx, pv.Dist.UnpackedSize); err != nil {
			return err
		}
		defer charge.Release()
	}
	tgz, err := f.reg.Tarball(ctx, name, pv)
	if errors.Is(err, upstream.ErrNotFound) {
		// The packument lists the version, so a 404 for its tarball is the
		// registry lagging (a version published seconds ago), not a
		// missing package: a retry will find it.
		return &unavailable.Error{Source: unavailable.Registry, Status: http.StatusNotFound, RetryAfter: 30 * time.Second,
			Err: fmt.Errorf("the registry lists %s@%s but its tarball is not there yet", name, version)}
	}
	if err != nil {
		return err
	}
	defer tgz.Close()
	if charge == nil {
		if charge, err = f.budget.Take(ctx, weighDownload(tgz.Size())); err != nil {
			return err
		}
		defer charge.Release()
	}
	integrity := pv.Dist.Integrity
	if integrity == "" {
		// Old versions carry only a sha1 hex shasum: record it as SRI.
		if sum, err := hex.DecodeString(pv.Dist.Shasum); err == nil {
			integrity = "sha1-" + base64.StdEncoding.EncodeToString(sum)
		}
	}
	var w store.Writer = f.st
	if msg := pv.Deprecation(); msg != "" {
		w = deprecated{Writer: w, msg: msg}
	}
	if f.spool != nil {
		var done func()
		w, done = f.spool.Spool(w, name, version)
		defer done()
	}
	if charge != nil {
		w = &charged{Writer: w, c: charge}
	}
	// The bodies are stored as they come out of the download; the
	// version is committed only once Verify has vouched for every byte.
	_, err = ingest.Stream(ctx, w, name, version, integrity, tgz, f.lim)
	if errors.Is(err, store.ErrExists) {
		return nil // another replica or flight committed the same bytes first
	}
	return err
}

// unpackRatio estimates a version's unpacked bytes from its compressed
// tarball when the registry does not declare them: the bench/warm
// lockfile unpacks 377 MiB of tarballs into 1.2 GiB (3.3 times); 4 leaves
// a margin. The bytes actually read correct it (Charge.Grow).
const unpackRatio = 4

// weighDownload is a version's first charge from its tarball's size, or
// the whole budget (-1) when the answer does not say.
func weighDownload(size int64) int64 {
	if size < 0 {
		return -1
	}
	return size * unpackRatio
}

// deprecated commits versions with the registry's deprecation message,
// which the ingest does not know: answers about the version then say it
// is deprecated without asking the registry.
type deprecated struct {
	store.Writer
	msg string
}

func (d deprecated) CommitVersion(ctx context.Context, v store.NewVersion) error {
	v.Deprecated = d.msg
	return d.Writer.CommitVersion(ctx, v)
}

// permanent reports errors that will recur on retry with the same bytes.
func permanent(err error) bool { return BadBytes(err) }

// BadBytes reports a failure that the same tarball will cause again:
// integrity mismatch, over a limit, a corrupt or unsupported archive, a
// tarball URL refused. The fill records it (MarkFailed) and answers it from
// memory for Options.FailedRetryAfter; the indexer does not retry it.
func BadBytes(err error) bool {
	for _, target := range []error{
		upstream.ErrIntegrity, upstream.ErrTooLarge, upstream.ErrTarballURL,
		ingest.ErrLimit, ingest.ErrBadArchive, ingest.ErrUnsupported,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
