package redisconn

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pkgscope/pkgscope/internal/breaker"
)

// Breaker is a circuit breaker for Redis commands (internal/breaker's,
// opening at the first failure). Closed, it admits every command. The
// first failure opens it: for Cooldown every command fails at once with
// ErrUnavailable. After that, one command at a time is admitted as a
// probe; its success closes the breaker, its failure opens it for another
// Cooldown. It logs once when an incident starts and once when it ends.
type Breaker struct {
	b        *breaker.Breaker
	cooldown time.Duration
	log      *slog.Logger

	failures, rejected, incidents atomic.Uint64
}

// NewBreaker returns a closed breaker. now nil is time.Now; log nil
// discards.
func NewBreaker(cooldown time.Duration, now func() time.Time, log *slog.Logger) *Breaker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Breaker{b: breaker.New(breaker.Options{Failures: 1, Cooldown: cooldown, Now: now}), cooldown: cooldown, log: log}
}

// Allow admits a command, or returns ErrUnavailable while open. An
// admitted command must be reported with ReportResult.
func (b *Breaker) Allow() error {
	if _, err := b.b.Allow(); err != nil {
		b.rejected.Add(1)
		return ErrUnavailable
	}
	return nil
}

// ReportResult records the outcome of an admitted command. Any report
// frees the probe slot: commands are not told apart, and the next one
// after a report may probe.
func (b *Breaker) ReportResult(err error) {
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable):
		// The caller gave up: says nothing about Redis.
		b.b.Record(true, breaker.Neutral, nil)
	case errors.Is(err, redis.ErrPoolTimeout):
		// Every pooled connection was busy for Timeout: this process is
		// saturated (a stampede of requests), not Redis unreachable. A
		// Redis that stops answering fails the commands holding those
		// connections, and they open the breaker; opening it here as well
		// dropped the cross-replica fill lock under load.
		b.b.Record(true, breaker.Neutral, nil)
	case failed(err):
		b.failures.Add(1)
		if b.b.Record(true, breaker.Failure, err).Opened {
			b.incidents.Add(1)
			b.log.Warn("redis unavailable: serving without it", "err", err, "retry_in", b.cooldown)
		}
	default:
		if ch := b.b.Record(true, breaker.Success, nil); ch.Closed {
			b.log.Info("redis reachable again", "outage", ch.Outage.Round(time.Millisecond))
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
func (b *Breaker) Open() bool { return b.b.IsOpen() }

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
