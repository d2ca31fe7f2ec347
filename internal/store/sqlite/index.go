package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pkgscope/pkgscope/internal/store"
)

// PutIndex implements store.IndexStore. The record and its index_chunks
// rows are written in one write transaction; the rows' foreign key to
// blobs checks each chunk is stored, so a record never names a missing
// blob, and writers are serialised, so no collector runs in between.
func (s *Store) PutIndex(ctx context.Context, name, version string, rec store.IndexRecord) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM versions WHERE name = ? AND version = ? AND state = 'ready'`,
			name, version).Scan(&id)
		if err != nil {
			return interpretError(err)
		}
		_, err = tx.ExecContext(ctx, `
			INSERT INTO version_indexes (version_id, format, size, chunks, coverage, stats, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (version_id, format) DO UPDATE
			SET size = excluded.size, chunks = excluded.chunks, coverage = excluded.coverage,
			    stats = excluded.stats, created_at = excluded.created_at`,
			id, rec.Format, rec.Size, store.JoinHashes(rec.Chunks), rec.Coverage, string(rec.Stats), time.Now().UnixMicro())
		if err != nil {
			return interpretError(err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM index_chunks WHERE version_id = ? AND format = ?`, id, rec.Format); err != nil {
			return interpretError(err)
		}
		for _, h := range rec.Chunks {
			_, err := tx.ExecContext(ctx, `INSERT INTO index_chunks (version_id, format, hash) VALUES (?, ?, ?)
				ON CONFLICT DO NOTHING`, id, rec.Format, h[:])
			if err = interpretError(err); errors.Is(err, store.ErrMissingBlob) {
				return fmt.Errorf("%w: index chunk %x", err, h)
			} else if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: put index of %s@%s: %w", name, version, err)
	}
	return nil
}

// Index implements store.IndexStore.
func (s *Store) Index(ctx context.Context, name, version string, format int) (store.IndexRecord, error) {
	rec := store.IndexRecord{Format: format}
	var chunks []byte
	var stats string
	err := s.r.QueryRowContext(ctx, `
		SELECT i.size, i.chunks, i.coverage, i.stats
		FROM version_indexes i JOIN versions v ON v.id = i.version_id
		WHERE v.name = ? AND v.version = ? AND v.state = 'ready' AND i.format = ?`,
		name, version, format).Scan(&rec.Size, &chunks, &rec.Coverage, &stats)
	if err != nil {
		return store.IndexRecord{}, fmt.Errorf("sqlite: index of %s@%s: %w", name, version, interpretError(err))
	}
	if rec.Chunks, err = store.SplitHashes(chunks); err != nil {
		return store.IndexRecord{}, fmt.Errorf("sqlite: index of %s@%s: %w", name, version, err)
	}
	rec.Stats = []byte(stats)
	return rec, nil
}
