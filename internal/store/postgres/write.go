package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/blobcodec"
)

// PutBlobs implements store.Writer.
//
// Bodies already stored are found first by one indexed statement that
// also refreshes the written_at (BlobCollector's grace runs from it) of
// those written more than BlobRefreshAfter ago, and returns every stored
// hash; they are neither compressed nor sent again: most files of a new
// version are unchanged from the previous one, and compression is the
// costly step. The refresh is what keeps an old body an ingest reuses from
// the collector: if a collector's DELETE locked the row first, the UPDATE
// waits, finds it gone, and the body is inserted again below; if the
// UPDATE came first, the DELETE re-checks the row it waited for, finds it
// young and keeps it. A body not refreshed was written less than
// BlobRefreshAfter ago, so it is younger than the grace for longer than
// the ingest can take. (The SELECT half reads the statement's snapshot,
// before the UPDATE: each stored hash comes from one half.)
// The rest are compressed blobcodec's Workers at once and go in multi-row
// INSERT ... ON CONFLICT DO NOTHING statements of at most
// PutBlobsBatchBytes each, in hash order, each sent while the bodies after
// it compress. The order matters: two
// ingests inserting overlapping sets in different orders could each hold
// a key the other waits for and deadlock. (The UPDATE's index scan takes
// its row locks in hash order too.)
func (s *Store) PutBlobs(ctx context.Context, blobs []store.Blob) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
	defer cancel()
	if len(blobs) == 0 {
		return nil
	}
	blobs = store.SortedUnique(blobs)
	hashes := make([][]byte, len(blobs))
	for i := range blobs {
		hashes[i] = blobs[i].Hash[:]
	}
	rows, err := s.pool.Query(ctx, `
		WITH refreshed AS (
			UPDATE blobs SET written_at = now()
			WHERE hash = ANY($1) AND written_at < now() - $2::bigint * interval '1 microsecond'
			RETURNING hash
		)
		SELECT hash FROM refreshed
		UNION ALL
		SELECT hash FROM blobs WHERE hash = ANY($1) AND written_at >= now() - $2::bigint * interval '1 microsecond'`,
		hashes, s.opts.BlobRefreshAfter.Microseconds())
	if err != nil {
		return fmt.Errorf("postgres: put blobs: find stored: %w", interpretError(err))
	}
	stored := make(map[store.Hash]bool)
	var h []byte
	_, err = pgx.ForEachRow(rows, []any{&h}, func() error {
		stored[store.Hash(h)] = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: put blobs: find stored: %w", interpretError(err))
	}
	missing := blobs[:0:0]
	for _, b := range blobs {
		if !stored[b.Hash] {
			missing = append(missing, b)
		}
	}

	var batch insertBatch
	err = s.coder.EncodeEach(ctx, missing, func(b store.Blob, codec blobcodec.Codec, data []byte) error {
		batch.add(b.Hash, int64(len(b.Data)), int16(codec), data)
		if batch.bytes < s.opts.PutBlobsBatchBytes {
			return nil
		}
		return s.insertBlobs(ctx, &batch)
	})
	if err != nil {
		return err
	}
	return s.insertBlobs(ctx, &batch)
}

// insertBatch collects blob rows column by column for one unnest INSERT.
type insertBatch struct {
	hashes [][]byte
	sizes  []int64
	codecs []int16
	data   [][]byte
	bytes  int
}

func (b *insertBatch) add(h store.Hash, size int64, codec int16, data []byte) {
	b.hashes = append(b.hashes, h[:])
	b.sizes = append(b.sizes, size)
	b.codecs = append(b.codecs, codec)
	b.data = append(b.data, data)
	b.bytes += len(data) + len(h)
}

func (b *insertBatch) reset() {
	clear(b.data) // let go of the written frames
	b.hashes, b.sizes, b.codecs, b.data = b.hashes[:0], b.sizes[:0], b.codecs[:0], b.data[:0]
	b.bytes = 0
}

// insertBlobs sends the batch as one statement and empties it.
func (s *Store) insertBlobs(ctx context.Context, b *insertBatch) error {
	if len(b.hashes) == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO blobs (hash, size, codec, data)
		SELECT * FROM unnest($1::bytea[], $2::bigint[], $3::smallint[], $4::bytea[])
		ON CONFLICT (hash) DO NOTHING`,
		b.hashes, b.sizes, b.codecs, b.data)
	if err != nil {
		return fmt.Errorf("postgres: put %d blobs: %w", len(b.hashes), interpretError(err))
	}
	b.reset()
	return nil
}

// CommitVersion implements store.Writer. It runs one transaction: an
// upsert of the version row that only takes over a missing or failed row,
// then a COPY of every file row (next@16 has 8,700 files; COPY sends them
// in one stream instead of 8,700 statements). The foreign key from
// files.hash to blobs checks every body exists.
//
// Concurrent commits of one version serialise on the versions row: the
// upsert of the second waits for the first transaction, then sees a ready
// row, updates nothing and returns no id, which is ErrExists. If the first
// rolls back instead, the second proceeds.
func (s *Store) CommitVersion(ctx context.Context, v store.NewVersion) error {
	if err := v.Validate(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, `
			INSERT INTO versions (name, version, state, integrity, file_count, total_bytes, ingest_format, deprecated)
			VALUES ($1, $2, 'ready', $3, $4, $5, $6, $7)
			ON CONFLICT (name, version) DO UPDATE
			SET state = 'ready', reason = '', integrity = EXCLUDED.integrity,
			    file_count = EXCLUDED.file_count, total_bytes = EXCLUDED.total_bytes,
			    ingest_format = EXCLUDED.ingest_format, deprecated = EXCLUDED.deprecated, updated_at = now()
			WHERE versions.state <> 'ready'
			RETURNING id`,
			v.Name, v.Version, v.Integrity, len(v.Files), v.TotalBytes(), v.Format(), v.Deprecated,
		).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrExists
		}
		if err != nil {
			return fmt.Errorf("record version: %w", interpretError(err))
		}
		// A failed record never has files (only this transaction writes
		// them, and it leaves the version ready), so there is nothing to
		// clear before the COPY.
		// In hash order (store.HashOrder), for the files_hash index.
		order := store.HashOrder(v.Files)
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"files"},
			[]string{"version_id", "path", "hash", "size", "is_binary", "valid_utf8", "mode", "ord"},
			pgx.CopyFromSlice(len(v.Files), func(i int) ([]any, error) {
				f := &v.Files[order[i]]
				return []any{id, []byte(f.Path), f.Hash[:], f.Size, f.Binary, f.UTF8.Null(), int32(f.Mode), int32(f.Order)}, nil
			}))
		if err != nil {
			return fmt.Errorf("record %d files: %w", len(v.Files), interpretError(err))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: commit %s@%s: %w", v.Name, v.Version, interpretError(err))
	}
	return nil
}

// MarkFailed implements store.Writer. The upsert's WHERE leaves a ready
// row untouched, and it waits for an in-flight commit of the same version
// to finish before deciding, so it can never hide a version that commit
// made ready.
func (s *Store) MarkFailed(ctx context.Context, name, version, reason string) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
	defer cancel()
	_, err := s.pool.Exec(ctx, `
		INSERT INTO versions (name, version, state, reason)
		VALUES ($1, $2, 'failed', $3)
		ON CONFLICT (name, version) DO UPDATE
		SET reason = EXCLUDED.reason, updated_at = now()
		WHERE versions.state = 'failed'`,
		name, version, reason)
	if err != nil {
		return fmt.Errorf("postgres: mark %s@%s failed: %w", name, version, interpretError(err))
	}
	return nil
}
