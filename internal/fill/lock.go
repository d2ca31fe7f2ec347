package fill

import (
	"context"
	"errors"

	"github.com/pkgscope/pkgscope/internal/store"
)

// Lock serialises the fill of one version across replicas, so that N
// replicas asked for the same cold version at once download it once. The
// in-process single-flight already joins callers within a replica; Lock is
// the link between replicas (internal/redislock implements it on Redis,
// internal/pglock on Postgres; Pair composes the two).
type Lock interface {
	// Acquire blocks until the caller holds the lock named key, then
	// returns its release func (safe to call once). While it waits it
	// calls ready each time the lock may have changed hands, and at a
	// bounded interval; when ready reports true it returns (nil, nil):
	// another holder did the work. It returns ctx's error when ctx ends,
	// and any other error when the lock service is unreachable, in which
	// case the caller goes on without the lock.
	Acquire(ctx context.Context, key string, ready func(context.Context) bool) (release func(), err error)
}

// Pair is a Lock made of two, taken in order: first (Redis, quick to hand
// off: its waiters wake on a release message), then second (Postgres,
// which the replicas reach whenever they reach the store). A caller that
// cannot take first (its lock service unreachable, its breaker open) takes
// second alone; one that cannot take second keeps first alone; it goes on
// unlocked only when neither answers.
//
// Every holder takes both, not second only as a fallback: a Redis breaker
// is per replica, so in a stampede under load one replica loses Redis (a
// read timeout) while the holder, on another replica, still has it. Had
// the holder taken only first, the replica without Redis would take second
// at once and download too (test/topology caught it: 2 downloads for 3
// replicas). Taking both costs one Postgres connection per fill in flight,
// bounded by the second lock's own pool (pglock.Options.Conns, beyond
// which it goes on with first alone).
//
// No deadlock: the order is always first then second, and nobody waits
// for first while holding second. Release frees second first, so a waiter
// woken by first's release finds second free.
func Pair(first, second Lock) Lock { return pair{first, second} }

type pair struct{ first, second Lock }

// Acquire implements Lock.
func (p pair) Acquire(ctx context.Context, key string, ready func(context.Context) bool) (func(), error) {
	r1, err1 := p.first.Acquire(ctx, key, ready)
	switch {
	case err1 != nil && ctx.Err() != nil:
		return nil, err1
	case err1 == nil && r1 == nil:
		return nil, nil // handed off
	}
	r2, err2 := p.second.Acquire(ctx, key, ready)
	switch {
	case r2 != nil && r1 != nil:
		return func() { r2(); r1() }, nil
	case r2 != nil:
		return r2, nil
	case r1 == nil && err2 != nil && ctx.Err() == nil:
		return nil, errors.Join(err1, err2) // neither lock service answered
	case r1 == nil:
		return nil, err2 // handed off (nil), or ctx ended
	case err2 == nil || ctx.Err() != nil:
		r1() // handed off while waiting for second, or ctx ended
		return nil, err2
	default:
		return r1, nil // second unreachable or busy: first alone
	}
}

// locked is the cross-replica link. Losing the lock (it expired during a
// fill slower than its TTL, or the lock service went down, or two
// replicas held different locks of a Pair: one only Redis' while its
// Postgres lock pool was full, the other only Postgres' while its Redis
// breaker was open) is safe: the next replica may fetch the same version
// again, and the store keeps exactly one commit (CommitVersion's ErrExists
// is success here).
type locked struct {
	lock Lock
	st   store.VersionReader
	next Filler
}

func (l *locked) Fill(ctx context.Context, name, version string) error {
	release, err := l.lock.Acquire(ctx, name+"@"+version, func(ctx context.Context) bool {
		v, err := l.st.Version(ctx, name, version)
		return err == nil && v.State == store.StateReady
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return err // the fill's own deadline ran out while waiting
	case err != nil:
		// The lock service is down: fill without it. Single-flight
		// still dedupes within this replica; the lock service logs the
		// outage once.
		return l.next.Fill(ctx, name, version)
	case release == nil:
		return nil // another replica committed it while we waited
	}
	defer release()
	return l.next.Fill(ctx, name, version)
}
