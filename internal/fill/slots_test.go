package fill_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// TestFillSlotsBoundColdFills: with one slot and room for one waiter, a
// held fill takes the slot, a second version waits, a third is refused at
// once (503 with Retry-After, never a 404, not recorded as failed), and a
// caller joining the held fill takes no slot; once the held fill ends the
// waiter goes on.
func TestFillSlotsBoundColdFills(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, name := range []string{"held", "waits", "refused"} {
		e.publish(t, name, "1.0.0")
	}
	slots := fill.NewSlots(1, 1)
	waited := make(chan struct{}, 4)
	fill.OnWait(slots, func() { waited <- struct{}{} })
	f := e.filler(fill.Options{Timeout: time.Minute, Slots: slots})
	arrived := e.reg.Arrived("held")
	release := e.reg.Hold("held")
	defer release()

	fillAsync := func(name string) <-chan error {
		done := make(chan error, 1)
		go func() { done <- f.Fill(t.Context(), name, "1.0.0") }()
		return done
	}
	held := fillAsync("held")
	<-arrived // held@1.0.0 holds the only slot
	waiting := fillAsync("waits")
	<-waited
	if s := slots.Stats(); s != (fill.SlotStats{Max: 1, MaxWaiters: 1, InUse: 1, Waiting: 1}) {
		t.Errorf("stats with one fill held and one waiting: %+v", s)
	}

	err := f.Fill(t.Context(), "refused", "1.0.0")
	var ue *unavailable.Error
	if !errors.As(err, &ue) || !errors.Is(err, fill.ErrBusy) {
		t.Fatalf("a third version past the waiters: %v, want an *unavailable.Error wrapping fill.ErrBusy", err)
	}
	if c := explore.Classify(err); c.Status != http.StatusServiceUnavailable || c.RetryAfter <= 0 {
		t.Errorf("the refusal is answered %+v, want 503 with Retry-After", c)
	}
	if _, err := e.st.Version(t.Context(), "refused", "1.0.0"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused version left a record: %v", err)
	}

	// Joins the held fill in the single-flight, before any slot: were it
	// to take one it would be refused (the slot and the waiter's room are
	// taken). It is started before the release, so it joins the flight or,
	// if it runs after the commit, is a store hit; either way it never
	// reaches the slots, which the counts below check.
	joined := fillAsync("held")
	release()
	for name, done := range map[string]<-chan error{"held": held, "joining held": joined, "waits": waiting} {
		if err := <-done; err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if s := slots.Stats(); s != (fill.SlotStats{Max: 1, MaxWaiters: 1, Refused: 1}) {
		t.Errorf("stats once every fill ended: %+v, want only the third version refused", s)
	}
	if len(waited) != 0 {
		t.Errorf("%d more fills waited for a slot, want only waits@1.0.0", len(waited))
	}
	for _, name := range []string{"held", "waits"} {
		if n := e.reg.TarballDownloads(name, "1.0.0"); n != 1 {
			t.Errorf("%s: %d downloads, want 1", name, n)
		}
	}
	// Not remembered as a failure: asked again with a slot free, it fills.
	if err := f.Fill(t.Context(), "refused", "1.0.0"); err != nil {
		t.Errorf("the refused version asked again: %v", err)
	}
}

// TestFillSlotWaiterGivesUpWithItsContext: a fill waiting for a slot
// returns its context's error when that ends, and no longer counts as
// waiting.
func TestFillSlotWaiterGivesUpWithItsContext(t *testing.T) {
	t.Parallel()
	slots := fill.NewSlots(1, 1)
	release, err := slots.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithCancel(t.Context())
	fill.OnWait(slots, cancel)
	if _, err := slots.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("a waiter whose context ended: %v, want context.Canceled", err)
	}
	if s := slots.Stats(); s != (fill.SlotStats{Max: 1, MaxWaiters: 1, InUse: 1}) {
		t.Errorf("stats after the waiter gave up: %+v", s)
	}
}
