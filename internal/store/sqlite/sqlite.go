// Package sqlite is the embedded store.Store: one SQLite file
// (pkgscope.db) in a directory, through the pure-Go modernc.org/sqlite
// driver, so a single pkgscope binary runs with no services and no cgo.
//
// SQLite allows one writer at a time, so the Store keeps two pools on the
// file: a one-connection writer whose transactions begin IMMEDIATE (taking
// the write lock up front, so two writers never deadlock upgrading a read
// lock), and a pool of query-only readers, which WAL mode lets run
// alongside the writer. Bodies are compressed before the writer is taken,
// so the write lock is held only for inserts.
package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/blobcodec"
	"github.com/pkgscope/pkgscope/migrations"
)

// FileName is the database file Open creates in its directory.
const FileName = "pkgscope.db"

// Options tunes a Store. A zero field takes its default.
type Options struct {
	// ReadConns caps the reader pool. Default GOMAXPROCS (at least 4):
	// reads are CPU-bound in the driver, so more connections than cores
	// only queue.
	ReadConns int
	// BusyTimeout is how long a statement waits for a lock held by another
	// connection or process before failing with SQLITE_BUSY. Default 5 s,
	// well above the longest write (a commit of ~9,000 file rows takes
	// tens of milliseconds).
	BusyTimeout time.Duration
	// PutBlobsBatchBytes is how many bytes of stored (compressed) bodies
	// one write transaction inserts before committing and letting other
	// writers in. Default 32 MiB.
	PutBlobsBatchBytes int
	// Codec says when and how to compress bodies.
	Codec blobcodec.Config
}

// DefaultOptions returns the defaults documented on Options.
func DefaultOptions() Options {
	return Options{
		ReadConns:          max(4, runtime.GOMAXPROCS(0)),
		BusyTimeout:        5 * time.Second,
		PutBlobsBatchBytes: 32 << 20,
		Codec:              blobcodec.DefaultConfig(),
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	o.ReadConns = cmp.Or(o.ReadConns, d.ReadConns)
	o.BusyTimeout = cmp.Or(o.BusyTimeout, d.BusyTimeout)
	o.PutBlobsBatchBytes = cmp.Or(o.PutBlobsBatchBytes, d.PutBlobsBatchBytes)
	return o
}

// Store is a store.Store in one SQLite file. It is safe for concurrent
// use within one process; several processes may share the file, but
// writes then queue on SQLite's file lock up to BusyTimeout.
type Store struct {
	w     *sql.DB // the single writer connection
	r     *sql.DB // query-only readers
	coder *blobcodec.Coder
	opts  Options
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed, mode 0700) the directory dir and the
// database file FileName in it, applies pending migrations, and returns a
// Store. Close it when done.
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if opts.ReadConns < 1 || opts.BusyTimeout < 0 || opts.PutBlobsBatchBytes < 1 {
		return nil, fmt.Errorf("sqlite: invalid options %+v", opts)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: create store directory: %w", err)
	}
	abs, err := filepath.Abs(filepath.Join(dir, FileName))
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	s := &Store{opts: opts}
	if s.coder, err = blobcodec.New(opts.Codec); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	s.w, err = sql.Open("sqlite", dsn(abs, opts, false))
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	s.w.SetMaxOpenConns(1)
	// Keep the writer open: reopening would rerun the pragmas and, for
	// the last connection to the file, checkpoint the WAL.
	s.w.SetConnMaxIdleTime(0)
	s.w.SetConnMaxLifetime(0)

	p, err := goose.NewProvider(goose.DialectSQLite3, s.w, migrations.SQLite)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: migrate: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: migrate %s: %w", abs, err)
	}

	s.r, err = sql.Open("sqlite", dsn(abs, opts, true))
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	s.r.SetMaxOpenConns(opts.ReadConns)
	s.r.SetMaxIdleConns(opts.ReadConns)
	if err := s.r.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	return s, nil
}

// dsn is the driver's connection string for the file at abs. Every
// connection gets busy_timeout, foreign_keys and journal_size_limit (all
// per connection in SQLite); the writer also sets WAL (persistent in the file) and
// synchronous=NORMAL, which in WAL mode still never corrupts the file and
// only risks losing the last commits on power loss, not on a crash.
func dsn(abs string, opts Options, readOnly bool) string {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(opts.BusyTimeout.Milliseconds()))
	q.Set("_foreign_keys", "1")
	// After a checkpoint has copied the WAL back into the file, truncate
	// it: left alone it keeps the size of the largest transaction since
	// it was created (a PutBlobs batch is up to PutBlobsBatchBytes), disk
	// that holds nothing (7 MB of the 70 MB store after ten lucide-react
	// versions, bench/storage). Per connection, as whichever connection
	// checkpoints truncates.
	q.Add("_pragma", "journal_size_limit(0)")
	if readOnly {
		q.Set("_query_only", "1")
	} else {
		q.Set("_journal_mode", "WAL")
		q.Set("_synchronous", "NORMAL")
		q.Set("_txlock", "immediate")
		// A new file keeps its free pages apart so the blob collector
		// can hand them back (PRAGMA incremental_vacuum after a pass).
		// It must be set before the first table is created; on a file
		// created without it, it does nothing (see collectDisk).
		q.Add("_pragma", "auto_vacuum(incremental)")
	}
	// A file: URI with the path escaped, so a directory name holding '?'
	// or '#' cannot be read as the start of the parameters.
	return "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
}

// DB returns the store's single writer connection, for components that
// keep their own tables in the same file (the warm job queue,
// internal/warm). SQLite admits one writer at a time, so they must write
// through this pool rather than open another. Callers must not close it,
// and must not hold a transaction or an open result set on it while
// calling the Store (it has one connection).
func (s *Store) DB() *sql.DB { return s.w }

// Close closes both pools. It waits for statements in progress.
func (s *Store) Close() error {
	var errs []error
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if s.coder != nil {
		s.coder.Close()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}

// interpretError turns the driver errors the store contract names into
// store's sentinels; anything else passes through. Callers wrap the result
// with what they were doing.
func interpretError(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %s", store.ErrExists, se.Error())
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			// Inserts into files and index_chunks: their version is
			// the row just looked up, so the hash is what failed.
			return store.ErrMissingBlob
		}
	}
	return err
}

// Version implements store.VersionReader.
func (s *Store) Version(ctx context.Context, name, version string) (store.Version, error) {
	v := store.Version{Name: name, Version: version}
	var state string
	var created int64
	err := s.r.QueryRowContext(ctx, `
		SELECT integrity, state, reason, file_count, total_bytes, created_at, deprecated
		FROM versions WHERE name = ? AND version = ?`, name, version,
	).Scan(&v.Integrity, &state, &v.Reason, &v.FileCount, &v.TotalBytes, &created, &v.Deprecated)
	if err != nil {
		return store.Version{}, fmt.Errorf("sqlite: look up %s@%s: %w", name, version, interpretError(err))
	}
	v.State = store.VersionState(state)
	v.CreatedAt = time.UnixMicro(created)
	return v, nil
}

// Files implements store.VersionReader.
func (s *Store) Files(ctx context.Context, name, version string) ([]store.File, error) {
	// One read transaction, so the id and the rows come from one snapshot.
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite: files of %s@%s: %w", name, version, err)
	}
	defer tx.Rollback()
	var id int64
	var count int
	err = tx.QueryRowContext(ctx, `
		SELECT id, file_count FROM versions
		WHERE name = ? AND version = ? AND state = 'ready'`, name, version,
	).Scan(&id, &count)
	if err != nil {
		return nil, fmt.Errorf("sqlite: files of %s@%s: %w", name, version, interpretError(err))
	}
	rows, err := tx.QueryContext(ctx, `
		SELECT path, hash, size, is_binary, valid_utf8, mode, ord FROM files
		WHERE version_id = ? ORDER BY path`, id)
	if err != nil {
		return nil, fmt.Errorf("sqlite: files of %s@%s: %w", name, version, interpretError(err))
	}
	defer rows.Close()
	files := make([]store.File, 0, count)
	var path, hash sql.RawBytes
	var mode int64
	var valid sql.NullBool
	for rows.Next() {
		var f store.File
		if err := rows.Scan(&path, &hash, &f.Size, &f.Binary, &valid, &mode, &f.Order); err != nil {
			return nil, fmt.Errorf("sqlite: files of %s@%s: %w", name, version, err)
		}
		if len(hash) != len(f.Hash) {
			return nil, fmt.Errorf("sqlite: files of %s@%s: %q has a %d-byte hash", name, version, path, len(hash))
		}
		f.Path = string(path)
		f.Mode = uint32(mode)
		f.UTF8 = store.UTF8OfNull(valid)
		copy(f.Hash[:], hash)
		files = append(files, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: files of %s@%s: %w", name, version, interpretError(err))
	}
	return files, nil
}

// Blob implements store.BlobReader.
func (s *Store) Blob(ctx context.Context, h store.Hash) ([]byte, error) {
	size, codec, data, err := s.stored(ctx, h)
	if err != nil {
		return nil, err
	}
	body, err := s.coder.Decode(codec, size, data)
	if err != nil {
		return nil, fmt.Errorf("sqlite: read blob %x: %w", h, err)
	}
	return body, nil
}

// Blobs implements store.BlobsReader one body at a time: each is a read
// of the local file, with no round trip to save.
func (s *Store) Blobs(ctx context.Context, hs []store.Hash, fn func(store.Hash, []byte) error) error {
	seen := make(map[store.Hash]bool, len(hs))
	for _, h := range hs {
		if seen[h] {
			continue
		}
		seen[h] = true
		body, err := s.Blob(ctx, h)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := fn(h, body); err != nil {
			return err
		}
	}
	return nil
}

// OpenBlob implements store.BlobStreamer. The driver has no incremental
// blob I/O, and substr() on a blob loads all of it on every call, so the
// stored form is read whole at the first Read (length() does not load
// it). A zstd body is then decoded as it is read: the stream holds the
// compressed bytes (a tenth of a JavaScript body) and a window; a raw body
// (stored raw because it did not compress) is held as is. Footprint says
// so, for the caller's budget.
func (s *Store) OpenBlob(ctx context.Context, h store.Hash) (store.BlobStream, error) {
	var size, stored int64
	var codec int16
	err := s.r.QueryRowContext(ctx, `SELECT size, codec, length(data) FROM blobs WHERE hash = ?`, h[:]).
		Scan(&size, &codec, &stored)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open blob %x: %w", h, interpretError(err))
	}
	src := &wholeSource{s: s, ctx: ctx, h: h}
	st, err := blobcodec.NewStream(blobcodec.Codec(codec), size, stored, stored, src, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: read blob %x: %w", h, err)
	}
	return st, nil
}

// wholeSource reads a blob's stored form on first use and keeps it.
type wholeSource struct {
	s    *Store
	ctx  context.Context
	h    store.Hash
	data *bytes.Reader
}

func (w *wholeSource) ReadAt(p []byte, off int64) (int, error) {
	if w.data == nil {
		_, _, data, err := w.s.stored(w.ctx, w.h)
		if err != nil {
			return 0, err
		}
		w.data = bytes.NewReader(data)
	}
	return w.data.ReadAt(p, off)
}

// stored reads a blob's row: its body size and stored form.
func (s *Store) stored(ctx context.Context, h store.Hash) (int64, blobcodec.Codec, []byte, error) {
	var size int64
	var codec int16
	var data []byte
	err := s.r.QueryRowContext(ctx, `SELECT size, codec, data FROM blobs WHERE hash = ?`, h[:]).
		Scan(&size, &codec, &data)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("sqlite: read blob %x: %w", h, interpretError(err))
	}
	return size, blobcodec.Codec(codec), data, nil
}

// BlobCount returns how many distinct bodies are stored. Tests use it to
// check deduplication; it scans the blobs table's index.
func (s *Store) BlobCount(ctx context.Context) (int64, error) {
	var n int64
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM blobs`).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: count blobs: %w", interpretError(err))
	}
	return n, nil
}
