// Package breaker is pkgscope's one circuit breaker. A circuit is closed
// (requests go through) until Options.Failures consecutive failures; then
// open for Options.Cooldown (requests are refused at once with an
// *OpenError saying how long is left); then half-open: Options.Probes
// requests go through as probes, and a success closes the circuit while a
// failure opens it for another cooldown.
//
// A Set keeps one circuit per key, and only for keys that failed since
// their last success, so it stays as small as the number of failing
// hosts; a Breaker is a Set of one. Three clients use it:
//
//	registry (internal/upstream)  a Set per host, 5 failures, 30 s, one probe
//	Redis (internal/redisconn)     1 failure, 30 s, one probe; logs an incident's start and end (Change)
//	MDN (internal/webdocs)         1 failure, 30 s, any number of requests after the cooldown
//
// What counts as a failure is the caller's to say (Outcome): the registry
// client counts only the absence of a usable answer, Redis only a command
// that got no reply. The clock is injected (Options.Now), so tests step
// time instead of sleeping.
package breaker

import (
	"fmt"
	"sync"
	"time"

	"github.com/pkgscope/pkgscope/internal/english"
)

// Outcome is what a finished request says about the health of what it
// asked.
type Outcome int

const (
	// Neutral says nothing (the caller gave up, the request was never
	// sent); it only frees the request's probe slot.
	Neutral Outcome = iota
	// Success closes the circuit and forgets its failures.
	Success
	// Failure counts against the circuit; at Options.Failures in a row it
	// opens for Options.Cooldown (again, when it was open already).
	Failure
)

// Options configure a Breaker or a Set.
type Options struct {
	// Failures is how many consecutive failures open the circuit; below 1
	// the breaker is off (Allow always admits).
	Failures int
	// Cooldown is how long an open circuit refuses requests.
	Cooldown time.Duration
	// Probes is how many requests at once go through after the cooldown
	// (half-open): 0 is one, negative is any number.
	Probes int
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// OpenError is a refusal: the circuit is open, or its probes are in
// flight.
type OpenError struct {
	// Failures is the count of consecutive failures so far.
	Failures int
	// Last is the last failure recorded.
	Last error
	// Until is when the cooldown ends.
	Until time.Time
	// Wait is the cooldown left; 0 when it has run out and the refusal is
	// for want of a probe slot.
	Wait time.Duration
}

func (e *OpenError) Error() string {
	return fmt.Sprintf("circuit open after %s (last: %v); next attempt in %s", english.Count(e.Failures, "consecutive failure"), e.Last, e.Wait)
}

// Change is what a Record changed.
type Change struct {
	// Opened: the circuit went from closed to open (an incident starts).
	Opened bool
	// Closed: it went from open to closed (the incident ends), after
	// being open for Outage.
	Closed bool
	Outage time.Duration
	// Until is when the cooldown ends, zero while the circuit is closed.
	Until time.Time
}

// circuit is one key's state. It exists only while the key has failures.
type circuit struct {
	failures  int       // consecutive, since the last success
	openUntil time.Time // when the current cooldown ends (failures >= Options.Failures)
	since     time.Time // when the circuit opened
	probes    int       // probes in flight
	last      error
}

// Set is one circuit per key. It is safe for concurrent use.
type Set[K comparable] struct {
	opt Options

	mu sync.Mutex
	m  map[K]*circuit
}

// NewSet returns a Set whose circuits are all closed.
func NewSet[K comparable](opt Options) *Set[K] {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Set[K]{opt: opt, m: map[K]*circuit{}}
}

// Allow asks to send one request for key. Admitted, err is nil and probe
// says whether the request holds a probe slot; either way it must be
// reported once with Record. Refused, err is an *OpenError.
func (s *Set[K]) Allow(key K) (probe bool, err error) {
	if s.opt.Failures < 1 {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.m[key]
	if c == nil || c.failures < s.opt.Failures {
		return false, nil
	}
	now := s.opt.Now()
	if left := c.openUntil.Sub(now); left > 0 {
		return false, &OpenError{Failures: c.failures, Last: c.last, Until: c.openUntil, Wait: left}
	}
	if s.opt.Probes < 0 {
		return false, nil
	}
	if c.probes >= max(s.opt.Probes, 1) {
		return false, &OpenError{Failures: c.failures, Last: c.last, Until: c.openUntil}
	}
	c.probes++
	return true, nil
}

// Record reports an admitted request's outcome for key. probe frees a
// probe slot (pass what Allow returned); why is the failure, kept for
// the next refusal's message.
func (s *Set[K]) Record(key K, probe bool, o Outcome, why error) Change {
	if s.opt.Failures < 1 {
		return Change{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.m[key]
	if probe && c != nil && c.probes > 0 {
		c.probes--
	}
	switch o {
	case Success:
		if c == nil {
			return Change{}
		}
		delete(s.m, key)
		if c.failures >= s.opt.Failures {
			return Change{Closed: true, Outage: s.opt.Now().Sub(c.since)}
		}
	case Failure:
		if c == nil {
			c = &circuit{}
			s.m[key] = c
		}
		c.failures++
		c.last = why
		if c.failures < s.opt.Failures {
			return Change{}
		}
		now := s.opt.Now()
		c.openUntil = now.Add(s.opt.Cooldown)
		ch := Change{Until: c.openUntil}
		if c.failures == s.opt.Failures {
			c.since = now
			ch.Opened = true
		}
		return ch
	}
	if c != nil && c.failures >= s.opt.Failures {
		return Change{Until: c.openUntil}
	}
	return Change{}
}

// IsOpen reports whether key's circuit is open or half-open.
func (s *Set[K]) IsOpen(key K) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.m[key]
	return s.opt.Failures >= 1 && c != nil && c.failures >= s.opt.Failures
}

// Breaker is a single circuit: a Set of one.
type Breaker struct{ s *Set[struct{}] }

// New returns a closed Breaker.
func New(opt Options) *Breaker { return &Breaker{s: NewSet[struct{}](opt)} }

// Allow is Set.Allow for the one circuit.
func (b *Breaker) Allow() (probe bool, err error) { return b.s.Allow(struct{}{}) }

// Record is Set.Record for the one circuit.
func (b *Breaker) Record(probe bool, o Outcome, why error) Change {
	return b.s.Record(struct{}{}, probe, o, why)
}

// IsOpen reports whether the circuit is open or half-open.
func (b *Breaker) IsOpen() bool { return b.s.IsOpen(struct{}{}) }
