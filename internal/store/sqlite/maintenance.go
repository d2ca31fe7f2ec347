package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pkgscope/pkgscope/internal/store"
)

// OlderIngest implements store.Maintenance.
func (s *Store) OlderIngest(ctx context.Context, format, limit int) ([]store.VersionRef, error) {
	return s.refs(ctx, "versions stored under an older ingest format", `
		SELECT name, version FROM versions
		WHERE state = 'ready' AND ingest_format < ? ORDER BY name, version LIMIT ?`, format, limit)
}

// Unindexed implements store.Maintenance.
func (s *Store) Unindexed(ctx context.Context, format, limit int) ([]store.VersionRef, error) {
	return s.refs(ctx, "versions without an index", `
		SELECT v.name, v.version FROM versions v
		WHERE v.state = 'ready' AND NOT EXISTS (
			SELECT 1 FROM version_indexes i WHERE i.version_id = v.id AND i.format = ?)
		ORDER BY v.name, v.version LIMIT ?`, format, limit)
}

func (s *Store) refs(ctx context.Context, what, q string, args ...any) ([]store.VersionRef, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", what, interpretError(err))
	}
	defer rows.Close()
	var refs []store.VersionRef
	for rows.Next() {
		var v store.VersionRef
		if err := rows.Scan(&v.Name, &v.Version); err != nil {
			return nil, fmt.Errorf("sqlite: %s: %w", what, interpretError(err))
		}
		refs = append(refs, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", what, interpretError(err))
	}
	return refs, nil
}

// ResetForReingest implements store.Maintenance.
func (s *Store) ResetForReingest(ctx context.Context, name, version string, format int, reason string) (bool, error) {
	found := false
	err := s.write(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `
			UPDATE versions SET state = 'failed', reason = ?, updated_at = ?
			WHERE name = ? AND version = ? AND state = 'ready' AND ingest_format < ?
			RETURNING id`, reason, time.Now().UnixMicro(), name, version, format).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		if _, err := tx.ExecContext(ctx, `DELETE FROM files WHERE version_id = ?`, id); err != nil {
			return err
		}
		// The search indexes were built from the old files.
		_, err = tx.ExecContext(ctx, `DELETE FROM version_indexes WHERE version_id = ?`, id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("sqlite: reset %s@%s for re-ingest: %w", name, version, interpretError(err))
	}
	return found, nil
}

// SetIngestFormat implements store.Maintenance.
func (s *Store) SetIngestFormat(ctx context.Context, name, version string, format int) error {
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE versions SET ingest_format = ?
			WHERE name = ? AND version = ? AND state = 'ready'`, format, name, version)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: record the ingest format of %s@%s: %w", name, version, interpretError(err))
	}
	if n == 0 {
		return fmt.Errorf("sqlite: record the ingest format of %s@%s: %w", name, version, store.ErrNotFound)
	}
	return nil
}
