package fill

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// ErrShutdown is what a fill ended by Flights.Close wraps (inside an
// *unavailable.Error, so the API answers 503 with Retry-After), and a fill
// asked for once Close began: the process is shutting down.
var ErrShutdown = errors.New("this mirror is shutting down")

// shutdownRetryAfter is the Retry-After of ErrShutdown: another replica,
// or this one restarted, answers within seconds.
const shutdownRetryAfter = 5 * time.Second

// Flights are the fills in flight in one process, so that shutdown ends
// them before it closes what they write to. A fill outlives the request
// that started it (singleFlight detaches it, STYLE §11), so otherwise
// nothing waits for it: it would go on downloading into a closed store,
// and the wrappers around the chain (warm.OnMiss) would queue a job into
// a closed queue.
//
// Every chain of a process shares one Flights (Options.Flights), under
// which their detached fills run. Track wraps the outermost Filler, so a
// fill's wrappers (metrics, warm.OnMiss) have returned too when Close
// does. The zero value is not usable: NewFlights. A nil *Flights tracks
// nothing.
type Flights struct {
	stop   context.Context // cancelled by Close once its patience ends
	cancel context.CancelFunc

	mu     sync.Mutex
	n      int           // fills in flight: tracked calls and detached flights
	idle   chan struct{} // closed while n is 0
	closed bool
}

// NewFlights returns Flights with nothing in flight.
func NewFlights() *Flights {
	stop, cancel := context.WithCancel(context.Background())
	idle := make(chan struct{})
	close(idle)
	return &Flights{stop: stop, cancel: cancel, idle: idle}
}

// Track wraps next, the outermost link of a chain, so that Close waits for
// its calls; once Close began it refuses them with ErrShutdown.
func (f *Flights) Track(next Filler) Filler {
	if f == nil {
		return next
	}
	return FillerFunc(func(ctx context.Context, name, version string) error {
		if !f.enter() {
			return shutdownError(name, version)
		}
		defer f.leave()
		return next.Fill(ctx, name, version)
	})
}

// Close refuses fills from now on, waits for those in flight until ctx
// ends, then cancels them and waits for them to return (every link of the
// chain returns once its context ends). Calling it again waits again.
func (f *Flights) Close(ctx context.Context) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.closed = true
	idle := f.idle // the last one: n rises no more
	f.mu.Unlock()
	select {
	case <-idle:
		return
	case <-ctx.Done():
	}
	f.cancel()
	<-idle
}

// Wait returns once no fill is in flight, or ctx's error when it ends
// first. Tests wait on it for what a fill's wrappers record after its
// commit (its metric).
func (f *Flights) Wait(ctx context.Context) error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *Flights) enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	if f.n == 0 {
		f.idle = make(chan struct{})
	}
	f.n++
	return true
}

func (f *Flights) leave() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n--; f.n == 0 {
		close(f.idle)
	}
}

// run runs a detached fill: in a context with ctx's values but not its
// cancellation (one caller giving up must not fail the others waiting on
// the same version), ended by timeout, or by Close past its patience.
func (f *Flights) run(ctx context.Context, timeout time.Duration, name, version string, fill func(context.Context) error) error {
	fctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	fctx, cancelT := context.WithTimeout(fctx, timeout)
	defer cancelT()
	if f == nil {
		return fill(fctx)
	}
	if !f.enter() {
		return shutdownError(name, version)
	}
	defer f.leave()
	defer context.AfterFunc(f.stop, func() { cancel(ErrShutdown) })()
	err := fill(fctx)
	if err != nil && errors.Is(context.Cause(fctx), ErrShutdown) {
		// The links return the context's error (context.Canceled) in
		// their own words; say why it was cancelled.
		return shutdownError(name, version)
	}
	return err
}

func shutdownError(name, version string) error {
	return &unavailable.Error{Source: unavailable.Registry, RetryAfter: shutdownRetryAfter,
		Err: fmt.Errorf("%w: %s@%s was not fetched; retry shortly", ErrShutdown, name, version)}
}
