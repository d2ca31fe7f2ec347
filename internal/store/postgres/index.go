package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pkgscope/pkgscope/internal/store"
)

// PutIndex implements store.IndexStore. The record and its index_chunks
// rows are written in one transaction; the rows' foreign key to blobs
// checks every chunk is stored (ErrMissingBlob otherwise) and holds a key
// lock on it until commit, so a blob collector cannot delete a chunk
// this record is naming.
func (s *Store) PutIndex(ctx context.Context, name, version string, rec store.IndexRecord) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
	defer cancel()
	chunks := store.JoinHashes(rec.Chunks)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, `SELECT id FROM versions WHERE name = $1 AND version = $2 AND state = 'ready'`,
			name, version).Scan(&id)
		if err != nil {
			return interpretError(err)
		}
		_, err = tx.Exec(ctx, `
			INSERT INTO version_indexes (version_id, format, size, chunks, coverage, stats)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (version_id, format) DO UPDATE
			SET size = EXCLUDED.size, chunks = EXCLUDED.chunks, coverage = EXCLUDED.coverage,
			    stats = EXCLUDED.stats, created_at = now()`,
			id, rec.Format, rec.Size, chunks, rec.Coverage, string(rec.Stats))
		if err != nil {
			return interpretError(err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM index_chunks WHERE version_id = $1 AND format = $2`, id, rec.Format); err != nil {
			return interpretError(err)
		}
		_, err = tx.Exec(ctx, `
			INSERT INTO index_chunks (version_id, format, hash)
			SELECT DISTINCT $1::bigint, $2::integer, substring($3::bytea FROM i * 32 + 1 FOR 32)
			FROM generate_series(0, $4::int - 1) AS i`, id, rec.Format, chunks, len(rec.Chunks))
		return interpretError(err)
	})
	if err != nil {
		return fmt.Errorf("postgres: put index of %s@%s: %w", name, version, interpretError(err))
	}
	return nil
}

// Index implements store.IndexStore.
func (s *Store) Index(ctx context.Context, name, version string, format int) (store.IndexRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	rec := store.IndexRecord{Format: format}
	var chunks []byte
	var stats string
	err := s.pool.QueryRow(ctx, `
		SELECT i.size, i.chunks, i.coverage, i.stats
		FROM version_indexes i JOIN versions v ON v.id = i.version_id
		WHERE v.name = $1 AND v.version = $2 AND v.state = 'ready' AND i.format = $3`,
		name, version, format).Scan(&rec.Size, &chunks, &rec.Coverage, &stats)
	if err != nil {
		return store.IndexRecord{}, fmt.Errorf("postgres: index of %s@%s: %w", name, version, interpretError(err))
	}
	if rec.Chunks, err = store.SplitHashes(chunks); err != nil {
		return store.IndexRecord{}, fmt.Errorf("postgres: index of %s@%s: %w", name, version, err)
	}
	rec.Stats = []byte(stats)
	return rec, nil
}
