package fill

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// DefaultMaxFills is how many distinct versions one process fetches and
// ingests at once by default: 8. Each holds up to 32 MiB of ingest arenas
// (two arenas of 2 × ingest.Limits.BatchBytes, 8 MiB), so 8 take 256 MiB,
// the fill budget's default (DefaultMaxFillBytes), where 200 at once took
// about 6 GiB; their bytes beyond that (a body bigger than a batch, its
// write-back, the index builds) are weighed by the budget; and on a
// 2-core machine a fill is
// mostly CPU (unpack, hash, compress: over 60% of a warm job's time in
// bench/warm), so more than a few per core would only queue for the CPU
// while holding their memory, spool and registry connections.
const DefaultMaxFills = 8

// DefaultMaxFillWaiters is how many more fills may wait for a slot by
// default: 64, eight rounds of DefaultMaxFills. A waiter holds only its
// goroutine and its callers' requests (bounded by max-connections); past
// eight rounds a caller is better told to come back (503, Retry-After)
// than held for most of fill-timeout behind large versions.
const DefaultMaxFillWaiters = 64

// busyRetryAfter is the Retry-After of a refused fill: a typical cold
// fill takes seconds, so a slot is likely free by then.
const busyRetryAfter = 5 * time.Second

// ErrBusy is what a fill refused by Slots wraps (inside an
// *unavailable.Error, so the API answers 503 with Retry-After): every
// slot was taken and as many fills as allowed were waiting. It says
// nothing about the version, which is not recorded as failed.
var ErrBusy = errors.New("this mirror is fetching as many versions as it may at once")

// Slots bound the cold fills in flight in one process (Options.Slots):
// at most max fetch and ingest at once, at most waiters more wait for a
// slot (in arrival order: semaphore.Weighted is FIFO), and a fill past
// those is refused at once with ErrBusy. A waiting fill gives up when
// its context ends (the fill's own fill-timeout, not its callers').
type Slots struct {
	sem        *semaphore.Weighted
	max        int
	maxWaiters int64
	inUse      atomic.Int64
	waiting    atomic.Int64
	refused    atomic.Uint64
	onWait     func() // tests: called once a fill waits
}

// NewSlots returns n slots with room for waiters more fills to wait; n
// below 1 is 1 and waiters below 0 is 0 (internal/config refuses both).
func NewSlots(n, waiters int) *Slots {
	n, waiters = max(n, 1), max(waiters, 0)
	return &Slots{sem: semaphore.NewWeighted(int64(n)), max: n, maxWaiters: int64(waiters)}
}

// SlotStats are Slots' numbers for metrics: the bounds, the fills holding
// a slot and waiting for one now, and the fills refused since start.
type SlotStats struct {
	Max, MaxWaiters, InUse, Waiting int
	Refused                         uint64
}

// Stats returns the slots' numbers; a nil *Slots has none.
func (s *Slots) Stats() SlotStats {
	if s == nil {
		return SlotStats{}
	}
	return SlotStats{Max: s.max, MaxWaiters: int(s.maxWaiters), InUse: int(s.inUse.Load()), Waiting: int(s.waiting.Load()), Refused: s.refused.Load()}
}

// acquire takes a slot, waiting for one while fewer than maxWaiters wait;
// it returns the slot's release, or an *unavailable.Error wrapping
// ErrBusy, or ctx's error.
func (s *Slots) acquire(ctx context.Context) (release func(), err error) {
	if !s.sem.TryAcquire(1) {
		if s.waiting.Add(1) > s.maxWaiters {
			s.waiting.Add(-1)
			s.refused.Add(1)
			return nil, &unavailable.Error{Source: unavailable.Registry, RetryAfter: busyRetryAfter,
				Err: fmt.Errorf("%w (%d fetching, %d more waiting); retry shortly", ErrBusy, s.max, s.maxWaiters)}
		}
		if s.onWait != nil {
			s.onWait()
		}
		err := s.sem.Acquire(ctx, 1)
		s.waiting.Add(-1)
		if err != nil {
			return nil, fmt.Errorf("waiting for a fill slot: %w", err)
		}
	}
	s.inUse.Add(1)
	return func() { s.inUse.Add(-1); s.sem.Release(1) }, nil
}

// slotted is the link that takes a slot before the fill goes on.
func slotted(s *Slots, next Filler) Filler {
	return FillerFunc(func(ctx context.Context, name, version string) error {
		release, err := s.acquire(ctx)
		if err != nil {
			return err
		}
		defer release()
		return next.Fill(ctx, name, version)
	})
}
