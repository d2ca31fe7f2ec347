// Package blobgc runs the store's blob collector (store.BlobCollector) on
// a schedule: every mirror process calls a pass each Interval, and the
// store runs at most one of them per Interval however many replicas share
// it (the others are skipped), each examining at most Batch blobs from
// where the last stopped. A sweep of the whole store thus takes
// blobs/Batch intervals: 1,000,000 blobs at the defaults (10,000 a
// minute) take 100 minutes; a laptop's 50,000, 5.
package blobgc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pkgscope/pkgscope/internal/store"
)

// Options configure the collector's schedule.
type Options struct {
	// Interval is how often a pass runs (across replicas); 0 turns the
	// collector off. Default 1 minute.
	Interval time.Duration
	// Grace is how long an unreferenced body is kept after PutBlobs last
	// wrote it. PutBlobs of a stored body refreshes that time only when it
	// is older than RefreshAfter (half the grace), so the grace must be
	// longer than that plus the longest an ingest holds bodies before its
	// commit: fill-timeout, which bounds fetch, ingest, commit and, in
	// warm jobs, the index build. Validate checks grace > 2 x fill-timeout.
	// Default 24 hours: far past the 5-minute fill-timeout, so a slow clock
	// or a stalled ingest never matters, while garbage goes within a day
	// or two.
	Grace time.Duration
	// Batch is the most blobs one pass examines, in one statement (one
	// write transaction in SQLite, which holds the writer for it).
	// Default 10,000: a pass over 10,000 blobs, none deleted, took
	// 30-45 ms on SQLite and 120-180 ms on Postgres on a shared 2-core
	// machine at load 15-20 (BenchmarkCollectBlobs).
	Batch int
	// Logger receives a line for each pass that deleted something and
	// for each failed pass; nil discards them.
	Logger *slog.Logger
}

// DefaultOptions returns the defaults documented on Options.
func DefaultOptions() Options {
	return Options{Interval: time.Minute, Grace: 24 * time.Hour, Batch: 10_000}
}

// Validate checks the options, naming the setting to fix; fillTimeout is
// the longest an ingest holds bodies uncommitted.
func (o Options) Validate(fillTimeout time.Duration) error {
	var errs []error
	if o.Interval < 0 {
		errs = append(errs, fmt.Errorf("blob-gc-interval (%s) must not be negative (0 turns the collector off)", o.Interval))
	}
	if o.Batch < 1 {
		errs = append(errs, fmt.Errorf("blob-gc-batch (%d) must be positive", o.Batch))
	}
	if o.Grace <= 2*fillTimeout {
		errs = append(errs, fmt.Errorf("blob-gc-grace (%s) must be longer than twice fill-timeout (%s): an ingest writes its bodies before it commits them, reused ones refreshed only once older than half the grace, and the collector must not take them in between", o.Grace, fillTimeout))
	}
	return errors.Join(errs...)
}

// RefreshAfter is how old a stored body's written time must be for a
// PutBlobs that reuses it to refresh it (the Postgres store's
// BlobRefreshAfter): half the grace, so a body an ingest reuses stays
// younger than the grace for at least half of it, longer than the
// fill-timeout Validate requires it to exceed.
func (o Options) RefreshAfter() time.Duration { return o.Grace / 2 }

// Run runs a pass every o.Interval until ctx ends; with Interval 0 it
// returns at once. A failed pass is logged and the next one tries again.
func Run(ctx context.Context, c store.BlobCollector, o Options) {
	if o.Interval <= 0 {
		return
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(o.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p, err := c.CollectBlobs(ctx, o.Grace, o.Interval, o.Batch)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("blob collector pass", "err", err)
		case p.Deleted > 0:
			log.Info("blob collector pass", "examined", p.Examined, "deleted", p.Deleted, "freed_bytes", p.Freed, "wrapped", p.Wrapped)
		}
	}
}

// Sweep runs passes back to back, each of o.Batch blobs, until every
// blob has been examined since it began, and returns their sum: `indexer
// gc`, which collects the whole store now. Passes go on from the shared
// position, which may be mid-store, so Sweep finishes the sweep under
// way and then makes a whole one: it examines up to twice the store. It
// runs as soon as no other pass is running (the schedule's Interval does
// not hold it back); a pass skipped because one runs elsewhere is retried
// after retry.
func Sweep(ctx context.Context, c store.BlobCollector, o Options, retry time.Duration) (store.BlobPass, error) {
	var sum store.BlobPass
	for wraps := 0; wraps < 2; {
		p, err := c.CollectBlobs(ctx, o.Grace, 0, o.Batch)
		if err != nil {
			return sum, err
		}
		if !p.Ran {
			select {
			case <-ctx.Done():
				return sum, ctx.Err()
			case <-time.After(retry):
			}
			continue
		}
		sum.Add(p)
		if p.Wrapped {
			wraps++
		}
	}
	return sum, nil
}
