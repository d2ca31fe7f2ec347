package warm

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// retryPolicy doubles the delay from base on each attempt, up to max, and
// adds up to 10% jitter. River's default (attempt⁴ seconds: 1 s, 16 s,
// 81 s, 4 min, ...) waits longer than a CI job that submitted a lockfile
// is willing to; the delays here are Config.RetryBase and RetryMax.
type retryPolicy struct{ base, max time.Duration }

// NextRetry implements river.ClientRetryPolicy.
func (p *retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	d := p.base
	for i := 1; i < job.Attempt && d < p.max; i++ {
		d *= 2
	}
	d = min(d, p.max)
	d += time.Duration(rand.Int64N(int64(d)/10 + 1))
	return time.Now().Add(d)
}

// gate holds back this process's jobs after the registry answered 429 or
// 503: until the Retry-After it gave has passed, a job that would ask the
// registry snoozes instead, so the other workers do not each spend a
// request to learn the same thing.
type gate struct {
	mu    sync.Mutex
	until time.Time
}

// closeFor keeps the gate closed for at least d from now.
func (g *gate) closeFor(d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t := time.Now().Add(d); t.After(g.until) {
		g.until = t
	}
}

// wait is how long the gate stays closed, 0 when open.
func (g *gate) wait() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return max(0, time.Until(g.until))
}
