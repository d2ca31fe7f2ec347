// Package locktest is the conformance suite of fill.Lock: every
// implementation (internal/redislock, internal/pglock) runs it against its
// real service, as two replicas see it.
package locktest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fill"
)

// Replicas are two Locks on one lock service, as two replicas see it.
type Replicas struct {
	A, B fill.Lock
	// OnWait installs on B a hook run when one of its callers starts
	// waiting for a lock another holds.
	OnWait func(func(key string))
	// Stats are B's counters.
	Stats func() Counts
}

// Counts are the counters every Lock keeps.
type Counts struct {
	// Acquired counts locks taken, Waited callers that found the lock
	// held, HandedOff waiters whose ready reported true, TimedOut waiters
	// whose context ended first.
	Acquired, Waited, HandedOff, TimedOut uint64
}

// guard bounds a wait for the lock, so a lock never handed over fails the
// test with a message instead of hanging until go test's timeout.
const guard = time.Minute

// Run runs the suite; setup opens a fresh pair for each test.
func Run(t *testing.T, setup func(t *testing.T) Replicas) {
	t.Run("OneHolderAtATimeAndReleaseHandsItOver", func(t *testing.T) { oneHolder(t, setup(t)) })
	t.Run("WaiterFindingTheVersionReadyNeedsNoLock", func(t *testing.T) { handOff(t, setup(t)) })
	t.Run("WaitingEndsWithTheContext", func(t *testing.T) { ctxEnds(t, setup(t)) })
}

func never(context.Context) bool  { return false }
func always(context.Context) bool { return true }

// Held reports whether another holder holds key's lock: a caller whose
// ready is always true takes a free lock at once and is handed off from a
// held one.
func Held(t *testing.T, l fill.Lock, key string) bool {
	t.Helper()
	r, err := l.Acquire(context.Background(), key, always)
	if err != nil {
		t.Fatal(err)
	}
	if r != nil {
		r()
		return false
	}
	return true
}

func oneHolder(t *testing.T, r Replicas) {
	ctx := context.Background()
	releaseA, err := r.A.Acquire(ctx, "pkg@1.0.0", never)
	if err != nil || releaseA == nil {
		t.Fatalf("a.Acquire = %v, %v", releaseA != nil, err)
	}
	waiting := make(chan struct{})
	r.OnWait(func(string) { close(waiting) })
	var released atomic.Bool
	done := make(chan error)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, guard)
		defer cancel()
		releaseB, err := r.B.Acquire(ctx, "pkg@1.0.0", never)
		if err == nil && releaseB == nil {
			err = errors.New("b was handed off, want the lock")
		}
		if err == nil && !released.Load() {
			err = errors.New("b took the lock while a held it")
		}
		if releaseB != nil {
			releaseB()
		}
		done <- err
	}()
	<-waiting
	// Another key is independent.
	if rel, err := r.B.Acquire(ctx, "pkg@2.0.0", never); err != nil || rel == nil {
		t.Fatalf("another version's lock: %v, %v", rel != nil, err)
	} else {
		rel()
	}
	released.Store(true)
	releaseA()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := r.Stats(); s.Waited != 1 || s.Acquired != 2 {
		t.Errorf("b counts %+v, want one wait and two locks", s)
	}
	if Held(t, r.A, "pkg@1.0.0") {
		t.Error("the lock is still held after both released it")
	}
}

func handOff(t *testing.T, r Replicas) {
	ctx := context.Background()
	releaseA, err := r.A.Acquire(ctx, "k", never)
	if err != nil || releaseA == nil {
		t.Fatalf("a.Acquire = %v, %v", releaseA != nil, err)
	}
	defer releaseA()
	// The holder commits the version once b waits.
	var committed atomic.Bool
	r.OnWait(func(string) { committed.Store(true) })
	rel, err := r.B.Acquire(ctx, "k", func(context.Context) bool { return committed.Load() })
	if err != nil || rel != nil {
		if rel != nil {
			rel()
		}
		t.Fatalf("b.Acquire with the version ready = %v, %v; want handed off", rel != nil, err)
	}
	if s := r.Stats(); s.HandedOff != 1 || s.Acquired != 0 {
		t.Errorf("b counts %+v, want one hand-off and no lock", s)
	}
}

func ctxEnds(t *testing.T, r Replicas) {
	release, err := r.A.Acquire(context.Background(), "k", never)
	if err != nil || release == nil {
		t.Fatalf("a.Acquire = %v, %v", release != nil, err)
	}
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	r.OnWait(func(string) { cancel() })
	if rel, err := r.B.Acquire(ctx, "k", never); rel != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire with a cancelled context = %v, %v", rel != nil, err)
	}
	if s := r.Stats(); s.Waited != 1 || s.TimedOut != 1 || s.Acquired != 0 {
		t.Errorf("b counts %+v, want one wait that timed out", s)
	}
}
