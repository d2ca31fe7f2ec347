package warm

import (
	"errors"
	"fmt"
	"time"
)

// Config holds every limit of the warm queue. DefaultConfig gives the
// defaults; Validate names the setting to fix.
type Config struct {
	// Workers is how many warm jobs one process runs at once: the bound
	// on concurrent downloads from the registry, and on memory. Default 8:
	// npm itself keeps up to 15 sockets (its maxsockets default) to one
	// registry, but a job is mostly CPU (unpack, hash, compress, index:
	// over 60% of job time in bench/warm), so more than a few per core only
	// queue. Memory is bounded by the fill chain's budget (fill.Budget,
	// max-fill-bytes), which the jobs share with every other fill of the
	// process, not by this.
	Workers int
	// MaxAttempts is how many times a job runs before it is reported
	// failed. A snooze on 429/503 does not count as an attempt. Default 5.
	MaxAttempts int
	// RetryBase is the delay before the first retry; each later retry
	// doubles it, up to RetryMax, with up to 10% jitter so that jobs
	// failed together do not return together. Defaults 5 s and 10 min:
	// five attempts span about 75 s, long enough to outlast a registry
	// blip, short enough that a CI job waiting on a warm request learns
	// of a real failure within a couple of minutes.
	RetryBase, RetryMax time.Duration
	// MaxSnoozeAge is how long after a job was created it keeps waiting
	// out 429 and 503 answers (for their Retry-After, which does not use
	// an attempt). Past it, such an answer is an ordinary failed attempt,
	// so a registry that never stops refusing cannot keep a job alive for
	// ever. Default 1 hour.
	MaxSnoozeAge time.Duration
	// JobTimeout bounds one attempt: resolution, lookup, fill. It must
	// outlast the mirror's fill-timeout, which bounds the fill itself.
	// Default 6 minutes (fill-timeout's default is 5).
	JobTimeout time.Duration
	// RescueMargin is how long past JobTimeout a job still marked running
	// is taken for lost — its worker killed, or its machine gone — and run
	// again (River's RescueStuckJobsAfter is JobTimeout + RescueMargin).
	// River knows a worker died only by its job's age, and looks every 30
	// seconds, so a killed worker's jobs wait JobTimeout + RescueMargin to
	// 30 s more. The margin covers an attempt that overran its timeout
	// (a worker not yet back from a cancelled call, a completion not yet
	// recorded): a job rescued while it still runs runs twice. Default 1
	// minute.
	RescueMargin time.Duration
	// PollInterval is how often an idle worker looks for jobs that it was
	// not notified of (SQLite has no notifications; retries and snoozes
	// come due without one), and how often a waiting `indexer warm`
	// re-reads its request's progress. Default 1 s.
	PollInterval time.Duration
	// MaxRequestItems caps the packages of one warm request. Default
	// 20,000: a large monorepo's lockfile holds 5,000 to 10,000.
	MaxRequestItems int
	// MaxQueued caps the jobs waiting or running in the queue: a request
	// whose jobs would pass it is refused whole (ErrQueueFull). 0, the
	// default (the indexer's own requests), leaves it unbounded; the
	// mirror sets DefaultMaxWarmQueue (setting max-warm-queue), since its
	// callers' requests are work anyone with a token can queue.
	MaxQueued int
	// RequestRetention is how long a finished request's progress is kept
	// for GET /v1/warm/{id}. Default 7 days. A worker deletes older
	// requests every CleanupInterval (default 1 hour).
	RequestRetention, CleanupInterval time.Duration
	// Queue is the River queue warm jobs go to. Default "warm".
	Queue string
}

// DefaultMaxWarmQueue is the default of the mirror's setting
// max-warm-queue: 200,000 jobs, ten requests of max-request-items. Without
// it a caller with a token queued as many distinct versions as it liked
// (20,000 a request, no bound on requests but the rate limit, which is off
// by default), each a packument, a tarball and an index build, and a job
// row each.
const DefaultMaxWarmQueue = 200_000

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{
		Workers:          8,
		MaxAttempts:      5,
		RetryBase:        5 * time.Second,
		RetryMax:         10 * time.Minute,
		MaxSnoozeAge:     time.Hour,
		JobTimeout:       6 * time.Minute,
		RescueMargin:     time.Minute,
		PollInterval:     time.Second,
		MaxRequestItems:  20_000,
		RequestRetention: 7 * 24 * time.Hour,
		CleanupInterval:  time.Hour,
		Queue:            "warm",
	}
}

// Validate checks the settings, naming the one to fix (by its indexer
// flag name).
func (c Config) Validate() error {
	var errs []error
	positive := func(name string, ok bool) {
		if !ok {
			errs = append(errs, fmt.Errorf("%s must be positive", name))
		}
	}
	positive("workers", c.Workers > 0)
	positive("max-attempts", c.MaxAttempts > 0)
	positive("retry-base", c.RetryBase > 0)
	positive("retry-max", c.RetryMax > 0)
	positive("max-snooze-age", c.MaxSnoozeAge > 0)
	positive("job-timeout", c.JobTimeout > 0)
	positive("rescue-margin", c.RescueMargin > 0)
	positive("poll-interval", c.PollInterval > 0)
	positive("max-request-items", c.MaxRequestItems > 0)
	positive("request-retention", c.RequestRetention > 0)
	positive("cleanup-interval", c.CleanupInterval > 0)
	if c.Workers > 10_000 {
		errs = append(errs, fmt.Errorf("workers (%d) is above River's limit of 10000", c.Workers))
	}
	if c.RetryBase > c.RetryMax {
		errs = append(errs, fmt.Errorf("retry-base (%s) is above retry-max (%s)", c.RetryBase, c.RetryMax))
	}
	if c.Queue == "" {
		errs = append(errs, errors.New("queue must be set"))
	}
	return errors.Join(errs...)
}
