// Package redisconn opens the mirror's one optional Redis connection and
// keeps every use of it degradable: short dial/read/write timeouts, no
// retries, and a circuit breaker that stops trying for a cooldown after a
// failure. Every use (the cache, the fill lock, the rate limiter) runs its
// commands through Conn.Do, which consults the breaker.
//
// The breaker is not go-redis' Limiter hook: go-redis runs a new
// connection's handshake (HELLO) through the same Limiter, re-entrantly,
// so a single-probe breaker there would refuse its own probe's handshake.
//
// The budget behind the defaults: a warm read answers from the store in
// about a millisecond, so a Redis that is down or blackholed may cost one
// request at most DialTimeout+Timeout (200ms+200ms) before the breaker
// opens, and then nothing for Cooldown (5s), after which one probe is let
// through. A Redis outage is logged once when it starts and once when it
// ends, never per request.
package redisconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Options configure a Conn.
type Options struct {
	// URL is a redis:// or rediss:// URL (database number as its path).
	URL string
	// Prefix starts every key and channel name, so replicas of one
	// deployment share keys and other deployments (and tests) do not.
	Prefix string
	// DialTimeout bounds one connection attempt; Timeout one command's
	// write and its read. Both are short: Redis is an optimisation.
	DialTimeout, Timeout time.Duration
	// Cooldown is how long the breaker skips Redis after a failure.
	Cooldown time.Duration
	// PoolSize is the most connections kept open; 0 is go-redis' default
	// (10 per CPU).
	PoolSize int
	Logger   *slog.Logger
	// Now is the breaker's clock; nil is time.Now.
	Now func() time.Time
}

// DefaultOptions are the defaults (config.Default takes them). Redis is
// an optimisation: a warm read answers from the store in about a
// millisecond, so waiting longer than 200ms on Redis is a loss, and 5s of
// not trying keeps an outage from costing every request that wait.
func DefaultOptions() Options {
	return Options{Prefix: "pkgscope:", DialTimeout: 200 * time.Millisecond, Timeout: 200 * time.Millisecond, Cooldown: 5 * time.Second}
}

// Conn is an open, optional Redis connection. It is safe for concurrent
// use. Callers treat any error as "carry on without Redis".
type Conn struct {
	// Client runs commands; run them inside Do.
	Client *redis.Client
	// Breaker is the circuit breaker every command passes through.
	Breaker *Breaker
	prefix  string
	budget  time.Duration
}

// Open configures a client; it does not connect (Redis may come up after
// the mirror). It fails only on a malformed URL.
func Open(opt Options) (*Conn, error) {
	ro, err := redis.ParseURL(opt.URL)
	if err != nil {
		return nil, fmt.Errorf("parsing redis-url: %w", err)
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	b := NewBreaker(opt.Cooldown, opt.Now, opt.Logger)
	ro.DialTimeout = opt.DialTimeout
	ro.ReadTimeout = opt.Timeout
	ro.WriteTimeout = opt.Timeout
	// Waiting for a free pooled connection is bounded like a command.
	ro.PoolTimeout = opt.Timeout
	// One attempt: go-redis' defaults (3 command retries, 5 dial attempts
	// 100ms apart) would turn a dead Redis into seconds per request.
	ro.MaxRetries = -1
	ro.DialerRetries = 1
	ro.ContextTimeoutEnabled = true
	if opt.PoolSize > 0 {
		ro.PoolSize = opt.PoolSize
	}
	// Fewer round trips on connect, and no commands an older or
	// compatible server might refuse.
	ro.DisableIdentity = true
	ro.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	quietLibrary.Do(func() { redis.SetLogger(debugLogger{opt.Logger}) })
	return &Conn{
		Client:  redis.NewClient(ro),
		Breaker: b,
		prefix:  opt.Prefix,
		// A command may dial, write and read.
		budget: opt.DialTimeout + 2*opt.Timeout,
	}, nil
}

// Key joins parts under the configured prefix: Key("lock", "a@1") is
// "pkgscope:lock:a@1".
func (c *Conn) Key(parts ...string) string { return c.prefix + strings.Join(parts, ":") }

// Do runs fn unless the breaker is open (then it returns ErrUnavailable
// without touching the network), with ctx bounded by OpContext, and
// reports fn's outcome to the breaker. fn should run one command, or a
// short fixed sequence.
func (c *Conn) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	if err := c.Breaker.Allow(); err != nil {
		return err
	}
	octx, cancel := c.OpContext(ctx)
	defer cancel()
	err := fn(octx)
	if err != nil && ctx.Err() != nil {
		// The caller gave up; that says nothing about Redis.
		err = context.Canceled
	}
	c.Breaker.ReportResult(err)
	return err
}

// OpContext bounds one command by the dial, write and read timeouts, so no
// caller waits on Redis longer than that whatever its own deadline.
func (c *Conn) OpContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.budget)
}

// Budget is the most one command may take (see OpContext).
func (c *Conn) Budget() time.Duration { return c.budget }

// Close closes the client's connections.
func (c *Conn) Close() error { return c.Client.Close() }

// quietLibrary sends go-redis' own log lines (one per failed dial) to the
// debug level once: they would otherwise print per request during an
// outage, which the breaker already reports once. go-redis' logger is
// process-wide; the first Conn's logger is used.
var quietLibrary sync.Once

type debugLogger struct{ log *slog.Logger }

func (d debugLogger) Printf(ctx context.Context, format string, v ...any) {
	d.log.DebugContext(ctx, fmt.Sprintf(format, v...))
}

// ErrUnavailable is returned, without touching the network, while the
// breaker is open.
var ErrUnavailable = errors.New("redis unavailable: skipped for the breaker's cooldown")
