package warm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc64"
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/store"
)

// maxSchemaName is the longest schema River's LISTEN/NOTIFY channel names
// ("<schema>.river_leadership") fit in Postgres' 63-byte identifiers.
const maxSchemaName = 46

// Resolver turns a range or dist-tag into an exact version, as the mirror
// does (resolve.Resolver).
type Resolver interface {
	// Resolve returns the exact version of name that spec selects. It
	// returns an error matching upstream.ErrNotFound for a package the
	// registry does not have, semver.ErrNoMatch when no version fits, and
	// an *unavailable.Error when the registry cannot answer.
	Resolve(ctx context.Context, name string, spec npmspec.Spec) (string, error)
}

// Deps are what a Queue's workers warm with: the mirror's own store, miss
// path and resolver.
type Deps struct {
	// Store is looked up before anything is fetched.
	Store store.VersionReader
	// Fill brings a version into the store: the chain fill.New builds.
	Fill fill.Filler
	// Resolve resolves ranges and dist-tags.
	Resolve Resolver
	// Index builds search indexes, for reindex jobs (Want.Index); the same
	// indexer the fill chain's index link uses. Optional otherwise.
	Index Indexer
	// Logger receives the queue's and River's logs; nil discards them.
	Logger *slog.Logger
}

// Enqueuer is the hook the mirror calls on each miss, so a version someone
// asked for is warmed in the background even when the request that missed
// gave up or the registry failed it.
type Enqueuer interface {
	// Enqueue durably queues a warm job for name@version (an exact
	// version) and returns without waiting for it. When a job for that
	// version is already queued, running or done, it adds nothing and
	// returns nil.
	Enqueue(ctx context.Context, name, version string) error
}

// riverClient is what the Queue uses of a *river.Client, whatever its
// driver's transaction type.
type riverClient interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	InsertMany(ctx context.Context, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func())
}

// Queue is the warm job queue on a store's database. It is safe for
// concurrent use. Open one per process; Start it to work jobs, or use it
// only to submit them.
type Queue struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	db      *db               // the warm_* tables; the store's own go through maint
	maint   store.Maintenance // the store, for reindex
	closeDB bool              // db.sql was opened here (Postgres) and is closed by Close
	rc      riverClient
	gate    gate

	mu      sync.Mutex
	fetched int       // jobs run here that stored a version
	timing  JobTiming // their summed timing

	// testOnly makes River skip its startup jitter; tests set it.
	testOnly bool
}

var _ Enqueuer = (*Queue)(nil)

// Open opens the warm queue on st's database, which must be a
// *postgres.Store or a *sqlite.Store (anything with a Pool() *pgxpool.Pool
// or a DB() *sql.DB), and applies River's own migrations. The warm_*
// tables come with the store's migrations. Close it when done.
func Open(ctx context.Context, st store.Store, deps Deps, cfg Config) (*Queue, error) {
	return open(ctx, st, deps, cfg, false)
}

func open(ctx context.Context, st store.Store, deps Deps, cfg Config, testOnly bool) (*Queue, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("warm: configuration: %w", err)
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Store == nil {
		deps.Store = st
	}
	q := &Queue{cfg: cfg, deps: deps, log: deps.Logger, maint: st, testOnly: testOnly}
	var err error
	switch s := st.(type) {
	case interface{ Pool() *pgxpool.Pool }:
		err = q.openPostgres(ctx, s.Pool())
	case interface{ DB() *sql.DB }:
		err = q.openSQLite(ctx, s.DB())
	default:
		err = fmt.Errorf("warm: store %T has no database the queue can share", st)
	}
	if err != nil {
		return nil, err
	}
	return q, nil
}

func (q *Queue) openPostgres(ctx context.Context, pool *pgxpool.Pool) error {
	// River's tables go in the store's schema, found through the pool's
	// search_path like every store query (River's own Schema setting is
	// left empty: it caps names at 46 bytes and would qualify every query).
	var schema string
	if err := pool.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return fmt.Errorf("warm: find the store's schema: %w", err)
	}
	if len(schema) > maxSchemaName {
		return fmt.Errorf("warm: the store's schema name %q is %d bytes; River names its notification channels schema.topic, which Postgres caps at 63 bytes, so it must be at most %d", schema, len(schema), maxSchemaName)
	}
	driver := riverpgxv5.New(pool)
	// Replicas starting together would each run River's migrations; one
	// session lock per schema makes the rest wait and find nothing to do.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("warm: migrate River's tables: %w", err)
	}
	defer conn.Release()
	key := int64(crc64.Checksum([]byte("pkgscope river migrations "+schema), crc64.MakeTable(crc64.ECMA)))
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		return fmt.Errorf("warm: migrate River's tables: %w", err)
	}
	err = migrateRiver(ctx, driver, q.log)
	if _, uerr := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", key); uerr != nil && err == nil {
		err = fmt.Errorf("warm: migrate River's tables: %w", uerr)
	}
	if err != nil {
		return err
	}
	q.rc, err = newClient(driver, q.riverConfig(false))
	if err != nil {
		return err
	}
	q.db, q.closeDB = &db{sql: stdlib.OpenDBFromPool(pool), postgres: true}, true
	return nil
}

func (q *Queue) openSQLite(ctx context.Context, sdb *sql.DB) error {
	driver := riversqlite.New(sdb)
	if err := migrateRiver(ctx, driver, q.log); err != nil {
		return err
	}
	var err error
	// Poll only: River's SQLite listener polls an outbox table every 50 ms
	// on the store's single write connection, which every ingest needs.
	// Jobs inserted by this process still wake its own workers at once.
	q.rc, err = newClient(driver, q.riverConfig(true))
	if err != nil {
		return err
	}
	q.db = &db{sql: sdb}
	return nil
}

func migrateRiver[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], log *slog.Logger) error {
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: log})
	if err != nil {
		return fmt.Errorf("warm: migrate River's tables: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("warm: migrate River's tables: %w", err)
	}
	return nil
}

func newClient[TTx any](driver riverdriver.Driver[TTx], cfg *river.Config) (riverClient, error) {
	c, err := river.NewClient(driver, cfg)
	if err != nil {
		return nil, fmt.Errorf("warm: create the River client: %w", err)
	}
	return c, nil
}

func (q *Queue) riverConfig(pollOnly bool) *river.Config {
	workers := river.NewWorkers()
	river.AddWorker(workers, &jobWorker{q: q})
	river.AddWorker(workers, &cleanupWorker{q: q})
	return &river.Config{
		Logger:      q.log,
		PollOnly:    pollOnly,
		Queues:      map[string]river.QueueConfig{q.cfg.Queue: {MaxWorkers: q.cfg.Workers}},
		Workers:     workers,
		MaxAttempts: q.cfg.MaxAttempts,
		RetryPolicy: &retryPolicy{base: q.cfg.RetryBase, max: q.cfg.RetryMax},
		JobTimeout:  q.cfg.JobTimeout,
		// A job still running this long after it started lost its
		// worker (killed, or its machine gone): run it again. River
		// requires it to exceed JobTimeout.
		RescueStuckJobsAfter: q.cfg.JobTimeout + q.cfg.RescueMargin,
		FetchPollInterval:    q.cfg.PollInterval,
		FetchCooldown:        min(river.FetchCooldownDefault, q.cfg.PollInterval),
		PeriodicJobs: []*river.PeriodicJob{river.NewPeriodicJob(
			river.PeriodicInterval(q.cfg.CleanupInterval),
			func() (river.JobArgs, *river.InsertOpts) {
				return cleanupArgs{}, &river.InsertOpts{Queue: q.cfg.Queue}
			},
			&river.PeriodicJobOpts{ID: "warm_cleanup"},
		)},
		TestOnly: q.testOnly,
	}
}

// Start begins working warm jobs, at most Config.Workers at once, until
// Stop. Workers need Deps.Fill and Deps.Resolve.
func (q *Queue) Start(ctx context.Context) error {
	if q.deps.Fill == nil || q.deps.Resolve == nil {
		return errors.New("warm: Start needs Deps.Fill and Deps.Resolve")
	}
	if err := q.rc.Start(ctx); err != nil {
		return fmt.Errorf("warm: start workers: %w", err)
	}
	return nil
}

// Stop stops fetching jobs and waits for those running to finish, or for
// ctx to end, whichever is first; jobs cut short are run again later.
func (q *Queue) Stop(ctx context.Context) error {
	if err := q.rc.Stop(ctx); err != nil && ctx.Err() != nil {
		// Out of patience: cancel the jobs still running (they are run
		// again later) rather than wait up to JobTimeout for them.
		err = q.rc.StopAndCancel(context.Background())
		if err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("warm: stop workers: %w", err)
		}
		return nil
	} else if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("warm: stop workers: %w", err)
	}
	return nil
}

// Close releases what Open opened; it does not close the store. Stop the
// queue first if it was started.
func (q *Queue) Close() error {
	if q.closeDB {
		return q.db.sql.Close()
	}
	return nil
}

// Enqueue implements Enqueuer. name must be a valid package name and
// version an exact version.
func (q *Queue) Enqueue(ctx context.Context, name, version string) error {
	a, err := argsFor(Want{Name: name, Spec: version})
	if err == nil && a.Version == "" {
		err = fmt.Errorf("%q is not an exact version", version)
	}
	if err != nil {
		return fmt.Errorf("warm: enqueue %s@%s: %w", name, version, err)
	}
	if _, err := q.rc.InsertMany(ctx, []river.InsertManyParams{{Args: a, InsertOpts: insertOpts(a, q.cfg)}}); err != nil {
		return fmt.Errorf("warm: enqueue %s@%s: %w", name, version, err)
	}
	return nil
}

// Fetched reports how many jobs this process ran that stored a version
// (not those that found it present), and their summed timing: what the
// benchmark splits into download, store and the rest.
func (q *Queue) Fetched() (int, JobTiming) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.fetched, q.timing
}

// Depth counts this queue's jobs not yet finished: available, scheduled,
// retryable (waiting out a backoff or a snooze) or running. It reads
// River's job table directly (one indexed count), for the
// pkgscope_warm_queue_depth gauge.
func (q *Queue) Depth(ctx context.Context) (int, error) {
	var n int
	err := q.db.queryRow(ctx, `SELECT count(*) FROM river_job
		WHERE queue = ? AND state IN ('available', 'scheduled', 'retryable', 'running', 'pending')`, q.cfg.Queue).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("warm: count queued jobs: %w", err)
	}
	return n, nil
}
