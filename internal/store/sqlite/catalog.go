package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/pkgscope/pkgscope/internal/store"
)

// Recent implements store.Catalog.
func (s *Store) Recent(ctx context.Context, limit int) ([]store.Version, error) {
	rows, err := s.r.QueryContext(ctx, `
		SELECT name, version, integrity, file_count, total_bytes, created_at
		FROM versions WHERE state = 'ready'
		ORDER BY updated_at DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: recent versions: %w", interpretError(err))
	}
	defer rows.Close()
	var vs []store.Version
	for rows.Next() {
		v := store.Version{State: store.StateReady}
		var created int64
		if err := rows.Scan(&v.Name, &v.Version, &v.Integrity, &v.FileCount, &v.TotalBytes, &created); err != nil {
			return nil, fmt.Errorf("sqlite: recent versions: %w", interpretError(err))
		}
		v.CreatedAt = time.UnixMicro(created)
		vs = append(vs, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: recent versions: %w", interpretError(err))
	}
	return vs, nil
}

// Names implements store.Catalog. SQLite's LIKE is ASCII
// case-insensitive already; CAST AS BLOB orders in byte order.
func (s *Store) Names(ctx context.Context, substr string, limit int) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `
		SELECT name FROM versions
		WHERE state = 'ready' AND name LIKE ? ESCAPE '\'
		GROUP BY name ORDER BY length(name), CAST(name AS BLOB) LIMIT ?`, store.LikeContains(substr), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: package names: %w", interpretError(err))
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("sqlite: package names: %w", interpretError(err))
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: package names: %w", interpretError(err))
	}
	return names, nil
}
