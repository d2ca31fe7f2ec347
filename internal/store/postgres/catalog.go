package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pkgscope/pkgscope/internal/store"
)

// Recent implements store.Catalog.
func (s *Store) Recent(ctx context.Context, limit int) ([]store.Version, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	rows, err := s.pool.Query(ctx, `
		SELECT name, version, integrity, file_count, total_bytes, created_at
		FROM versions WHERE state = 'ready'
		ORDER BY updated_at DESC, id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: recent versions: %w", interpretError(err))
	}
	vs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Version, error) {
		v := store.Version{State: store.StateReady}
		err := r.Scan(&v.Name, &v.Version, &v.Integrity, &v.FileCount, &v.TotalBytes, &v.CreatedAt)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: recent versions: %w", interpretError(err))
	}
	return vs, nil
}

// Names implements store.Catalog.
func (s *Store) Names(ctx context.Context, substr string, limit int) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	rows, err := s.pool.Query(ctx, `
		SELECT name FROM versions
		WHERE state = 'ready' AND lower(name) LIKE $1 ESCAPE '\'
		GROUP BY name ORDER BY length(name), name::bytea LIMIT $2`, store.LikeContains(substr), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: package names: %w", interpretError(err))
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: package names: %w", interpretError(err))
	}
	return names, nil
}
