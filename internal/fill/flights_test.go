package fill_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// trackedFill starts a fill of name@1.0.0 through flights.Track(f) and a
// wrapper inside it that closes done once the fill returned: what a
// chain's outer wrappers (metrics, warm.OnMiss) see.
func trackedFill(t *testing.T, flights *fill.Flights, f fill.Filler, name string) (done chan struct{}, err *error) {
	t.Helper()
	done, err = make(chan struct{}), new(error)
	tracked := flights.Track(fill.FillerFunc(func(ctx context.Context, name, version string) error {
		defer close(done)
		*err = f.Fill(ctx, name, version)
		return *err
	}))
	go tracked.Fill(t.Context(), name, "1.0.0") //nolint:errcheck // read through err
	return done, err
}

// ended fails the test unless done is closed: what returned (Close, Wait)
// had waited for the fill.
func ended(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	default:
		t.Fatal(what + " returned while the fill was still running")
	}
}

// TestFlightsCloseCancelsFillsPastItsPatience: a fill still downloading
// when Close's patience ends is cancelled, and has returned (with its
// wrappers) when Close does, having stored nothing; a fill asked for
// afterwards is refused. Both say the mirror is shutting down, as a 503.
func TestFlightsCloseCancelsFillsPastItsPatience(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(t, "slow", "1.0.0")
	e.publish(t, "late", "1.0.0")
	arrived, release := e.reg.HoldTarballs("slow")
	defer release()
	flights := fill.NewFlights()
	f := e.filler(fill.Options{Timeout: time.Hour, Flights: flights})
	done, err := trackedFill(t, flights, f, "slow")
	<-arrived
	patience, cancel := context.WithCancel(t.Context())
	cancel() // none: cancel at once
	flights.Close(patience)
	ended(t, done, "Close")
	var unav *unavailable.Error
	if !errors.Is(*err, fill.ErrShutdown) || !errors.As(*err, &unav) {
		t.Errorf("the cancelled fill: %v, want an *unavailable.Error wrapping ErrShutdown", *err)
	}
	if _, err := e.st.Version(t.Context(), "slow", "1.0.0"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the cancelled fill left a record: %v", err)
	}
	for _, g := range []fill.Filler{flights.Track(f), f} { // refused by Track, and by the chain itself
		if err := g.Fill(t.Context(), "late", "1.0.0"); !errors.Is(err, fill.ErrShutdown) {
			t.Errorf("a fill after Close: %v, want ErrShutdown", err)
		}
	}
	if n := e.reg.TarballDownloads("late", "1.0.0"); n != 0 {
		t.Errorf("a fill after Close downloaded %d times", n)
	}
}

// TestFlightsCloseWaitsForFillsWithinItsPatience: Close lets a fill in
// flight finish while its patience lasts; the fill commits.
func TestFlightsCloseWaitsForFillsWithinItsPatience(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(t, "slow", "1.0.0")
	arrived, release := e.reg.HoldTarballs("slow")
	flights := fill.NewFlights()
	f := e.filler(fill.Options{Timeout: time.Hour, Flights: flights})
	done, err := trackedFill(t, flights, f, "slow")
	<-arrived
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		flights.Close(t.Context())
	}()
	release()
	<-closed
	ended(t, done, "Close")
	if *err != nil {
		t.Errorf("the fill Close waited for: %v", *err)
	}
	if v, err := e.st.Version(t.Context(), "slow", "1.0.0"); err != nil || v.State != store.StateReady {
		t.Errorf("after Close: %+v, %v; want the version stored", v, err)
	}
}

// TestFlightsWaitReturnsOnceIdle: Wait returns once every tracked fill
// (its wrappers included) has returned.
func TestFlightsWaitReturnsOnceIdle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(t, "slow", "1.0.0")
	arrived, release := e.reg.HoldTarballs("slow")
	flights := fill.NewFlights()
	if err := flights.Wait(t.Context()); err != nil {
		t.Fatalf("Wait with nothing in flight: %v", err)
	}
	f := e.filler(fill.Options{Timeout: time.Hour, Flights: flights})
	done, err := trackedFill(t, flights, f, "slow")
	<-arrived
	short, cancel := context.WithCancel(t.Context())
	cancel()
	if err := flights.Wait(short); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait while a fill is held: %v, want its context's error", err)
	}
	release()
	if err := flights.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	ended(t, done, "Wait")
	if *err != nil {
		t.Error(*err)
	}
}
