// Package pglock is the cross-replica fill lock (fill.Lock) on Postgres
// advisory locks. Replicas that share a store share its database, so this
// lock joins them when Redis does not answer (internal/redislock), and
// when the deployment has no Redis at all.
//
// A lock is pg_try_advisory_lock(id) on a connection from a pool of the
// Locker's own, kept for the fill: a session-level advisory lock belongs to
// its connection. Release is pg_advisory_unlock, and the connection goes
// back to the pool. A holder that crashes, or whose connection breaks, ends
// its session and Postgres frees the lock at once: unlike redislock there is
// no TTL that must outlast the slowest fill.
//
// id is the first 8 bytes of SHA-256("pkgscope fill lock", schema, key):
// the schema keeps deployments (and tests) sharing a database apart, as the
// migration locks are (store/postgres, warm). Two keys sharing an id take
// turns on one lock: harmless serialisation (the second waits out the first
// fill, at most fill-timeout, then takes the lock), and with 2^64 ids it
// takes about 5 billion versions filling at once for a 1-in-2 chance of any
// pair colliding. SHA-256 rather than a CRC (which the migration locks use)
// because package names are chosen by anyone who can publish: a CRC
// collision with a popular version is built in microseconds, a SHA-256 one
// is not.
//
// Waiters poll at a bounded backoff (PollMin doubling to PollMax), each
// try taking a pooled connection for one statement and giving it back: a
// waiter holds no connection while it sleeps (LISTEN would hold one per
// waiter), and it calls ready before each try, so a version another replica
// committed ends the wait.
//
// Connections: Conns bounds the connections a Locker holds, tries
// included. The holders are at most the fills in flight in this process,
// and those are not bounded in the mirror (one per distinct cold version
// requested at once, after single-flight) — the indexer's are, by its warm
// workers — so Conns is the bound: a fill that finds every connection
// holding a lock gets ErrBusy (a caller already waiting keeps waiting),
// and fill.Pair goes on with the Redis lock
// alone, or none. That costs at most one extra download of that version;
// waiting instead would make a cold fill wait for unrelated ones, up to
// fill-timeout.
package pglock

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Options configure a Locker.
type Options struct {
	// Conns is the most connections the Locker holds at once: held locks
	// plus tries in flight. Postgres' max_connections (100 by default) is
	// shared by every replica's store pool (10) and lock pool.
	Conns int32
	// Timeout bounds one lock statement (a try or a release), connecting
	// included, so a Postgres that stopped answering fails the try (the
	// fill goes on without this lock) instead of holding the fill.
	Timeout time.Duration
	// PollMin and PollMax bound the backoff between tries while waiting.
	PollMin, PollMax time.Duration
}

// DefaultOptions: Conns 8 (three replicas hold at most 24 of Postgres'
// default 100 connections for locks, beside 30 for their stores); Timeout
// 5s, the store's query timeout; polling like redislock's, which a release
// message usually cuts short there and nothing does here.
func DefaultOptions() Options {
	return Options{Conns: 8, Timeout: 5 * time.Second, PollMin: 50 * time.Millisecond, PollMax: time.Second}
}

// ErrBusy is Acquire's answer when every connection of the Locker holds a
// lock (Options.Conns): the fill goes on without this lock.
var ErrBusy = errors.New("every fill-lock connection holds a lock")

// Locker implements fill.Lock on Postgres. It is safe for concurrent use.
type Locker struct {
	pool  *pgxpool.Pool
	ns    string
	opt   Options
	slots chan struct{} // one per connection in use (Conns)

	acquired, waited, handedOff, timedOut, busy, unavailable atomic.Uint64
	// onWait, when set by tests, runs when a caller starts waiting for a
	// lock another session holds.
	onWait func(key string)
}

// Open connects a pool of opt.Conns connections to databaseURL and names
// the locks after its schema (current_schema(), the store's). It fails
// when Postgres does not answer: the store it shares opened first.
func Open(ctx context.Context, databaseURL string, opt Options) (*Locker, error) {
	d := DefaultOptions()
	if opt.Conns < 1 || opt.Timeout <= 0 || opt.PollMin <= 0 || opt.PollMax < opt.PollMin {
		return nil, fmt.Errorf("pglock: options %+v: Conns, Timeout and PollMin must be positive and PollMax at least PollMin (defaults %+v)", opt, d)
	}
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, errors.New("pglock: parsing database-url failed")
	}
	cfg.MaxConns, cfg.MinConns = opt.Conns, 0
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pglock: %w", err)
	}
	var schema string
	qctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	if err := pool.QueryRow(qctx, "SELECT current_schema()").Scan(&schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pglock: finding the store's schema: %w", err)
	}
	return &Locker{pool: pool, ns: schema, opt: opt, slots: make(chan struct{}, opt.Conns)}, nil
}

// Close closes the pool. Locks still held are freed with their sessions.
func (l *Locker) Close() { l.pool.Close() }

// ID is the advisory lock id of key in schema (see the package comment).
func ID(schema, key string) int64 {
	h := sha256.New()
	for _, s := range []string{"pkgscope fill lock", schema, key} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return int64(binary.BigEndian.Uint64(h.Sum(nil)))
}

// Acquire implements fill.Lock.
func (l *Locker) Acquire(ctx context.Context, key string, ready func(context.Context) bool) (func(), error) {
	id := ID(l.ns, key)
	release, err := l.try(ctx, id)
	if errors.Is(err, ErrBusy) {
		l.busy.Add(1)
	}
	if err != nil || release != nil {
		return release, err
	}
	l.waited.Add(1)
	if l.onWait != nil {
		l.onWait(key)
	}
	release, err = l.wait(ctx, id, ready)
	if err != nil && ctx.Err() != nil {
		l.timedOut.Add(1)
	}
	return release, err
}

// wait polls for the lock another session holds until it is free, ready
// reports true (nil, nil) or ctx ends.
func (l *Locker) wait(ctx context.Context, id int64, ready func(context.Context) bool) (func(), error) {
	backoff := l.opt.PollMin
	for {
		if ready(ctx) {
			l.handedOff.Add(1)
			return nil, nil
		}
		// ErrBusy here keeps waiting: this caller found the lock held, and
		// ready ends the wait when the holder commits.
		if release, err := l.try(ctx, id); (err != nil && !errors.Is(err, ErrBusy)) || release != nil {
			return release, err
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		backoff = min(2*backoff, l.opt.PollMax)
	}
}

// try takes the lock if it is free: its release func when taken, nil and
// no error when another session holds it.
func (l *Locker) try(ctx context.Context, id int64) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
	default:
		return nil, ErrBusy
	}
	qctx, cancel := context.WithTimeout(ctx, l.opt.Timeout)
	defer cancel()
	conn, err := l.pool.Acquire(qctx)
	if err != nil {
		<-l.slots
		return nil, l.failed(ctx, err)
	}
	var got bool
	if err := conn.QueryRow(qctx, "SELECT pg_try_advisory_lock($1)", id).Scan(&got); err != nil {
		// The statement may have taken the lock before it failed: close
		// the session rather than pool a connection that may hold it.
		conn.Hijack().Close(context.Background())
		<-l.slots
		return nil, l.failed(ctx, err)
	}
	if !got {
		conn.Release()
		<-l.slots
		return nil, nil
	}
	l.acquired.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			defer func() { <-l.slots }()
			// Detached: the lock is freed even when the fill's context has
			// ended. If the unlock fails, closing the session frees it.
			rctx, cancel := context.WithTimeout(context.Background(), l.opt.Timeout)
			defer cancel()
			var unlocked bool
			if err := conn.QueryRow(rctx, "SELECT pg_advisory_unlock($1)", id).Scan(&unlocked); err != nil || !unlocked {
				conn.Hijack().Close(rctx)
				return
			}
			conn.Release()
		})
	}, nil
}

// failed is a try's error: ctx's own when the caller gave up, else
// Postgres is not answering (the fill goes on without this lock).
func (l *Locker) failed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	l.unavailable.Add(1)
	return fmt.Errorf("pglock: taking a fill lock: %w", err)
}

// Stats are counters since start, for metrics.
type Stats struct {
	// Acquired counts locks taken; Waited, callers that found the lock
	// held; HandedOff, waiters that found the version ready and never
	// needed the lock; TimedOut, waiters whose context ended first (the
	// fill's timeout); Busy, callers answered ErrBusy because every
	// connection held a lock (Options.Conns), whose fill went on without
	// this lock (a waiter's tries that find them so keep waiting and are
	// not counted); Unavailable, tries that failed for want of Postgres
	// (Options.Timeout included).
	Acquired, Waited, HandedOff, TimedOut, Busy, Unavailable uint64
}

// Stats returns the counters.
func (l *Locker) Stats() Stats {
	return Stats{Acquired: l.acquired.Load(), Waited: l.waited.Load(), HandedOff: l.handedOff.Load(),
		TimedOut: l.timedOut.Load(), Busy: l.busy.Load(), Unavailable: l.unavailable.Load()}
}
