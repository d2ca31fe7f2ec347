package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/pkgscope/pkgscope/internal/store"
)

// CollectBlobs implements store.BlobCollector in one write transaction:
// writers are serialised (one connection here, SQLite's file lock across
// processes), so the checks and the DELETE see no PutBlobs, commit or
// PutIndex in between, and a pass never overlaps another.
//
// The freed pages then go back to the file system (collectDisk).
func (s *Store) CollectBlobs(ctx context.Context, grace, every time.Duration, limit int) (store.BlobPass, error) {
	if limit < 1 || grace < 0 || every < 0 {
		return store.BlobPass{}, fmt.Errorf("sqlite: collect blobs: limit %d, grace %v, every %v out of range", limit, grace, every)
	}
	var pass store.BlobPass
	err := s.write(ctx, func(tx *sql.Tx) error {
		pass = store.BlobPass{}
		now := time.Now()
		var position []byte
		var lastPass int64
		if err := tx.QueryRowContext(ctx, `SELECT position, last_pass FROM blob_gc WHERE id = 1`).Scan(&position, &lastPass); err != nil {
			return err
		}
		if lastPass > now.Add(-every).UnixMicro() {
			return nil
		}
		if position == nil {
			position = []byte{} // the start: X'' sorts before every hash (NULL would match none)
		}
		pass.Ran = true
		var last []byte
		err := tx.QueryRowContext(ctx, `
			SELECT count(*), max(hash) FROM (SELECT hash FROM blobs WHERE hash > ? ORDER BY hash LIMIT ?)`,
			position, limit).Scan(&pass.Examined, &last)
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `
			DELETE FROM blobs
			WHERE hash IN (SELECT hash FROM blobs WHERE hash > ? ORDER BY hash LIMIT ?)
			  AND EXISTS (SELECT 1 FROM blob_written w WHERE w.hash = blobs.hash AND w.written_at < ?)
			  AND NOT EXISTS (SELECT 1 FROM files f WHERE f.hash = blobs.hash)
			  AND NOT EXISTS (SELECT 1 FROM index_chunks c WHERE c.hash = blobs.hash)
			RETURNING length(data)`,
			position, limit, now.Add(-grace).UnixMicro())
		if err != nil {
			return err
		}
		for rows.Next() {
			var n int64
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return err
			}
			pass.Deleted++
			pass.Freed += n
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if pass.Examined < limit {
			pass.Wrapped, last = true, []byte{}
		}
		_, err = tx.ExecContext(ctx, `UPDATE blob_gc SET position = ?, last_pass = ? WHERE id = 1`, last, now.UnixMicro())
		return err
	})
	if err != nil {
		return store.BlobPass{}, fmt.Errorf("sqlite: collect blobs: %w", interpretError(err))
	}
	if pass.Deleted > 0 {
		if err := s.collectDisk(ctx); err != nil {
			return pass, err
		}
	}
	return pass, nil
}

// collectDisk hands the database's free pages back to the file system.
// A DELETE only moves a row's pages to the file's free list, where later
// inserts reuse them; the file shrinks only by VACUUM, or, in a file with
// auto_vacuum=incremental (every file Open creates since the collector
// exists), by PRAGMA incremental_vacuum, which moves pages from the end
// of the file into the free ones and truncates it. In WAL mode the moved
// pages go to the WAL first and the file shrinks at the next checkpoint.
// A file created earlier (auto_vacuum=none) keeps its free list for new
// bodies and never shrinks by itself: docs/RELIABILITY.md says how to
// convert it, offline, with VACUUM.
func (s *Store) collectDisk(ctx context.Context) error {
	// The pragma returns a row per step; reading them all runs it to
	// the end. On a file without auto_vacuum it does nothing.
	rows, err := s.w.QueryContext(ctx, `PRAGMA incremental_vacuum`)
	if err != nil {
		return fmt.Errorf("sqlite: return freed pages: %w", interpretError(err))
	}
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("sqlite: return freed pages: %w", interpretError(err))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: return freed pages: %w", interpretError(err))
	}
	return nil
}
