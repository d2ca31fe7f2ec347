package fill

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/store"
)

// DefaultMaxFillBytes is the default of the setting max-fill-bytes (the
// indexer's too), Budget's bound: 256 MiB. On the bench/warm lockfile (8
// workers) peak RSS was 3.4 GB with no budget, 3.2 GB with 1 GiB and
// 1.3 GB with 256 MiB, at the same speed (the work is CPU-bound on 2
// cores either way). Issue 25 §1: four cold versions each one 200 MiB
// line took 1.9 GiB of heap when only warm jobs were weighed; weighed
// together they stay under 512 MiB over idle (test/reliability
// TestColdFillsWeighedByBytes).
const DefaultMaxFillBytes = 256 << 20

// FreeAfterBytes is the charge past which giving it back also returns
// the freed memory to the system (debug.FreeOSMemory): 64 MiB. Go's
// scavenger returns a heap that shrank by hundreds of MiB over minutes
// (four 200 MiB fills were still held 60 s later); a full collection
// costs a few milliseconds next to the seconds such a fill takes, and
// ordinary fills (the median version unpacks to well under 1 MiB) never
// reach it.
const FreeAfterBytes = 64 << 20

// Budget is the one memory budget of every fill in a process
// (Options.Budget): a caller's miss, a warm job, and the search index
// builds after them (search.Options.Budget) take their bytes from it
// before they read a tarball's body or a version's bodies, and give them
// back when they end. A fill is weighed by the version's declared
// dist.unpackedSize before its download, else by 4 times the tarball's
// Content-Length, else the whole budget, and then, as its bodies arrive,
// by the bytes actually read, when more (Charge.Grow). A charge is at
// most the whole budget: a version larger than it runs alone. A charge
// waiting holds none of the budget (Grow gives back what it held first);
// the fill waiting for it still holds its slot and its cross-replica lock
// (fill.go).
type Budget struct {
	sem     *semaphore.Weighted
	max     int64
	inUse   atomic.Int64
	waiting atomic.Int64
	freed   atomic.Uint64
	free    func() // debug.FreeOSMemory; tests count it
	onWait  func() // tests: called once a charge waits
}

// NewBudget returns a budget of n bytes; below 1 is 1 (internal/config
// refuses it).
func NewBudget(n int64) *Budget {
	n = max(n, 1)
	return &Budget{sem: semaphore.NewWeighted(n), max: n, free: debug.FreeOSMemory}
}

// BudgetStats are a Budget's numbers for metrics: its bound, the bytes
// charged now, the charges waiting, and how many times large charges
// returned memory to the system.
type BudgetStats struct {
	Max, InUse int64
	Waiting    int
	Freed      uint64
}

// Stats returns the budget's numbers; a nil *Budget has none.
func (b *Budget) Stats() BudgetStats {
	if b == nil {
		return BudgetStats{}
	}
	return BudgetStats{Max: b.max, InUse: b.inUse.Load(), Waiting: int(b.waiting.Load()), Freed: b.freed.Load()}
}

// Charge is the bytes one fill or build holds of a Budget. A nil *Charge
// (from a nil *Budget) holds nothing and its methods do nothing.
type Charge struct {
	b    *Budget
	mu   sync.Mutex
	held int64
	peak int64 // the most held, for FreeAfterBytes
}

// Take charges n bytes (at least 1, at most the whole budget; n < 0, not
// known, takes the whole budget), waiting while others hold the budget,
// until ctx ends. The time waited is told to the context's observer
// (ObserveBudget).
func (b *Budget) Take(ctx context.Context, n int64) (*Charge, error) {
	if b == nil {
		return nil, nil
	}
	c := &Charge{b: b}
	if err := c.Grow(ctx, n); err != nil {
		return nil, err
	}
	return c, nil
}

// Grow makes c hold at least n bytes (clamped as Take's): the bytes a
// fill actually read when they pass what it declared. When the budget
// cannot give the difference at once, c gives back what it holds and
// waits for all of it, so that two charges that each hold part of the
// budget never wait for each other.
func (c *Charge) Grow(ctx context.Context, n int64) error {
	if c == nil {
		return nil
	}
	b := c.b
	if n < 0 || n > b.max {
		n = b.max
	}
	n = max(n, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if n <= c.held {
		return nil
	}
	if b.sem.TryAcquire(n - c.held) {
		b.inUse.Add(n - c.held)
		c.held = n
		c.peak = max(c.peak, n)
		return nil
	}
	if c.held > 0 {
		b.sem.Release(c.held)
		b.inUse.Add(-c.held)
		c.held = 0
	}
	b.waiting.Add(1)
	if b.onWait != nil {
		b.onWait()
	}
	start := time.Now()
	err := b.sem.Acquire(ctx, n)
	b.waiting.Add(-1)
	if obs, ok := ctx.Value(observerKey{}).(func(time.Duration)); ok {
		obs(time.Since(start))
	}
	if err != nil {
		return fmt.Errorf("waiting for max-fill-bytes: %w", err)
	}
	b.inUse.Add(n)
	c.held = n
	c.peak = max(c.peak, n)
	return nil
}

// Release gives back what c holds. When c ever held FreeAfterBytes or
// more, the memory its fill freed is returned to the system. It is
// idempotent.
func (c *Charge) Release() {
	if c == nil {
		return
	}
	c.mu.Lock()
	held, peak := c.held, c.peak
	c.held, c.peak = 0, 0
	c.mu.Unlock()
	if held > 0 {
		c.b.sem.Release(held)
		c.b.inUse.Add(-held)
	}
	if peak >= FreeAfterBytes {
		c.b.freed.Add(1)
		c.b.free()
	}
}

// Hold is Take for the search index builds (search.Budget): release
// gives the bytes back.
func (b *Budget) Hold(ctx context.Context, n int64) (release func(), err error) {
	c, err := b.Take(ctx, n)
	if err != nil {
		return nil, err
	}
	return c.Release, nil
}

type observerKey struct{}

// ObserveBudget returns ctx with f told how long each wait for the
// Budget took within it (the warm jobs' JobTiming.Queued).
func ObserveBudget(ctx context.Context, f func(waited time.Duration)) context.Context {
	return context.WithValue(ctx, observerKey{}, f)
}

// charged is a store.Writer whose PutBlobs first grows its fill's charge
// to the body bytes written so far: a version that declared less than it
// holds (or nothing) is weighed by its real bytes from then on.
type charged struct {
	store.Writer
	c     *Charge
	total int64
}

func (w *charged) PutBlobs(ctx context.Context, blobs []store.Blob) error {
	for _, b := range blobs {
		w.total += int64(len(b.Data))
	}
	if err := w.c.Grow(ctx, w.total); err != nil {
		return err
	}
	return w.Writer.PutBlobs(ctx, blobs)
}

// PutStream grows the charge by the streamed body's bytes, like PutBlobs,
// and hands it on when the writer below streams (ingest.Streamer); else
// it declines, and the ingest reads the body whole and puts it.
func (w *charged) PutStream(ctx context.Context, n int64, r io.Reader, sum func() store.Hash) error {
	s, ok := w.Writer.(ingest.Streamer)
	if !ok {
		return ingest.ErrNotStreamed
	}
	if err := w.c.Grow(ctx, w.total+n); err != nil {
		return err
	}
	if err := s.PutStream(ctx, n, r, sum); err != nil {
		return err
	}
	w.total += n
	return nil
}
