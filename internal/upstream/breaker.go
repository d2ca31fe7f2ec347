package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/pkgscope/pkgscope/internal/breaker"
	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// ErrCircuitOpen means a request was not sent because its host's circuit
// breaker is open: the host failed Config.BreakerFailures times in a row
// and its Config.BreakerCooldown has not run out. It always comes inside
// an *unavailable.Error whose RetryAfter is the cooldown left.
var ErrCircuitOpen = errors.New("circuit breaker open")

// probeRetryAfter is what callers are told while the one probe request
// after a cooldown is in flight: the probe ends within RequestTimeout, but
// usually within a second, and then the host is either closed (serving)
// or open again for a whole cooldown.
const probeRetryAfter = time.Second

// breakers keeps one circuit breaker per registry host ("host:port")
// (internal/breaker's Set). A host is closed (requests go through) until
// threshold consecutive failures; then open for cooldown (requests are
// refused at once); then half-open: one request goes through as a probe,
// whose success closes the breaker and whose failure opens it for another
// cooldown.
//
// Entries exist only for hosts that have failed since their last success,
// and hosts are the registries and AllowedTarballHosts (dist.tarball is
// checked before the breaker), so the map stays small.
type breakers struct {
	set      *breaker.Set[string]
	cooldown time.Duration
}

// breakerKey is the breaker of u's host: "host:port" with the scheme's
// default port, so "h" and "h:443" share one under https.
func breakerKey(u *url.URL) string {
	if hp, ok := hostPort(u); ok {
		return hp
	}
	return u.Host
}

// outcome is what a finished request says about its host's health.
type outcome = breaker.Outcome

const (
	// neutral: says nothing (the caller gave up, the request was never
	// sent); it only frees the probe slot.
	neutral = breaker.Neutral
	// healthy: the host answered over HTTP.
	healthy = breaker.Success
	// failed: no answer, a cut body, or a 429.
	failed = breaker.Failure
)

func newBreakers(threshold int, cooldown time.Duration, now func() time.Time) *breakers {
	return &breakers{set: breaker.NewSet[string](breaker.Options{Failures: threshold, Cooldown: cooldown, Now: now}), cooldown: cooldown}
}

// allow asks to send one request to host. It returns a done func that must
// be called once with the request's error (nil on success), or, when the
// breaker is open or its probe is in flight, an *unavailable.Error wrapping
// ErrCircuitOpen that the caller returns as it is.
func (b *breakers) allow(host, what string) (done func(error), err error) {
	probe, err := b.set.Allow(host)
	var oe *breaker.OpenError
	if errors.As(err, &oe) {
		retry := probeRetryAfter
		if oe.Wait > 0 {
			retry = oe.Wait.Round(time.Second)
		}
		return nil, b.refusal(what, oe, retry)
	}
	var once sync.Once
	return func(err error) {
		once.Do(func() {
			var why error
			if err != nil {
				why = errors.New(truncate(err.Error()))
			}
			b.set.Record(host, probe, classify(err), why)
		})
	}, nil
}

func (b *breakers) refusal(what string, oe *breaker.OpenError, retry time.Duration) error {
	retry = max(retry, time.Second) // Retry-After is whole seconds; 0 would invite a hammering
	return &unavailable.Error{Source: unavailable.Registry, RetryAfter: retry, Err: fmt.Errorf(
		"%s: %w for its host after %s (Config.BreakerFailures), last: %v; next attempt in %s (Config.BreakerCooldown %s)",
		what, ErrCircuitOpen, english.Count(oe.Failures, "consecutive failure"), oe.Last, retry, b.cooldown)}
}

// classify reads a request's error as news about its host. Only the
// absence of a usable HTTP answer counts against it: a refused, reset or
// timed-out connection, a body cut short, and 429 (a rate limit is set on
// the whole client, so every request would meet it). Other answers, 5xx
// included, prove the host is up and arrive at once: a 503 is often one
// package's (a packument too large for the registry's cache to render)
// and must not shut out every other package, and it already carries its
// own Retry-After to the caller. A 404, a 401, an oversized or garbled
// answer, an integrity mismatch are likewise one package's problem.
func classify(err error) outcome {
	if err == nil {
		return healthy
	}
	var ue *unavailable.Error
	if !errors.As(err, &ue) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTarballURL) {
			return neutral // the caller's own deadline, or never sent
		}
		return healthy // ErrNotFound, ErrTooLarge, ErrIntegrity
	}
	if errors.Is(err, ErrCircuitOpen) {
		return neutral
	}
	switch {
	case ue.Status == http.StatusTooManyRequests:
		return failed
	case ue.Status != 0:
		return healthy
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return healthy // the whole body arrived; it is just not a packument
	}
	return failed
}
