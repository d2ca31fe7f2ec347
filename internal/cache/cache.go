// Package cache keeps hot answers close: an in-process LRU (bounded by
// bytes) in front of an optional shared Redis layer, in front of the store
// and the resolver. It wraps them as decorators of the same interfaces, so
// package explore does not know it is there:
//
//	explore → Reader / Resolver → local LRU → Redis → store / resolver
//
// What is cached, and for how long:
//
//   - a version's file list and record (name@version, once ready) and small
//     file bodies (by sha256) are immutable once committed, so they never expire locally; in Redis
//     they live for RedisTTL, which bounds Redis' memory together with its
//     maxmemory policy;
//   - a resolution (name@spec → exact version) moves when a dist-tag or a
//     new version is published, so it lives ResolveTTL; an exact-version
//     spec resolves to itself forever;
//   - errors and misses are never cached: a version not yet in the store
//     must be seen as soon as a fill commits it, and an upstream outage is
//     no answer to remember.
//
// Redis is optional and degradable: every call is bounded by redisconn's
// timeouts and breaker, and any Redis error is a miss that goes on to the
// store. Bodies read back from Redis are checked against their sha256, so
// a corrupted or foreign entry can never be served as a package file.
package cache

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pkgscope/pkgscope/internal/redisconn"
)

// Options configure a Cache. Each mirrors a setting in package config.
type Options struct {
	// LocalBytes is the in-process layer's budget; 0 disables it.
	LocalBytes int64
	// MaxBodyBytes: larger file bodies are not cached in either layer.
	// Agents read mostly small sources and typings; a 256 KiB cap keeps
	// a 128 MiB local layer at 500+ bodies even in the worst case.
	MaxBodyBytes int64
	// MaxListBytes: file lists larger than this (decoded) are not cached.
	MaxListBytes int64
	// ResolveTTL is how long a range or dist-tag resolution is reused;
	// 0 disables caching them.
	ResolveTTL time.Duration
	// RedisTTL is how long an immutable entry lives in Redis.
	RedisTTL time.Duration
	// Now is the clock for TTLs; nil is time.Now.
	Now func() time.Time
}

// DefaultOptions are the defaults (config.Default takes them). 128 MiB
// holds the file lists and small bodies agents read most (a typical
// package's list is 5-50 KiB); bodies over 256 KiB are mostly bundles and
// maps, read rarely and in windows.
func DefaultOptions() Options {
	return Options{
		LocalBytes:   128 << 20,
		MaxBodyBytes: 256 << 10,
		MaxListBytes: 4 << 20,
		ResolveTTL:   time.Minute,
		RedisTTL:     24 * time.Hour,
	}
}

// Cache holds the layers and their counters. It is safe for concurrent
// use. Values it returns are shared between callers and must not be
// modified.
type Cache struct {
	opt   Options
	local *local           // nil when LocalBytes is 0
	rc    *redisconn.Conn  // nil without Redis
	now   func() time.Time // never nil

	localHits, localMisses           atomic.Uint64
	redisHits, redisMisses, redisErr atomic.Uint64
	loads                            atomic.Uint64
}

// New returns a Cache over rc (nil for no Redis layer).
func New(rc *redisconn.Conn, opt Options) *Cache {
	c := &Cache{opt: opt, rc: rc, now: opt.Now}
	if c.now == nil {
		c.now = time.Now
	}
	if opt.LocalBytes > 0 {
		c.local = newLocal(opt.LocalBytes, c.now)
	}
	return c
}

// LayerStats count lookups in one layer.
type LayerStats struct {
	Hits, Misses uint64
	// Errors counts lookups and writes that failed (Redis unreachable,
	// breaker open, corrupt entry); each also counts as a miss when it
	// was a lookup.
	Errors uint64
}

// Stats are counters since start, for metrics.
type Stats struct {
	Local LayerStats
	Redis LayerStats
	// Loads counts lookups that reached the store or the resolver.
	Loads uint64
	// LocalBytes and LocalEntries are the local layer's current size.
	LocalBytes   int64
	LocalEntries int
	// Redis is the Redis breaker's state; zero without Redis.
	Breaker redisconn.BreakerStats
}

// Stats returns the counters.
func (c *Cache) Stats() Stats {
	s := Stats{
		Local: LayerStats{Hits: c.localHits.Load(), Misses: c.localMisses.Load()},
		Redis: LayerStats{Hits: c.redisHits.Load(), Misses: c.redisMisses.Load(), Errors: c.redisErr.Load()},
		Loads: c.loads.Load(),
	}
	if c.local != nil {
		s.LocalBytes, s.LocalEntries = c.local.size()
	}
	if c.rc != nil {
		s.Breaker = c.rc.Breaker.Stats()
	}
	return s
}

// codec says how one kind of entry crosses to Redis and what it costs.
type codec[T any] struct {
	encode func(T) []byte
	decode func([]byte) (T, error)
	cost   func(T) int64
}

// uncacheable marks, locally, a key whose value is too large to cache
// (a body over MaxBodyBytes): later lookups go straight to the store
// instead of asking Redis for what it can never hold.
type uncacheable struct{}

// lookup answers key from the local layer, then Redis, then load. ttl 0
// means immutable. load reports whether its value may be cached.
func lookup[T any](ctx context.Context, c *Cache, key string, ttl time.Duration, cd codec[T],
	load func(context.Context) (T, bool, error)) (T, error) {
	if c.local != nil {
		v, _ := c.local.get(key)
		switch v := v.(type) {
		case T:
			c.localHits.Add(1)
			return v, nil
		case uncacheable:
			c.loads.Add(1)
			t, _, err := load(ctx)
			return t, err
		}
		c.localMisses.Add(1)
	}
	// Whether to write back to Redis: not when it just failed to answer
	// (the breaker is open now; the write would only count another error).
	writeBack := c.rc != nil
	if c.rc != nil {
		v, exp, r := redisGet(ctx, c, key, cd)
		switch r {
		case redisHit:
			if c.local != nil {
				c.local.put(key, v, cd.cost(v), exp)
			}
			return v, nil
		case redisDown:
			writeBack = false
		}
	}
	c.loads.Add(1)
	v, cacheable, err := load(ctx)
	if err != nil {
		return v, err
	}
	if !cacheable {
		if c.local != nil {
			c.local.put(key, uncacheable{}, 0, time.Time{})
		}
		return v, nil
	}
	var exp time.Time
	if ttl > 0 {
		exp = c.now().Add(ttl)
	}
	if c.local != nil {
		c.local.put(key, v, cd.cost(v), exp)
	}
	if writeBack {
		c.redisSet(ctx, key, seal(cd.encode(v), exp), ttl)
	}
	return v, nil
}

// redisKey names key in Redis: under the prefix, with a blob's raw digest
// spelt in hex.
func redisKey(rc *redisconn.Conn, key string) string {
	if digest, ok := strings.CutPrefix(key, "blob:"); ok {
		key = "blob:" + hex.EncodeToString([]byte(digest))
	}
	return rc.Key("cache", key)
}

type redisResult int

const (
	redisMiss redisResult = iota // absent, expired or corrupt
	redisHit
	redisDown // unreachable or skipped by the breaker
)

// redisGet returns a live entry from Redis. Any failure is a miss: an
// unreachable Redis (counted as an error, logged by the breaker once per
// outage), a corrupt entry, or one expired by our clock.
func redisGet[T any](ctx context.Context, c *Cache, key string, cd codec[T]) (v T, expires time.Time, r redisResult) {
	var b []byte
	found := false
	err := c.rc.Do(ctx, func(ctx context.Context) (err error) {
		b, err = c.rc.Client.Get(ctx, redisKey(c.rc, key)).Bytes()
		if errors.Is(err, redis.Nil) {
			return nil
		}
		found = err == nil
		return err
	})
	switch {
	case err != nil:
		c.redisErr.Add(1)
		c.redisMisses.Add(1)
		return v, expires, redisDown
	case !found:
		c.redisMisses.Add(1)
		return v, expires, redisMiss
	}
	payload, expires, err := unseal(b)
	if err == nil && !expires.IsZero() && !c.now().Before(expires) {
		c.redisMisses.Add(1)
		return v, expires, redisMiss
	}
	if err == nil {
		v, err = cd.decode(payload)
	}
	if err != nil {
		// Overwritten by the next load; never served.
		c.redisErr.Add(1)
		c.redisMisses.Add(1)
		return v, expires, redisMiss
	}
	c.redisHits.Add(1)
	return v, expires, redisHit
}

// redisSet stores an entry for ttl (RedisTTL for immutable entries). A
// failure only costs the next replica a store read.
func (c *Cache) redisSet(ctx context.Context, key string, value []byte, ttl time.Duration) {
	if ttl <= 0 {
		ttl = c.opt.RedisTTL
	}
	err := c.rc.Do(context.WithoutCancel(ctx), func(ctx context.Context) error {
		return c.rc.Client.Set(ctx, redisKey(c.rc, key), value, ttl).Err()
	})
	if err != nil {
		c.redisErr.Add(1)
	}
}
