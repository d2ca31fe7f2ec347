// Package redistest gives each test its own key prefix on the real test
// Redis, so tests that use it run in parallel without seeing each other's
// keys, and leave nothing behind.
//
// The server comes from PKGSCOPE_TEST_REDIS_URL (default DefaultURL). A
// test that needs Redis fails, never skips, when it is not reachable: a
// suite that silently skips in CI is worse than none.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// EnvURL names the environment variable holding the test server's URL.
const EnvURL = "PKGSCOPE_TEST_REDIS_URL"

// DefaultURL is the test server used when EnvURL is unset: the local Redis
// the README tells developers to run.
const DefaultURL = "redis://127.0.0.1:6379/0"

// connectTimeout bounds how long a test waits for the server before
// failing; a local server answers in microseconds, a missing one should not
// hang the suite.
const connectTimeout = 5 * time.Second

// maxNameBytes keeps prefixes short; the random suffix keeps them unique.
const maxNameBytes = 40

// ServerURL returns the URL of the test server (EnvURL or DefaultURL).
func ServerURL() string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return DefaultURL
}

// Addr returns the host:port of the test server. It calls t.Fatalf on a
// malformed URL.
func Addr(t testing.TB) string {
	t.Helper()
	o, err := redis.ParseURL(ServerURL())
	if err != nil {
		t.Fatalf("redistest: %s=%q: %v", EnvURL, ServerURL(), err)
	}
	return o.Addr
}

// Client returns a client of the test server, closed when t ends. It calls
// t.Fatalf when the server does not answer a PING.
func Client(t testing.TB) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(ServerURL())
	if err != nil {
		t.Fatalf("redistest: %s=%q: %v", EnvURL, ServerURL(), err)
	}
	c := redis.NewClient(o)
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		t.Fatalf("redistest: Redis is not reachable at %s: start it (see README) or set %s: %v", o.Addr, EnvURL, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Prefix returns a key prefix unique to this run of t, such as
// "test:testcache_ttl_1a2b3c4d:". Every key under it is deleted when t ends.
// It calls t.Fatalf when the server is not reachable.
func Prefix(t testing.TB) string {
	t.Helper()
	c := Client(t)
	p := "test:" + prefixName(t.Name()) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		defer cancel()
		iter := c.Scan(ctx, 0, p+"*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("redistest: listing keys under %s: %v", p, err)
			return
		}
		if len(keys) > 0 {
			if err := c.Del(ctx, keys...).Err(); err != nil {
				t.Errorf("redistest: deleting keys under %s: %v", p, err)
			}
		}
	})
	return p
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9_]+`)

// prefixName squeezes a test name to [a-z0-9_] (so it is no SCAN pattern)
// and adds a random suffix, so reruns (-count=2) never collide.
func prefixName(testName string) string {
	var b [4]byte
	rand.Read(b[:])
	base := strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(testName), "_"), "_")
	if len(base) > maxNameBytes {
		base = base[:maxNameBytes]
	}
	return base + "_" + hex.EncodeToString(b[:])
}

// URL returns the test server's URL (for a process or a config that takes
// one).
func URL(t testing.TB) string {
	t.Helper()
	Client(t)
	return ServerURL()
}
