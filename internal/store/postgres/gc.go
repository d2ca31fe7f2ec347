package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pkgscope/pkgscope/internal/store"
)

// CollectBlobs implements store.BlobCollector in one transaction: it locks
// blob_gc's row (SKIP LOCKED: a pass running elsewhere skips this one),
// runs one DELETE over the next limit blobs after the row's position, and
// moves the position on.
//
// The DELETE locks each garbage row FOR UPDATE before deleting it, and in
// READ COMMITTED a row updated since the statement's snapshot is checked
// again in its new version: a PutBlobs that refreshed written_at meanwhile
// makes the row young, and it is kept. Rows another transaction holds
// (being refreshed, or key-locked by a commit or PutIndex naming them) are
// skipped, not waited for. A file or chunk row committed after the
// snapshot is not seen by NOT EXISTS, but the foreign keys are checked
// again at the end of the statement and fail it, deleting nothing; that
// needs an ingest to hold a body uncommitted for longer than grace.
func (s *Store) CollectBlobs(ctx context.Context, grace, every time.Duration, limit int) (store.BlobPass, error) {
	if limit < 1 || grace < 0 || every < 0 {
		return store.BlobPass{}, fmt.Errorf("postgres: collect blobs: limit %d, grace %v, every %v out of range", limit, grace, every)
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
	defer cancel()
	var pass store.BlobPass
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		pass = store.BlobPass{}
		var position []byte
		err := tx.QueryRow(ctx, `
			SELECT position FROM blob_gc
			WHERE id = 1 AND last_pass <= now() - $1::bigint * interval '1 microsecond'
			FOR UPDATE SKIP LOCKED`, every.Microseconds()).Scan(&position)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // running elsewhere, or ran less than every ago
		}
		if err != nil {
			return err
		}
		pass.Ran = true
		var last []byte
		err = tx.QueryRow(ctx, `
			WITH cand AS (
				SELECT hash FROM blobs WHERE hash > $1 ORDER BY hash LIMIT $2
			), garbage AS (
				SELECT b.hash FROM blobs b
				WHERE b.hash IN (SELECT hash FROM cand)
				  AND b.written_at < now() - $3::bigint * interval '1 microsecond'
				  AND NOT EXISTS (SELECT 1 FROM files f WHERE f.hash = b.hash)
				  AND NOT EXISTS (SELECT 1 FROM index_chunks c WHERE c.hash = b.hash)
				ORDER BY b.hash
				FOR UPDATE OF b SKIP LOCKED
			), gone AS (
				DELETE FROM blobs b USING garbage g WHERE b.hash = g.hash
				RETURNING octet_length(b.data) AS n
			)
			SELECT (SELECT count(*) FROM cand), (SELECT hash FROM cand ORDER BY hash DESC LIMIT 1),
			       (SELECT count(*) FROM gone), (SELECT coalesce(sum(n), 0) FROM gone)`,
			position, limit, grace.Microseconds(),
		).Scan(&pass.Examined, &last, &pass.Deleted, &pass.Freed)
		if err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "23503" {
				return fmt.Errorf("a blob older than the grace was named while the pass ran (an ingest outlasting it?), nothing deleted: %s", pgErr.Message)
			}
			return err
		}
		if pass.Examined < limit {
			pass.Wrapped, last = true, []byte{}
		}
		_, err = tx.Exec(ctx, `UPDATE blob_gc SET position = $1, last_pass = now() WHERE id = 1`, last)
		return err
	})
	if err != nil {
		return store.BlobPass{}, fmt.Errorf("postgres: collect blobs: %w", interpretError(err))
	}
	return pass, nil
}
