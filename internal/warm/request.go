package warm

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/store"
)

// ErrNotFound is returned by Progress for an unknown (or expired) request.
var ErrNotFound = errors.New("no such warm request")

// ErrTooMany is returned by Submit for a request over
// Config.MaxRequestItems packages.
var ErrTooMany = errors.New("too many packages in one warm request")

// ErrQueueFull is returned by Submit when the jobs a request would queue
// would take the queue past Config.MaxQueued: the request is refused
// whole, nothing recorded, and may be sent again once the queue drains.
var ErrQueueFull = errors.New("the warm queue is full")

// ErrInvalidWant is returned by Submit when a want's name is not a
// package name, or a field holds a NUL byte or invalid UTF-8: the request
// is refused whole, before anything is recorded or queued.
var ErrInvalidWant = errors.New("invalid package in warm request")

// insertBatch is how many jobs one InsertMany carries: one statement per
// batch on Postgres, where a lockfile of 1,000 packages then costs two
// round trips.
const insertBatch = 500

// Submit records a request for wants and queues a job for each package not
// already in the store; it returns the request's id without waiting for
// the jobs, which run on whichever processes work the queue. Duplicate
// wants are recorded once. An exact version already stored is recorded
// Present at once (one lookup); a want with Skip set is recorded Skipped;
// a want whose spec cannot be warmed (a git URL, an invalid range) is
// recorded Failed. A want whose name is invalid, or that holds a NUL byte
// or invalid UTF-8 anywhere (which Postgres cannot store), fails the whole
// request with ErrInvalidWant before anything is recorded or queued.
func (q *Queue) Submit(ctx context.Context, source string, wants []Want) (string, error) {
	if len(wants) > q.cfg.MaxRequestItems {
		return "", fmt.Errorf("warm: %d packages (setting max-request-items is %d): %w", len(wants), q.cfg.MaxRequestItems, ErrTooMany)
	}
	for i, w := range wants {
		if err := checkWant(w); err != nil {
			return "", fmt.Errorf("warm: package %d of %d: %w", i+1, len(wants), err)
		}
	}
	id := newID()
	items := make([]Item, 0, len(wants))
	var jobs []river.InsertManyParams
	var jobItem []int // jobs[i] warms items[jobItem[i]]
	seen := make(map[Want]bool, len(wants))
	for _, w := range wants {
		if seen[w] {
			continue
		}
		seen[w] = true
		it := Item{Name: w.Name, Spec: w.Spec, State: Pending}
		if w.Skip != "" {
			it.State, it.Reason = Skipped, w.Skip
			items = append(items, it)
			continue
		}
		a, err := argsFor(w)
		if err != nil {
			it.State, it.Reason = Failed, err.Error()
			items = append(items, it)
			continue
		}
		if (a.Reformat > 0 || a.Index > 0) && a.Version == "" {
			it.State, it.Reason = Failed, "reindex needs an exact version"
			items = append(items, it)
			continue
		}
		if a.Version != "" {
			it.Version = a.Version
		}
		if a.Version != "" && a.Reformat == 0 && a.Index == 0 {
			v, err := q.deps.Store.Version(ctx, a.Name, a.Version)
			switch {
			case err == nil && v.State == store.StateReady:
				it.State, it.Bytes = Present, v.TotalBytes
			case err != nil && !errors.Is(err, store.ErrNotFound):
				return "", fmt.Errorf("warm: checking the store for %s@%s: %w", a.Name, a.Version, err)
			}
		}
		if it.State == Pending {
			jobs = append(jobs, river.InsertManyParams{Args: a, InsertOpts: insertOpts(a, q.cfg)})
			jobItem = append(jobItem, len(items))
		}
		items = append(items, it)
	}

	if q.cfg.MaxQueued > 0 && len(jobs) > 0 {
		// Counted, then inserted: requests submitted at once may pass the
		// bound by their own jobs (at most max-lockfile-parses requests
		// of max-request-items each arrive over HTTP at once).
		depth, err := q.Depth(ctx)
		if err != nil {
			return "", err
		}
		if depth+len(jobs) > q.cfg.MaxQueued {
			return "", fmt.Errorf("warm: the queue holds %d jobs and this request would add %d, past %d (setting max-warm-queue); retry once it drains: %w",
				depth, len(jobs), q.cfg.MaxQueued, ErrQueueFull)
		}
	}
	now := time.Now()
	if _, err := q.db.exec(ctx, `INSERT INTO warm_requests (id, source, created_at) VALUES (?, ?, ?)`,
		id, source, q.db.at(now)); err != nil {
		return "", fmt.Errorf("warm: record request: %w", err)
	}
	jobIDs := make([]int64, len(items))
	for start := 0; start < len(jobs); start += insertBatch {
		batch := jobs[start:min(start+insertBatch, len(jobs))]
		res, err := q.rc.InsertMany(ctx, batch)
		if err != nil {
			return "", fmt.Errorf("warm: queue jobs: %w", err)
		}
		for i, r := range res {
			jobIDs[jobItem[start+i]] = r.Job.ID
		}
	}
	// A job may finish before its items are written; Progress settles
	// such items from the job's recorded output.
	err := q.db.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, q.db.rebind(`INSERT INTO warm_items
			(request_id, seq, name, spec, version, state, reason, job_id, bytes, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`))
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i, it := range items {
			var job sql.NullInt64
			if jobIDs[i] != 0 {
				job = sql.NullInt64{Int64: jobIDs[i], Valid: true}
			}
			if _, err := stmt.ExecContext(ctx, id, i, it.Name, it.Spec, it.Version, string(it.State),
				it.Reason, job, it.Bytes, q.db.at(now)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("warm: record request items: %w", err)
	}
	return id, nil
}

// checkWant refuses a want no item can record: text Postgres cannot store,
// or, for a want to fetch, a name that is not a package's.
func checkWant(w Want) error {
	for _, s := range []string{w.Name, w.Spec, w.Skip} {
		if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
			return fmt.Errorf("%.80q holds a NUL byte or invalid UTF-8: %w", s, ErrInvalidWant)
		}
	}
	if w.Skip == "" {
		if err := npmspec.ValidateName(w.Name); err != nil {
			return fmt.Errorf("%w: %w", err, ErrInvalidWant)
		}
	}
	return nil
}

// argsFor validates w and returns its job.
func argsFor(w Want) (Args, error) {
	if err := npmspec.ValidateName(w.Name); err != nil {
		return Args{}, err
	}
	spec, err := npmspec.ParseSpec(w.Spec)
	if err != nil {
		return Args{}, err
	}
	if spec.Kind == npmspec.Version {
		return Args{Name: w.Name, Version: spec.Raw, Reformat: w.Reformat, Index: w.Index}, nil
	}
	return Args{Name: w.Name, Spec: spec.Raw, Reformat: w.Reformat, Index: w.Index}, nil
}

// newID returns 128 random bits in hex: 32 lowercase hex digits, what
// validID matches.
func newID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// settle gives every pending item waiting on job jobID the job's outcome.
func (q *Queue) settle(ctx context.Context, jobID int64, out Outcome) error {
	_, err := q.db.exec(ctx, `UPDATE warm_items
		SET state = ?, version = COALESCE(NULLIF(?, ''), version), reason = ?, bytes = ?, updated_at = ?
		WHERE job_id = ? AND state = 'pending'`,
		string(out.State), out.Version, out.Reason, out.Bytes, q.db.at(time.Now()), jobID)
	return err
}

// Progress returns the state of request id, with every item, or
// ErrNotFound.
func (q *Queue) Progress(ctx context.Context, id string) (Progress, error) {
	return q.progress(ctx, id, true, true)
}

// validID reports whether id has the form newID gives: anything else is
// answered ErrNotFound before a query, since a NUL byte or invalid UTF-8
// is an error to Postgres (a 500), not a miss.
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := range len(id) {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// progress reads the request: its counts, and with items every item. With
// reconcile, pending items whose job has finished without settling them (a
// job that finished before its items were written, or whose job row was
// deleted) are settled first from the job's row.
func (q *Queue) progress(ctx context.Context, id string, reconcile, items bool) (Progress, error) {
	p := Progress{ID: id}
	if !validID(id) {
		return p, fmt.Errorf("warm: request %.80q: a warm request id is 32 hex digits, as POST /v1/warm answers: %w", id, ErrNotFound)
	}
	err := q.db.queryRow(ctx, `SELECT source, created_at FROM warm_requests WHERE id = ?`, id).
		Scan(&p.Source, dbTime{&p.CreatedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return p, fmt.Errorf("warm: request %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return p, fmt.Errorf("warm: read request %s: %w", id, err)
	}
	if reconcile {
		if err := q.reconcile(ctx, id); err != nil {
			return p, err
		}
	}
	if !items {
		err = q.db.query(ctx, `SELECT state, count(*), coalesce(sum(bytes), 0) FROM warm_items
			WHERE request_id = ? GROUP BY state`, func(rows *sql.Rows) error {
			var state string
			var n int
			var bytes int64
			if err := rows.Scan(&state, &n, &bytes); err != nil {
				return err
			}
			for range n {
				p.count(Item{State: State(state)})
			}
			if s := State(state); s == Done || s == Present {
				p.Bytes += bytes
			}
			return nil
		}, id)
		if err != nil {
			return p, fmt.Errorf("warm: read request %s: %w", id, err)
		}
		p.Finished = p.Pending == 0
		return p, nil
	}
	err = q.db.query(ctx, `SELECT name, spec, version, state, reason, bytes FROM warm_items
		WHERE request_id = ? ORDER BY seq`, func(rows *sql.Rows) error {
		var it Item
		var state string
		if err := rows.Scan(&it.Name, &it.Spec, &it.Version, &state, &it.Reason, &it.Bytes); err != nil {
			return err
		}
		it.State = State(state)
		p.count(it)
		p.Items = append(p.Items, it)
		return nil
	}, id)
	if err != nil {
		return p, fmt.Errorf("warm: read request %s: %w", id, err)
	}
	p.Finished = p.Pending == 0
	return p, nil
}

// reconcile settles the pending items of request id whose jobs finished.
func (q *Queue) reconcile(ctx context.Context, id string) error {
	var ids []int64
	err := q.db.query(ctx, `SELECT DISTINCT job_id FROM warm_items
		WHERE request_id = ? AND state = 'pending' AND job_id IS NOT NULL`, func(rows *sql.Rows) error {
		var j int64
		ids = append(ids, j)
		return rows.Scan(&ids[len(ids)-1])
	}, id)
	if err != nil {
		return fmt.Errorf("warm: reconcile request %s: %w", id, err)
	}
	for start := 0; start < len(ids); start += insertBatch {
		batch := ids[start:min(start+insertBatch, len(ids))]
		res, err := q.rc.JobList(ctx, river.NewJobListParams().IDs(batch...).First(len(batch)))
		if err != nil {
			return fmt.Errorf("warm: reconcile request %s: %w", id, err)
		}
		found := make(map[int64]bool, len(res.Jobs))
		for _, job := range res.Jobs {
			found[job.ID] = true
			if out, ok := outcomeOf(job); ok {
				if err := q.settle(ctx, job.ID, out); err != nil {
					return fmt.Errorf("warm: reconcile request %s: %w", id, err)
				}
			}
		}
		for _, j := range batch {
			if !found[j] {
				if err := q.settleVanished(ctx, id, j); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// outcomeOf reads a finished job's outcome; false while it is unfinished.
func outcomeOf(job *rivertype.JobRow) (Outcome, bool) {
	var out Outcome
	if b := job.Output(); len(b) > 0 {
		_ = json.Unmarshal(b, &out) // a garbled output falls back below
	}
	switch job.State {
	case rivertype.JobStateCompleted:
		if out.State != Done && out.State != Present {
			out.State = Done
		}
	case rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
		out.State = Failed
		if out.Reason == "" && len(job.Errors) > 0 {
			out.Reason = job.Errors[len(job.Errors)-1].Error
		}
		if out.Reason == "" {
			out.Reason = "job " + string(job.State)
		}
	default:
		return Outcome{}, false
	}
	return out, true
}

// settleVanished settles items whose job row is gone (River deletes
// finished jobs after a retention period): the store says whether the
// version got in.
func (q *Queue) settleVanished(ctx context.Context, id string, jobID int64) error {
	var name, version string
	err := q.db.queryRow(ctx, `SELECT name, version FROM warm_items
		WHERE request_id = ? AND job_id = ? AND state = 'pending' LIMIT 1`, id, jobID).Scan(&name, &version)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // settled meanwhile
	}
	if err != nil {
		return fmt.Errorf("warm: reconcile request %s: %w", id, err)
	}
	out := Outcome{State: Failed, Reason: "its job's record was deleted before it finished"}
	if version != "" {
		v, err := q.deps.Store.Version(ctx, name, version)
		if err == nil && v.State == store.StateReady {
			out = Outcome{State: Done, Bytes: v.TotalBytes}
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("warm: reconcile request %s: %w", id, err)
		}
	}
	return q.settle(ctx, jobID, out)
}

// reconcileEvery is how many poll intervals Wait lets pass between
// reconciliations: jobs settle their own items, wherever they run, so only
// the rare item whose job finished before the item was written needs the
// job table, and reading it for a 1,000-item request every tick would
// compete with the workers for SQLite's one write connection.
const reconcileEvery = 10

// Wait reports the progress of request id (counts only; Items is nil) to
// report, at once and then each time a job finishes in this process or
// Config.PollInterval passes, until no item is pending or ctx ends. It
// returns the final progress with every item.
func (q *Queue) Wait(ctx context.Context, id string, report func(Progress)) (Progress, error) {
	events, cancel := q.rc.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed,
		river.EventKindJobCancelled, river.EventKindJobSnoozed)
	defer cancel()
	tick := time.NewTicker(q.cfg.PollInterval)
	defer tick.Stop()
	reconcile, ticks := true, 0
	for {
		p, err := q.progress(ctx, id, reconcile, false)
		if err != nil {
			return q.final(ctx, id, p, err)
		}
		if report != nil {
			report(p)
		}
		if p.Finished {
			return q.final(ctx, id, p, nil)
		}
		reconcile = false
		select {
		case <-ctx.Done():
			return q.final(ctx, id, p, ctx.Err())
		case _, ok := <-events:
			if !ok {
				events = nil // the client stopped: poll only
			}
		case <-tick.C:
			ticks++
			reconcile = ticks%reconcileEvery == 0
		}
	}
}

// final reads the whole progress for Wait's answer, even when ctx has
// ended (the caller still wants the summary); err is Wait's error.
func (q *Queue) final(ctx context.Context, id string, p Progress, err error) (Progress, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if full, ferr := q.progress(rctx, id, false, true); ferr == nil {
		p = full
	}
	return p, err
}
