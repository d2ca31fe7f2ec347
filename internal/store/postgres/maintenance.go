package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pkgscope/pkgscope/internal/store"
)

// OlderIngest implements store.Maintenance.
func (s *Store) OlderIngest(ctx context.Context, format, limit int) ([]store.VersionRef, error) {
	return s.refs(ctx, "versions stored under an older ingest format", `
		SELECT name, version FROM versions
		WHERE state = 'ready' AND ingest_format < $1 ORDER BY name, version LIMIT $2`, format, limit)
}

// Unindexed implements store.Maintenance.
func (s *Store) Unindexed(ctx context.Context, format, limit int) ([]store.VersionRef, error) {
	return s.refs(ctx, "versions without an index", `
		SELECT v.name, v.version FROM versions v
		WHERE v.state = 'ready' AND NOT EXISTS (
			SELECT 1 FROM version_indexes i WHERE i.version_id = v.id AND i.format = $1)
		ORDER BY v.name, v.version LIMIT $2`, format, limit)
}

func (s *Store) refs(ctx context.Context, what, q string, args ...any) ([]store.VersionRef, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, interpretError(err))
	}
	refs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.VersionRef, error) {
		var v store.VersionRef
		err := r.Scan(&v.Name, &v.Version)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, interpretError(err))
	}
	return refs, nil
}

// ResetForReingest implements store.Maintenance.
func (s *Store) ResetForReingest(ctx context.Context, name, version string, format int, reason string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
	defer cancel()
	found := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, `
			UPDATE versions SET state = 'failed', reason = $1, updated_at = now()
			WHERE name = $2 AND version = $3 AND state = 'ready' AND ingest_format < $4
			RETURNING id`, reason, name, version, format).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		if _, err := tx.Exec(ctx, `DELETE FROM files WHERE version_id = $1`, id); err != nil {
			return err
		}
		// The search indexes were built from the old files.
		_, err = tx.Exec(ctx, `DELETE FROM version_indexes WHERE version_id = $1`, id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("postgres: reset %s@%s for re-ingest: %w", name, version, interpretError(err))
	}
	return found, nil
}

// SetIngestFormat implements store.Maintenance.
func (s *Store) SetIngestFormat(ctx context.Context, name, version string, format int) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
	defer cancel()
	tag, err := s.pool.Exec(ctx, `UPDATE versions SET ingest_format = $1
		WHERE name = $2 AND version = $3 AND state = 'ready'`, format, name, version)
	if err != nil {
		return fmt.Errorf("postgres: record the ingest format of %s@%s: %w", name, version, interpretError(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: record the ingest format of %s@%s: %w", name, version, store.ErrNotFound)
	}
	return nil
}
