// Package redislock is the cross-replica link of the miss path
// (fill.Lock) on Redis: a lock per version, so that N replicas asked for
// the same cold version fetch it from the registry once.
//
// The lock is SET key token NX PX ttl, released by a script that deletes
// the key only if it still holds our token (so a holder whose lock expired
// never frees someone else's) and publishes the key on a release channel.
// Waiters subscribe to that channel and wake at once; they also re-check at
// a bounded backoff (PollMin doubling to PollMax), which covers a lost
// message and a holder that died and let its lock expire.
//
// Losing the lock is safe: writes are idempotent, and a second fetch of
// the same version ends in CommitVersion's ErrExists, which the fill
// treats as success. Redis unreachable: Acquire fails fast (redisconn's
// timeouts and breaker) and the fill goes on unlocked.
package redislock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pkgscope/pkgscope/internal/redisconn"
)

// Options configure a Locker.
type Options struct {
	// TTL is how long a lock lives unless released. It must outlast the
	// slowest fill (fill-timeout): a lock that expires mid-fill lets a
	// second replica download the same version (harmless, but the very
	// thing the lock is for).
	TTL time.Duration
	// PollMin and PollMax bound the backoff between re-checks while
	// waiting: the release message usually wakes a waiter first.
	PollMin, PollMax time.Duration
}

// DefaultOptions: TTL is fill-timeout's default (5m) plus a 30s margin.
func DefaultOptions() Options {
	return Options{TTL: 5*time.Minute + 30*time.Second, PollMin: 50 * time.Millisecond, PollMax: time.Second}
}

// Locker implements fill.Lock on Redis. It is safe for concurrent use.
type Locker struct {
	rc      *redisconn.Conn
	opt     Options
	channel string

	acquired, handedOff, waited, timedOut, unavailable atomic.Uint64

	// onWait, when set by tests, runs when a caller starts waiting for a
	// lock someone else holds.
	onWait func(key string)
}

// New returns a Locker on rc.
func New(rc *redisconn.Conn, opt Options) *Locker {
	return &Locker{rc: rc, opt: opt, channel: rc.Key("lock-released")}
}

// release deletes the lock only while it holds our token, and tells the
// waiters.
var release = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("DEL", KEYS[1])
  redis.call("PUBLISH", ARGV[2], ARGV[3])
  return 1
end
return 0`)

// Acquire implements fill.Lock.
func (l *Locker) Acquire(ctx context.Context, key string, ready func(context.Context) bool) (func(), error) {
	rkey := l.rc.Key("lock", key)
	var tok [16]byte
	rand.Read(tok[:])
	token := hex.EncodeToString(tok[:])

	got, err := l.try(ctx, rkey, token)
	if err != nil || got {
		return l.releaser(rkey, token, key, got), err
	}
	l.waited.Add(1)
	release, err := l.waitFor(ctx, rkey, token, key, ready)
	if err != nil && ctx.Err() != nil {
		l.timedOut.Add(1)
	}
	return release, err
}

// waitFor waits for the lock someone else holds until this caller takes
// it, ready reports true (nil, nil) or ctx ends.
func (l *Locker) waitFor(ctx context.Context, rkey, token, key string, ready func(context.Context) bool) (func(), error) {
	// Subscribe before the next check, so a release from now on is heard.
	sub := l.subscribe(ctx)
	defer func() {
		if sub != nil {
			sub.Close()
		}
	}()
	if l.onWait != nil {
		l.onWait(key)
	}
	backoff := l.opt.PollMin
	for {
		if ready(ctx) {
			l.handedOff.Add(1)
			return nil, nil
		}
		got, err := l.try(ctx, rkey, token)
		if err != nil || got {
			return l.releaser(rkey, token, key, got), err
		}
		if sub, err = l.wait(ctx, sub, key, backoff); err != nil {
			return nil, err
		}
		backoff = min(2*backoff, l.opt.PollMax)
	}
}

// try takes the lock if it is free.
func (l *Locker) try(ctx context.Context, rkey, token string) (bool, error) {
	var got bool
	err := l.rc.Do(ctx, func(ctx context.Context) (err error) {
		got, err = l.rc.Client.SetNX(ctx, rkey, token, l.opt.TTL).Result()
		return err
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return false, ctx.Err()
	case errors.Is(err, redis.ErrPoolTimeout):
		// No free connection in this process's pool (a stampede): not
		// an outage, so Acquire waits and tries again, as for a lock
		// another holds, instead of filling without the lock.
		return false, nil
	case err != nil:
		l.unavailable.Add(1)
		return false, err
	}
	if got {
		l.acquired.Add(1)
	}
	return got, nil
}

func (l *Locker) releaser(rkey, token, key string, got bool) func() {
	if !got {
		return nil
	}
	return func() {
		// Detached: the lock must be freed even when the fill's context
		// has ended. A failure leaves the lock to expire; waiters still
		// find the version with their periodic store check.
		_ = l.rc.Do(context.Background(), func(ctx context.Context) error {
			return release.Run(ctx, l.rc.Client, []string{rkey}, token, l.channel, key).Err()
		})
	}
}

// subscribe listens on the release channel; nil when it cannot (the
// waiter then re-checks on its backoff alone).
func (l *Locker) subscribe(ctx context.Context) *redis.PubSub {
	var sub *redis.PubSub
	err := l.rc.Do(ctx, func(octx context.Context) error {
		sub = l.rc.Client.Subscribe(ctx, l.channel)
		_, err := sub.Receive(octx) // the subscription's confirmation
		return err
	})
	if err != nil {
		if sub != nil {
			sub.Close()
		}
		return nil
	}
	return sub
}

// wait returns when key's release is announced, after d, or with ctx's
// error. It returns the subscription to keep using (nil once it failed).
func (l *Locker) wait(ctx context.Context, sub *redis.PubSub, key string, d time.Duration) (*redis.PubSub, error) {
	deadline := time.Now().Add(d)
	for sub != nil {
		left := time.Until(deadline)
		if left <= 0 {
			return sub, ctx.Err()
		}
		msg, err := sub.ReceiveTimeout(ctx, left)
		switch m := msg.(type) {
		case *redis.Message:
			if m.Payload == key {
				return sub, nil
			}
			continue // another version's release
		case nil:
		default:
			continue // a pong or subscription notice
		}
		if ctx.Err() != nil {
			return sub, ctx.Err()
		}
		if timeout(err) {
			return sub, nil
		}
		// The subscription broke: go on polling without it.
		sub.Close()
		sub = nil
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-t.C:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func timeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Stats are counters since start, for metrics.
type Stats struct {
	// Acquired counts locks taken; Waited, callers that found the lock
	// held (or no free connection in the pool); HandedOff, waiters that
	// found the version ready and never needed the lock; TimedOut,
	// waiters whose context ended first (the fill's timeout);
	// Unavailable, attempts that failed for want of Redis (the fill then
	// went on unlocked).
	Acquired, Waited, HandedOff, TimedOut, Unavailable uint64
}

// Stats returns the counters.
func (l *Locker) Stats() Stats {
	return Stats{Acquired: l.acquired.Load(), Waited: l.waited.Load(), HandedOff: l.handedOff.Load(),
		TimedOut: l.timedOut.Load(), Unavailable: l.unavailable.Load()}
}
