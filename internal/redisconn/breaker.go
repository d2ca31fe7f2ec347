package redisconn

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Breaker is a circuit breaker for Redis commands. Closed, it
// admits every command. The first failure opens it: for Cooldown every
// command fails at once with ErrUnavailable. After that, one command at a
// time is admitted as a probe; its success closes the breaker, its failure
// opens it for another Cooldown. It logs once when an incident starts and
// once when it ends.
type Breaker struct {
	cooldown time.Duration
	now      func() time.Time
	log      *slog.Logger

	mu      sync.Mutex
	open    bool
	since   time.Time // start of the incident
	until   time.Time // no probe before this
	probing bool

	failures, rejected, incidents atomic.Uint64
}

// NewBreaker returns a closed breaker. now nil is time.Now; log nil
// discards.
func NewBreaker(cooldown time.Duration, now func() time.Time, log *slog.Logger) *Breaker {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Breaker{cooldown: cooldown, now: now, log: log}
}

// Allow admits a command, or returns ErrUnavailable while open. An
// admitted command must be reported with ReportResult.
func (b *Breaker) Allow() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return nil
	}
	if b.probing || b.now().Before(b.until) {
		b.rejected.Add(1)
		return ErrUnavailable
	}
	b.probing = true
	return nil
}

// ReportResult records the outcome of an admitted command.
func (b *Breaker) ReportResult(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable):
		// The caller gave up: says nothing about Redis. A probe slot is
		// freed so the next command probes.
		b.probing = false
	case failed(err):
		b.failures.Add(1)
		now := b.now()
		b.until = now.Add(b.cooldown)
		b.probing = false
		if !b.open {
			b.open, b.since = true, now
			b.incidents.Add(1)
			b.log.Warn("redis unavailable: serving without it", "err", err, "retry_in", b.cooldown)
		}
	default:
		b.probing = false
		if b.open {
			b.open = false
			b.log.Info("redis reachable again", "outage", b.now().Sub(b.since).Round(time.Millisecond))
		}
	}
}

// failed reports errors that mean Redis did not answer. A nil reply
// (redis.Nil) and an error reply (WRONGTYPE, NOSCRIPT) are answers.
func failed(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) {
		return false
	}
	var re redis.Error
	return !errors.As(err, &re)
}

// Open reports whether the breaker is skipping Redis now.
func (b *Breaker) Open() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open
}

// BreakerStats are counters since start.
type BreakerStats struct {
	// Failures counts commands that failed for want of Redis.
	Failures uint64
	// Rejected counts commands skipped while the breaker was open.
	Rejected uint64
	// Incidents counts closed→open transitions.
	Incidents uint64
	// Open is true while Redis is being skipped.
	Open bool
}

// Stats returns the counters.
func (b *Breaker) Stats() BreakerStats {
	return BreakerStats{Failures: b.failures.Load(), Rejected: b.rejected.Load(), Incidents: b.incidents.Load(), Open: b.Open()}
}
