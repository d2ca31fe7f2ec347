// Package postgres is the org-wide store.Store on Postgres (15 or later),
// shared by every pkgscope replica. Open migrates the schema (goose, under
// an advisory lock so replicas starting together migrate once) and serves
// from a pgx pool.
//
// Tables (migrations/postgres): blobs holds each body once, keyed by sha256
// and zstd-compressed; versions has one row per name@version attempted;
// files lists a ready version's files by path (bytea, byte order);
// version_indexes and index_chunks hold search indexes; blob_gc is the
// blob collector's shared position and schedule (gc.go).
package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/blobcodec"
)

// Options tunes a Store. A zero field takes its default.
type Options struct {
	// MaxConns caps the connection pool. Default 10: a replica's work is
	// short queries plus one COPY per commit, and Postgres' default
	// max_connections (100) is shared by every replica.
	MaxConns int32
	// MigrationLockTimeout bounds how long Open waits for another
	// replica's migration to finish. Default 5 minutes (goose's default).
	MigrationLockTimeout time.Duration
	// PutBlobsBatchBytes is how many bytes of stored (compressed) bodies
	// one INSERT statement carries. Default 8 MiB: large enough that a
	// typical package (a few MB compressed) goes in one round trip, small
	// enough that a package of 100 MB bodies does not build one huge
	// message in memory.
	PutBlobsBatchBytes int
	// Codec says when and how to compress bodies.
	Codec blobcodec.Config
	// QueryTimeout bounds one read (a version, a file list, a blob, an
	// index record), connecting included, so that a database that stopped
	// answering (a blackholed host, a full disk) fails the request with
	// store.ErrUnavailable instead of holding it until the client gives
	// up. Default 5s: these reads take a few milliseconds; the largest, a
	// 64 MiB blob, well under a second on a LAN.
	QueryTimeout time.Duration
	// WriteTimeout bounds one write statement or transaction (a batch of
	// PutBlobsBatchBytes, a commit, an index record). Default 1 minute: an
	// 8 MiB batch takes under 10s even at 10 Mbit/s.
	WriteTimeout time.Duration
	// BlobRefreshAfter is how old a stored body's written time must be
	// for PutBlobs to refresh it (store.BlobCollector). Refreshing every
	// reused body made PutBlobs of 5,000 stored bodies 11x slower (a
	// non-HOT update of each row: its page is full); a body written within
	// this is left as it is. The collector must then keep bodies for
	// longer than this plus fill-timeout: the mirror sets it to half of
	// blob-gc-grace (blobgc.Options.RefreshAfter), which config requires
	// to exceed fill-timeout. Default 12 hours, half the default grace.
	BlobRefreshAfter time.Duration
}

// DefaultOptions returns the defaults documented on Options.
func DefaultOptions() Options {
	return Options{
		MaxConns:             10,
		MigrationLockTimeout: 5 * time.Minute,
		PutBlobsBatchBytes:   8 << 20,
		Codec:                blobcodec.DefaultConfig(),
		QueryTimeout:         5 * time.Second,
		WriteTimeout:         time.Minute,
		BlobRefreshAfter:     12 * time.Hour,
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	o.MaxConns = cmp.Or(o.MaxConns, d.MaxConns)
	o.MigrationLockTimeout = cmp.Or(o.MigrationLockTimeout, d.MigrationLockTimeout)
	o.PutBlobsBatchBytes = cmp.Or(o.PutBlobsBatchBytes, d.PutBlobsBatchBytes)
	o.QueryTimeout = cmp.Or(o.QueryTimeout, d.QueryTimeout)
	o.WriteTimeout = cmp.Or(o.WriteTimeout, d.WriteTimeout)
	o.BlobRefreshAfter = cmp.Or(o.BlobRefreshAfter, d.BlobRefreshAfter)
	return o
}

// Store is a store.Store on Postgres. It is safe for concurrent use.
type Store struct {
	pool  *pgxpool.Pool
	coder *blobcodec.Coder
	opts  Options
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL or key=value
// string; a search_path parameter selects the schema), applies pending
// migrations, and returns a Store. Close it when done.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if opts.MaxConns < 1 || opts.PutBlobsBatchBytes < 1 || opts.MigrationLockTimeout < time.Second ||
		opts.QueryTimeout < 0 || opts.WriteTimeout < 0 || opts.BlobRefreshAfter < 0 {
		return nil, fmt.Errorf("postgres: invalid options %+v", opts)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse database URL: %w", err)
	}
	cfg.MaxConns = opts.MaxConns
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// Pool connections opened in the background have no caller's
		// deadline; connect_timeout in the URL wins.
		cfg.ConnConfig.ConnectTimeout = opts.QueryTimeout
	}
	if err := migrate(ctx, cfg.ConnConfig.Copy(), opts.MigrationLockTimeout); err != nil {
		return nil, err
	}
	coder, err := blobcodec.New(opts.Codec)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		coder.Close()
		return nil, fmt.Errorf("postgres: open pool: %w", err)
	}
	return &Store{pool: pool, coder: coder, opts: opts}, nil
}

// Pool returns the store's connection pool, for components that keep their
// own tables in the same database (the warm job queue, internal/warm).
// Callers must not close it; it is closed by Close.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close releases the pool. It waits for connections in use to be returned.
func (s *Store) Close() error {
	s.pool.Close()
	s.coder.Close()
	return nil
}

// interpretError turns the driver errors the store contract names into
// store's sentinels (ErrUnavailable: see unreachable); anything else
// passes through. Callers wrap the result
// with what they were doing.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	if unreachable(err) {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "23505": // unique_violation
			return fmt.Errorf("%w: %s", store.ErrExists, pgErr.Detail)
		case pgErr.Code == "23503" && pgErr.TableName != "blobs" &&
			(pgErr.ConstraintName == "files_hash_fkey" || pgErr.ConstraintName == "index_chunks_hash_fkey"): // foreign_key_violation
			// A file or an index chunk naming a body not stored. (The
			// same constraints fail a DELETE of a named body, which
			// reports the referenced table, blobs.)
			return fmt.Errorf("%w: %s", store.ErrMissingBlob, pgErr.Detail)
		}
	}
	return err
}

// Version implements store.VersionReader.
func (s *Store) Version(ctx context.Context, name, version string) (store.Version, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	v := store.Version{Name: name, Version: version}
	var state string
	err := s.pool.QueryRow(ctx, `
		SELECT integrity, state, reason, file_count, total_bytes, created_at, deprecated
		FROM versions WHERE name = $1 AND version = $2`, name, version,
	).Scan(&v.Integrity, &state, &v.Reason, &v.FileCount, &v.TotalBytes, &v.CreatedAt, &v.Deprecated)
	if err != nil {
		return store.Version{}, fmt.Errorf("postgres: look up %s@%s: %w", name, version, interpretError(err))
	}
	v.State = store.VersionState(state)
	return v, nil
}

// Files implements store.VersionReader.
func (s *Store) Files(ctx context.Context, name, version string) ([]store.File, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	var id int64
	var count int
	err := s.pool.QueryRow(ctx, `
		SELECT id, file_count FROM versions
		WHERE name = $1 AND version = $2 AND state = 'ready'`, name, version,
	).Scan(&id, &count)
	if err != nil {
		return nil, fmt.Errorf("postgres: files of %s@%s: %w", name, version, interpretError(err))
	}
	// A ready version's rows never change, so reading them outside the
	// transaction that found the id is consistent.
	rows, err := s.pool.Query(ctx, `
		SELECT path, hash, size, is_binary, valid_utf8, mode, ord FROM files
		WHERE version_id = $1 ORDER BY path`, id)
	if err != nil {
		return nil, fmt.Errorf("postgres: files of %s@%s: %w", name, version, interpretError(err))
	}
	defer rows.Close()
	files := make([]store.File, 0, count)
	var path, hash []byte
	var mode int64
	var valid sql.NullBool
	for rows.Next() {
		var f store.File
		if err := rows.Scan(&path, &hash, &f.Size, &f.Binary, &valid, &mode, &f.Order); err != nil {
			return nil, fmt.Errorf("postgres: files of %s@%s: %w", name, version, err)
		}
		if len(hash) != len(f.Hash) {
			return nil, fmt.Errorf("postgres: files of %s@%s: %q has a %d-byte hash", name, version, path, len(hash))
		}
		f.Path = string(path)
		f.Mode = uint32(mode)
		f.UTF8 = store.UTF8OfNull(valid)
		copy(f.Hash[:], hash)
		files = append(files, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: files of %s@%s: %w", name, version, interpretError(err))
	}
	return files, nil
}

// Blob implements store.BlobReader.
func (s *Store) Blob(ctx context.Context, h store.Hash) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	var size int64
	var codec int16
	var data []byte
	err := s.pool.QueryRow(ctx, `SELECT size, codec, data FROM blobs WHERE hash = $1`, h[:]).
		Scan(&size, &codec, &data)
	if err != nil {
		return nil, fmt.Errorf("postgres: read blob %x: %w", h, interpretError(err))
	}
	body, err := s.coder.Decode(blobcodec.Codec(codec), size, data)
	if err != nil {
		return nil, fmt.Errorf("postgres: read blob %x: %w", h, err)
	}
	return body, nil
}

// Blobs implements store.BlobsReader with one query for all of hs
// (hash = ANY), its rows decoded as they arrive.
func (s *Store) Blobs(ctx context.Context, hs []store.Hash, fn func(store.Hash, []byte) error) error {
	if len(hs) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	keys := make([][]byte, len(hs))
	for i := range hs {
		keys[i] = hs[i][:]
	}
	rows, err := s.pool.Query(ctx, `SELECT hash, size, codec, data FROM blobs WHERE hash = ANY($1)`, keys)
	if err != nil {
		return fmt.Errorf("postgres: read %d blobs: %w", len(hs), interpretError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var key, data []byte
		var size int64
		var codec int16
		if err := rows.Scan(&key, &size, &codec, &data); err != nil {
			return fmt.Errorf("postgres: read %d blobs: %w", len(hs), interpretError(err))
		}
		var h store.Hash
		if len(key) != len(h) {
			return fmt.Errorf("postgres: read %d blobs: a stored hash of %d bytes", len(hs), len(key))
		}
		copy(h[:], key)
		body, err := s.coder.Decode(blobcodec.Codec(codec), size, data)
		if err != nil {
			return fmt.Errorf("postgres: read blob %x: %w", h, err)
		}
		if err := fn(h, body); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: read %d blobs: %w", len(hs), interpretError(err))
	}
	return nil
}

// OpenBlob implements store.BlobStreamer. The stored form is read a
// chunk at a time with substring(): blobs.data is STORAGE EXTERNAL (not
// compressed by TOAST), so Postgres fetches only the TOAST chunks a
// substring covers.
func (s *Store) OpenBlob(ctx context.Context, h store.Hash) (store.BlobStream, error) {
	qctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	var size, stored int64
	var codec int16
	err := s.pool.QueryRow(qctx, `SELECT size, codec, octet_length(data) FROM blobs WHERE hash = $1`, h[:]).
		Scan(&size, &codec, &stored)
	if err != nil {
		return nil, fmt.Errorf("postgres: open blob %x: %w", h, interpretError(err))
	}
	st, err := blobcodec.NewStream(blobcodec.Codec(codec), size, stored, 0, chunkSource{s: s, ctx: ctx, h: h}, nil)
	if err != nil {
		return nil, fmt.Errorf("postgres: open blob %x: %w", h, err)
	}
	return st, nil
}

// chunkSource reads a blob's stored form at an offset, one query a call.
type chunkSource struct {
	s   *Store
	ctx context.Context
	h   store.Hash
}

func (c chunkSource) ReadAt(p []byte, off int64) (int, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.s.opts.QueryTimeout)
	defer cancel()
	var data []byte
	err := c.s.pool.QueryRow(ctx, `SELECT substring(data FROM $2 FOR $3) FROM blobs WHERE hash = $1`, c.h[:], off+1, len(p)).
		Scan(&data)
	if err != nil {
		return 0, fmt.Errorf("postgres: read blob %x: %w", c.h, interpretError(err))
	}
	n := copy(p, data)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// BlobCount returns how many distinct bodies are stored. Tests use it to
// check deduplication; it scans the blobs table.
func (s *Store) BlobCount(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM blobs`).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: count blobs: %w", interpretError(err))
	}
	return n, nil
}
