package warm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/store"
)

// IngestFormat is the version of the extraction rules (internal/ingest's
// entry rules and limits, internal/pkgpath's path rule) that this binary
// stores versions under. Bump it when a change to those rules changes
// what is stored for a version; `indexer reindex` then finds the versions
// recorded under an older format (versions.ingest_format) and ingests them
// again.
//
// The store records the format through the column's default (1) today.
// Whoever bumps IngestFormat must also make CommitVersion write it (a
// Format field on store.NewVersion), or new versions would be recorded as
// format 1 and re-ingested needlessly.
const IngestFormat = 1

// Stale lists the ready versions stored under an ingest format older than
// format, by name and version, at most limit of them.
func (q *Queue) Stale(ctx context.Context, format, limit int) ([]Want, error) {
	if format > IngestFormat {
		return nil, fmt.Errorf("warm: format %d is newer than this binary's ingest format %d; re-ingesting would store format %d again", format, IngestFormat, IngestFormat)
	}
	var out []Want
	err := q.db.query(ctx, `SELECT name, version FROM versions
		WHERE state = 'ready' AND ingest_format < ? ORDER BY name, version LIMIT ?`,
		func(rows *sql.Rows) error {
			w := Want{Reformat: format}
			if err := rows.Scan(&w.Name, &w.Spec); err != nil {
				return err
			}
			out = append(out, w)
			return nil
		}, format, limit)
	if err != nil {
		return nil, fmt.Errorf("warm: list versions older than ingest format %d: %w", format, err)
	}
	return out, nil
}

// invalidate turns name@version, when it is ready under an ingest format
// older than format, into a failed record with no files, so that the fill
// chain ingests it again and CommitVersion (which replaces failed records)
// stores it afresh. It reports whether it did.
//
// This writes the store's own tables (versions, files) and keeps their
// invariant, "a failed record has no files", in one transaction. It
// belongs in the store (a Reingest method) once the store grows one.
// Between this and the new commit the version is a miss for readers, who
// fill it themselves: seconds, for one version.
func (q *Queue) invalidate(ctx context.Context, name, version string, format int) (bool, error) {
	var found bool
	err := q.db.inTx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, q.db.rebind(`UPDATE versions
			SET state = 'failed', reason = ?, updated_at = ?
			WHERE name = ? AND version = ? AND state = 'ready' AND ingest_format < ?
			RETURNING id`),
			fmt.Sprintf("re-ingesting under ingest format %d", format), q.db.at(time.Now()),
			name, version, format).Scan(&id)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		if _, err := tx.ExecContext(ctx, q.db.rebind(`DELETE FROM files WHERE version_id = ?`), id); err != nil {
			return err
		}
		// The search indexes were built from the old files.
		_, err = tx.ExecContext(ctx, q.db.rebind(`DELETE FROM version_indexes WHERE version_id = ?`), id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("warm: invalidate %s@%s for re-ingest: %w", name, version, err)
	}
	return found, nil
}

// recordFormat records that name@version is now stored under IngestFormat.
func (q *Queue) recordFormat(ctx context.Context, name, version string) error {
	_, err := q.db.exec(ctx, `UPDATE versions SET ingest_format = ?
		WHERE name = ? AND version = ? AND state = 'ready'`, IngestFormat, name, version)
	if err != nil {
		return fmt.Errorf("warm: record the ingest format of %s@%s: %w", name, version, err)
	}
	return nil
}

// Unindexed lists the ready versions that have no search index of format
// (index.FormatVersion: the only one this binary builds), at most limit of
// them. Indexes of other formats are left in place: a node still running
// the older binary keeps using them until it is upgraded.
func (q *Queue) Unindexed(ctx context.Context, format, limit int) ([]Want, error) {
	if format != index.FormatVersion {
		return nil, fmt.Errorf("warm: this binary builds search index format %d, not %d", index.FormatVersion, format)
	}
	var out []Want
	err := q.db.query(ctx, `SELECT v.name, v.version FROM versions v
		WHERE v.state = 'ready' AND NOT EXISTS (
			SELECT 1 FROM version_indexes i WHERE i.version_id = v.id AND i.format = ?)
		ORDER BY v.name, v.version LIMIT ?`,
		func(rows *sql.Rows) error {
			w := Want{Index: format}
			if err := rows.Scan(&w.Name, &w.Spec); err != nil {
				return err
			}
			out = append(out, w)
			return nil
		}, format, limit)
	if err != nil {
		return nil, fmt.Errorf("warm: list versions without a format %d index: %w", format, err)
	}
	return out, nil
}

// reindex builds name@version's search index; the version must be stored.
func (q *Queue) reindex(ctx context.Context, name, version string) (Outcome, error) {
	out := Outcome{Version: version}
	if q.deps.Index == nil {
		return out, fmt.Errorf("warm: no indexer configured (Deps.Index) to index %s@%s", name, version)
	}
	v, err := q.deps.Store.Version(ctx, name, version)
	if err != nil || v.State != store.StateReady {
		return out, fmt.Errorf("indexing %s@%s: not stored (%v): %w", name, version, err, errNotStored)
	}
	if _, err := q.deps.Index.Ensure(ctx, name, version); err != nil {
		return out, fmt.Errorf("indexing %s@%s: %w", name, version, err)
	}
	out.State, out.Bytes = Done, v.TotalBytes
	return out, nil
}

// errNotStored: a reindex job for a version that is not in the store.
var errNotStored = errors.New("version not in the store")
