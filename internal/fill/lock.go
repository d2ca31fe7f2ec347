package fill

import (
	"context"

	"github.com/pkgscope/pkgscope/internal/store"
)

// Lock serialises the fill of one version across replicas, so that N
// replicas asked for the same cold version at once download it once. The
// in-process single-flight already joins callers within a replica; Lock is
// the link between replicas (internal/redislock implements it on Redis).
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

// locked is the cross-replica link. Losing the lock (it expired during a
// fill slower than its TTL, or the lock service went down) is safe: the
// next replica may fetch the same version again, and the store keeps
// exactly one commit (CommitVersion's ErrExists is success here).
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
