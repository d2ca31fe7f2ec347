package warm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/riverqueue/river"

	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/semver"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/unavailable"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// minSnooze is the shortest wait on a 429/503: a Retry-After date already
// past gives 0, which would retry at once.
const minSnooze = time.Second

// jobWorker runs warm jobs.
type jobWorker struct {
	river.WorkerDefaults[Args]
	q *Queue
}

// Work warms one package version. The job's fate:
//   - nil: the version is stored (now, or already);
//   - JobSnooze: the registry asked to wait (429/503), or another job
//     just learned it did; no attempt is spent;
//   - JobCancel: an error that a retry would only repeat (no such package
//     or version, a bad spec, bytes that fail their integrity or a limit);
//   - any other error: retried with backoff, then reported failed.
//
// Each finished job settles the request items waiting on it.
func (w *jobWorker) Work(ctx context.Context, job *river.Job[Args]) error {
	q := w.q
	tm := &timer{}
	start := time.Now()
	out, err := q.warmOne(withTimer(ctx, tm), job.Args)
	timing := tm.snapshot()
	timing.Total = time.Since(start)
	out.Timing = &timing

	if err == nil {
		q.log.Info("warm job done", "package", job.Args.Name, "version", out.Version, "state", out.State,
			"bytes", out.Bytes, "duration", timing.Total, "download", timing.Download, "index", timing.Index)
		if out.State == Done {
			q.mu.Lock()
			q.fetched++
			q.timing.Add(timing)
			q.mu.Unlock()
		}
		return q.finish(ctx, job.ID, out)
	}
	var wait *snoozeError
	var ue *unavailable.Error
	switch {
	case errors.As(err, &ue) && (ue.Status == http.StatusTooManyRequests || ue.Status == http.StatusServiceUnavailable):
		d := max(ue.RetryAfter, minSnooze)
		q.gate.closeFor(d)
		if time.Since(job.CreatedAt) < q.cfg.MaxSnoozeAge {
			q.log.Info("registry asked to wait", "package", job.Args.Name, "status", ue.Status, "retry_after", d)
			return river.JobSnooze(d)
		}
	case errors.As(err, &wait):
		if time.Since(job.CreatedAt) < q.cfg.MaxSnoozeAge {
			return river.JobSnooze(wait.d)
		}
		err = fmt.Errorf("the registry kept asking to wait for longer than max-snooze-age (%s)", q.cfg.MaxSnoozeAge)
	case permanent(err):
		out.State, out.Reason = Failed, err.Error()
		if ferr := q.finish(ctx, job.ID, out); ferr != nil {
			return ferr
		}
		return river.JobCancel(err)
	}
	if job.Attempt >= job.MaxAttempts && ctx.Err() == nil {
		out.State = Failed
		out.Reason = fmt.Sprintf("after %d attempts: %v", job.Attempt, err)
		if ferr := q.finish(ctx, job.ID, out); ferr != nil {
			q.log.Error("settling a failed warm job", "job", job.ID, "err", ferr)
		}
	}
	return err
}

// snoozeError says the gate is closed: wait d before asking the registry.
type snoozeError struct{ d time.Duration }

func (e *snoozeError) Error() string { return fmt.Sprintf("waiting %s for the registry", e.d) }

// warmOne resolves, looks up and fills one version.
func (q *Queue) warmOne(ctx context.Context, a Args) (Outcome, error) {
	version := a.Version
	if version == "" {
		spec, err := npmspec.ParseSpec(a.Spec)
		if err != nil {
			return Outcome{}, err
		}
		if spec.Kind == npmspec.Version {
			version = spec.Raw
		} else {
			if d := q.gate.wait(); d > 0 {
				return Outcome{}, &snoozeError{d}
			}
			if version, err = q.deps.Resolve.Resolve(ctx, a.Name, spec); err != nil {
				return Outcome{}, fmt.Errorf("resolving %s@%s: %w", a.Name, a.Spec, err)
			}
		}
	}
	out := Outcome{Version: version}
	if a.Index > 0 {
		return q.reindex(ctx, a.Name, version)
	}
	if a.Reformat > 0 {
		// The store resets the version (a failed record, no files, no
		// indexes) when it is under an older format, so the fill below
		// ingests it again; between the two it is a miss for readers,
		// who fill it themselves: seconds, for one version.
		reason := fmt.Sprintf("re-ingesting under ingest format %d", a.Reformat)
		if _, err := q.maint.ResetForReingest(ctx, a.Name, version, a.Reformat, reason); err != nil {
			return out, fmt.Errorf("warm: %w", err)
		}
	}
	// The one lookup a version already present costs.
	v, err := q.deps.Store.Version(ctx, a.Name, version)
	switch {
	case err == nil && v.State == store.StateReady:
		out.State, out.Bytes = Present, v.TotalBytes
		return out, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return out, fmt.Errorf("checking the store for %s@%s: %w", a.Name, version, err)
	}
	if d := q.gate.wait(); d > 0 {
		return out, &snoozeError{d}
	}
	if err := q.deps.Fill.Fill(ctx, a.Name, version); err != nil {
		return out, fmt.Errorf("warming %s@%s: %w", a.Name, version, err)
	}
	if a.Reformat > 0 {
		if err := q.maint.SetIngestFormat(ctx, a.Name, version, IngestFormat); err != nil {
			return out, fmt.Errorf("warm: %w", err)
		}
	}
	if v, err = q.deps.Store.Version(ctx, a.Name, version); err != nil {
		return out, fmt.Errorf("reading back %s@%s: %w", a.Name, version, err)
	}
	out.State, out.Bytes = Done, v.TotalBytes
	return out, nil
}

// finish records out as the job's River output and settles the items
// waiting on the job.
func (q *Queue) finish(ctx context.Context, jobID int64, out Outcome) error {
	if err := river.RecordOutput(ctx, out); err != nil {
		return fmt.Errorf("warm: record job output: %w", err)
	}
	// Settled even if the job's own context is ending: the work is done.
	if err := q.settle(context.WithoutCancel(ctx), jobID, out); err != nil {
		return fmt.Errorf("warm: settle the items of job %d: %w", jobID, err)
	}
	return nil
}

// permanent reports errors that a retry would only repeat.
func permanent(err error) bool {
	if fill.BadBytes(err) {
		return true
	}
	for _, target := range []error{
		upstream.ErrNotFound, upstream.ErrInvalidName,
		npmspec.ErrInvalidName, npmspec.ErrInvalidSpec, semver.ErrNoMatch, errNotStored,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// cleanupArgs is the periodic job that deletes old warm requests.
type cleanupArgs struct{}

// Kind implements river.JobArgs.
func (cleanupArgs) Kind() string { return "warm_cleanup" }

type cleanupWorker struct {
	river.WorkerDefaults[cleanupArgs]
	q *Queue
}

// Work deletes requests older than Config.RequestRetention.
func (w *cleanupWorker) Work(ctx context.Context, _ *river.Job[cleanupArgs]) error {
	cutoff := time.Now().Add(-w.q.cfg.RequestRetention)
	res, err := w.q.db.exec(ctx, `DELETE FROM warm_requests WHERE created_at < ?`, w.q.db.at(cutoff))
	if err != nil {
		return fmt.Errorf("warm: delete old requests: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		w.q.log.Info("deleted old warm requests", "count", n, "before", cutoff)
	}
	return nil
}
