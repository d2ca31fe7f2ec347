// Package warm prewarms the store: it fetches and ingests package versions
// before anyone asks for them, as durable jobs, so that agents almost never
// wait for a miss.
//
// A warm job is one package at one exact version, or at a range or
// dist-tag that the job resolves. Jobs are River jobs (riverqueue), kept in
// the store's own database: Postgres through pgx, or the embedded SQLite
// file. River gives what a hand-made queue would have to earn: jobs that
// survive a crash (a job whose worker died is run again), retries with
// backoff, one job per package@version however many ask (unique jobs), a
// bounded number running at once, and snoozing, which the worker uses to
// wait out a registry's 429 or 503 for its Retry-After without spending an
// attempt.
//
// A job warms through the mirror's own miss path (internal/fill): the same
// single-flight, download, integrity check, ingest and commit, so a version
// is never ingested two ways. A version already in the store costs one
// store lookup and nothing else.
//
// A request groups the jobs of one lockfile or list of specs under an id
// (warm_requests, warm_items) so that progress can be reported per package:
// pending, done, already present, skipped (why) or failed (why).
package warm

import (
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// State is the fate of one package of a request.
type State string

// Item states. Every state but Pending is final.
const (
	// Pending: its job has not finished yet.
	Pending State = "pending"
	// Done: this request's job fetched and stored it.
	Done State = "done"
	// Present: it was already in the store; nothing was fetched.
	Present State = "present"
	// Skipped: the registry does not serve it (a git, file, link,
	// workspace or remote tarball dependency); Reason says which.
	Skipped State = "skipped"
	// Failed: it could not be warmed; Reason says why.
	Failed State = "failed"
)

// JobKind is the River kind of warm jobs.
const JobKind = "warm"

// Args is a warm job: Name at the exact Version, or, when Version is "",
// at Spec (a range or dist-tag), resolved when the job runs.
//
// Jobs are unique by all three fields: while a job for react@19.1.0 is
// queued or running, or has completed and not yet been cleaned out,
// another is not inserted; its requests share the one job.
type Args struct {
	// Name is the registry package.
	Name string `json:"name" river:"unique"`
	// Version is the exact version, or "" to resolve Spec.
	Version string `json:"version,omitempty" river:"unique"`
	// Spec is a range or dist-tag, when Version is "".
	Spec string `json:"spec,omitempty" river:"unique"`
	// Reformat, when not 0, re-ingests the stored Version if it was
	// stored under an ingest format older than Reformat (indexer reindex).
	Reformat int `json:"reformat,omitempty" river:"unique"`
	// Index, when not 0, builds the stored Version's search index of
	// that format, fetching nothing (indexer reindex).
	Index int `json:"index,omitempty" river:"unique"`
}

// Kind implements river.JobArgs.
func (Args) Kind() string { return JobKind }

// insertOpts is how a warm job for a is inserted. An exact version, once
// stored, never changes, so a completed job keeps blocking duplicates
// (River's default states); a range or tag may resolve to a newer version
// tomorrow, so a completed one does not.
func insertOpts(a Args, cfg Config) *river.InsertOpts {
	opts := &river.InsertOpts{
		Queue:       cfg.Queue,
		MaxAttempts: cfg.MaxAttempts,
		UniqueOpts:  river.UniqueOpts{ByArgs: true},
	}
	if a.Version == "" {
		opts.UniqueOpts.ByState = []rivertype.JobState{
			rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
			rivertype.JobStateRetryable, rivertype.JobStateScheduled,
		}
	}
	return opts
}

// Outcome is what a finished warm job records as its River output, and
// what it settles its requests' items with.
type Outcome struct {
	// State is Done, Present or Failed.
	State State `json:"state"`
	// Version is the exact version warmed (resolved, for a spec).
	Version string `json:"version,omitempty"`
	// Reason says why it failed.
	Reason string `json:"reason,omitempty"`
	// Bytes is the version's unpacked size.
	Bytes int64 `json:"bytes,omitempty"`
	// Timing splits the job's time, for the benchmark.
	Timing *JobTiming `json:"timing,omitempty"`
}

// Want is one package a request asks for.
type Want struct {
	// Name is the registry package to warm (for an alias, the aliased
	// package).
	Name string
	// Spec is an exact version, a range or a dist-tag ("" means latest).
	Spec string
	// Skip, when not "", records the package as Skipped with this reason
	// instead of warming it (a dependency the registry does not serve).
	Skip string
	// Reformat, when not 0, asks to ingest the exact version Spec again
	// if it is stored under an ingest format older than Reformat (see
	// IngestFormat and Queue.Stale).
	Reformat int
	// Index, when not 0, asks to build the search index (of format Index)
	// of the stored exact version Spec (see Queue.Unindexed).
	Index int
}

// Item is one package of a request and what became of it.
type Item struct {
	// Name is the registry package.
	Name string `json:"name"`
	// Spec is what was asked: a version, range or tag (for a skipped
	// dependency, where it comes from).
	Spec string `json:"spec"`
	// Version is the exact version, once known.
	Version string `json:"version,omitempty"`
	// State is the item's fate so far.
	State State `json:"state"`
	// Reason says why it was skipped or failed.
	Reason string `json:"reason,omitempty"`
	// Bytes is the version's unpacked size, once stored.
	Bytes int64 `json:"bytes,omitempty"`
}

// Progress is the state of one request.
type Progress struct {
	// ID is the request's id.
	ID string `json:"id"`
	// Source says who asked and for what ("indexer warm --lockfile
	// package-lock.json (package-lock@3)", "POST /v1/warm: 3 specs").
	Source string `json:"source"`
	// CreatedAt is when the request was submitted.
	CreatedAt time.Time `json:"createdAt"`
	// Counts per state; Total is their sum.
	Total   int `json:"total"`
	Pending int `json:"pending"`
	Done    int `json:"done"`
	Present int `json:"present"`
	Skipped int `json:"skipped"`
	Failed  int `json:"failed"`
	// Bytes is the unpacked size of the items done or present.
	Bytes int64 `json:"bytes"`
	// Finished is true when no item is pending.
	Finished bool `json:"finished"`
	// Items are the packages in the order the request listed them (nil in
	// the counts-only reports of Wait).
	Items []Item `json:"items"`
}

func (p *Progress) count(it Item) {
	p.Total++
	switch it.State {
	case Pending:
		p.Pending++
	case Done:
		p.Done++
	case Present:
		p.Present++
	case Skipped:
		p.Skipped++
	case Failed:
		p.Failed++
	}
	if it.State == Done || it.State == Present {
		p.Bytes += it.Bytes
	}
}
