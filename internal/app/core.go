package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/pglock"
	"github.com/pkgscope/pkgscope/internal/redisconn"
	"github.com/pkgscope/pkgscope/internal/redislock"
	"github.com/pkgscope/pkgscope/internal/search"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/blobcodec"
	"github.com/pkgscope/pkgscope/internal/store/postgres"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// Core is what the mirror and the indexer both run on: the store, npm's
// configuration, the registry client, the optional Redis connection, the
// cross-replica fill locks, and the search indexer. Both binaries build it here, so the
// miss path they share is configured the same way.
type Core struct {
	Store    store.Store
	NPM      *npmrc.Config
	Registry *upstream.Client
	// Redis and Lock are nil without --redis-url.
	Redis *redisconn.Conn
	Lock  *redislock.Locker
	// PGLock is the fill lock on the store's Postgres, nil with the
	// embedded store (one process: single-flight suffices).
	PGLock   *pglock.Locker
	Searcher *search.Searcher
	// Fills are the fills in flight of every chain built on
	// FillOptions; Close ends them (waiting up to shutdown-timeout, then
	// cancelling) before it closes the store they write to.
	Fills *fill.Flights
	// Budget is the process's one fill memory budget (max-fill-bytes),
	// shared by every chain built on FillOptions and by Searcher's builds.
	Budget *fill.Budget
	grace  time.Duration // cfg.ShutdownTimeout
}

// CoreOptions are what differs between the two binaries.
type CoreOptions struct {
	// UserAgent names the binary to the registry.
	UserAgent string
	// MinStoreConns raises the Postgres pool for a process that runs
	// many warm workers (each holds a connection while it commits).
	MinStoreConns int32
	// RegistryTransport carries registry requests (metrics); nil is
	// http.DefaultTransport.
	RegistryTransport http.RoundTripper
	// ObserveIndex, when set, is told how long each index build took.
	ObserveIndex func(time.Duration, error)
	// MinLockConns raises pg-lock-conns for a process whose cold fills
	// are bounded (the indexer's warm workers), so each gets the Postgres
	// lock.
	MinLockConns int32
}

// OpenCore opens everything in Core; Close releases it.
func OpenCore(ctx context.Context, cfg config.Config, log *slog.Logger, getenv func(string) string, opt CoreOptions) (*Core, error) {
	c := &Core{Fills: fill.NewFlights(), Budget: fill.NewBudget(cfg.MaxFillBytes), grace: cfg.ShutdownTimeout}
	var err error
	if c.Store, err = openStore(ctx, cfg, opt.MinStoreConns); err != nil {
		return nil, err
	}
	if c.NPM, err = npmrc.Load(cfg.ProjectDir, getenv); err != nil {
		c.Close()
		return nil, fmt.Errorf("reading npm configuration: %w", err)
	}
	for _, w := range c.NPM.Warnings() {
		log.Warn("npm configuration", "warning", w)
	}
	upc := cfg.Upstream()
	upc.UserAgent = opt.UserAgent
	c.Registry = upstream.New(c.NPM, upc, &http.Client{Transport: opt.RegistryTransport})
	if cfg.RedisURL != "" {
		// Optional and degradable: Open does not connect, and every use
		// falls back to the store when Redis does not answer in time.
		ro := cfg.Redis()
		ro.Logger = log
		c.Redis, err = redisconn.Open(ro)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Lock = redislock.New(c.Redis, redislock.Options{TTL: cfg.LockTTL(), PollMin: 50 * time.Millisecond, PollMax: time.Second})
	}
	if cfg.DatabaseURL != "" {
		po := cfg.PGLock()
		po.Conns = max(po.Conns, opt.MinLockConns)
		if c.PGLock, err = pglock.Open(ctx, cfg.DatabaseURL, po); err != nil {
			c.Close()
			return nil, fmt.Errorf("opening the Postgres fill lock: %w", err)
		}
	}
	if c.Searcher, err = newSearcher(c.Store, cfg, log, opt.ObserveIndex, c.Budget); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// FillOptions are the miss path's options from cfg: timeout, ingest
// limits, the cross-replica lock, and Fills. The caller sets Index.
//
// With the Postgres store the lock is Redis then Postgres (fill.Pair: every
// holder takes both, so a replica whose Redis breaker opened still waits
// for the holder on another replica), or Postgres alone without Redis; with
// the embedded store, Redis alone when configured.
func (c *Core) FillOptions(cfg config.Config, log *slog.Logger) fill.Options {
	opt := cfg.Fill()
	opt.Logger, opt.Flights, opt.Budget = log, c.Fills, c.Budget
	switch {
	case c.Lock != nil && c.PGLock != nil:
		opt.Lock = fill.Pair(c.Lock, c.PGLock)
	case c.PGLock != nil:
		opt.Lock = c.PGLock
	case c.Lock != nil:
		opt.Lock = c.Lock
	}
	return opt
}

// LockStats are the fill locks' counters for metrics, nil for a lock not
// wired (a method value of a nil *Locker would not be nil, and would
// panic at the first scrape).
func (c *Core) LockStats() (redis func() redislock.Stats, pg func() pglock.Stats) {
	if c.Lock != nil {
		redis = c.Lock.Stats
	}
	if c.PGLock != nil {
		pg = c.PGLock.Stats
	}
	return redis, pg
}

// Close ends the fills in flight (Fills: shutdown-timeout for them to
// finish, then cancelled), then releases the searcher (waiting for its
// builds, which use the store), Redis, the Postgres fill lock and the
// store.
func (c *Core) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), c.grace)
	c.Fills.Close(ctx)
	cancel()
	var errs []error
	if c.Searcher != nil {
		errs = append(errs, c.Searcher.Close())
	}
	if c.Redis != nil {
		errs = append(errs, c.Redis.Close())
	}
	if c.PGLock != nil {
		c.PGLock.Close()
	}
	if c.Store != nil {
		errs = append(errs, c.Store.Close())
	}
	return errors.Join(errs...)
}

func newSearcher(st store.Store, cfg config.Config, log *slog.Logger, observe func(time.Duration, error), budget *fill.Budget) (*search.Searcher, error) {
	opt := cfg.Search()
	opt.Logger, opt.Observe, opt.Budget = log, observe, budget
	s, err := search.New(st, opt)
	if err != nil {
		return nil, fmt.Errorf("setting up grep: %w", err)
	}
	return s, nil
}

// openStore opens the store cfg names: Postgres with a database URL, else
// the embedded SQLite store under data-dir.
func openStore(ctx context.Context, cfg config.Config, minConns int32) (store.Store, error) {
	if cfg.DatabaseURL != "" {
		st, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.Options{MaxConns: max(postgres.DefaultOptions().MaxConns, minConns), MigrationLockTimeout: cfg.MigrationLockTimeout,
			Codec: blobcodec.Config{Workers: cfg.CompressWorkers}, BlobRefreshAfter: cfg.BlobGC().RefreshAfter()})
		if err != nil {
			return nil, fmt.Errorf("opening the Postgres store: %w", err)
		}
		return st, nil
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data-dir: %w", err)
	}
	st, err := sqlite.Open(ctx, cfg.DataDir, sqlite.Options{Codec: blobcodec.Config{Workers: cfg.CompressWorkers}})
	if err != nil {
		return nil, fmt.Errorf("opening the embedded store in %s: %w", cfg.DataDir, err)
	}
	return st, nil
}
