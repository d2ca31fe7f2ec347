package postgres

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/migrations"
)

// beforeFilesHash is the last migration before files_hash is built
// (00009), which the tests below migrate to first.
const beforeFilesHash = 8

// migratedTo returns a database on a fresh schema migrated to version,
// holding one stored body and one version with a file of it, and the
// schema's URL.
func migratedTo(t *testing.T, version int64) (*sql.DB, string) {
	t.Helper()
	url := pgtest.URL(t)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(t.Context(), version); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO blobs (hash, size, codec, data) VALUES (sha256('x'), 1, 0, 'x')`,
		`INSERT INTO versions (name, version, state, file_count) VALUES ('one', '1.0.0', 'ready', 1)`,
		`INSERT INTO files (version_id, path, hash, size, is_binary) SELECT id, 'a.js', sha256('x'), 1, false FROM versions`,
	} {
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return db, url
}

// filesHash is files_hash's oid and validity; oid 0 when it is absent.
func filesHash(t *testing.T, db *sql.DB) (oid uint32, valid bool) {
	t.Helper()
	err := db.QueryRowContext(t.Context(),
		`SELECT indexrelid::oid, indisvalid FROM pg_index WHERE indexrelid = to_regclass('files_hash')`).Scan(&oid, &valid)
	if err == sql.ErrNoRows {
		return 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return oid, valid
}

// TestFilesHashBuildLetsCommitsThrough: a replica of the previous release
// is committing a version (its transaction holds a write lock on files)
// when another starts on this one and migrates. The files_hash build
// waits for that commit without blocking others: a second commit and a
// read of blobs go through while it waits. Built in 00008's transaction,
// as before, it took a SHARE lock on files and blocked them both.
func TestFilesHashBuildLetsCommitsThrough(t *testing.T) {
	ctx := t.Context()
	db, url := migratedTo(t, beforeFilesHash)
	if oid, _ := filesHash(t, db); oid != 0 {
		t.Fatalf("files_hash exists after migration %d: the build is still in a transaction", beforeFilesHash)
	}
	conn := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	writer, other := conn(), conn()
	commit, err := writer.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer commit.Rollback(context.Background())
	if _, err := commit.Exec(ctx, `INSERT INTO files (version_id, path, hash, size, is_binary) SELECT id, 'b.js', sha256('x'), 1, false FROM versions`); err != nil {
		t.Fatal(err)
	}
	var writerPID int
	if err := writer.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&writerPID); err != nil {
		t.Fatal(err)
	}

	migrated := make(chan error, 1)
	go func() {
		s, err := Open(context.WithoutCancel(ctx), url, testOptions)
		if err == nil {
			s.Close()
		}
		migrated <- err
	}()
	// The build waits for the open commit: find the backend it blocks.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for waiting := false; !waiting; {
		select {
		case err := <-migrated:
			t.Fatalf("the migration ended (%v) while a commit was open: files_hash was not built concurrently", err)
		case <-deadline:
			t.Fatal("no backend waits for the open commit after a minute")
		case <-tick.C:
		}
		if err := other.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid)) AND query LIKE 'CREATE INDEX CONCURRENTLY%')`, writerPID).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	// A guard, not a measure: a blocked statement fails the test instead
	// of hanging it.
	if _, err := other.Exec(ctx, `SET lock_timeout = '30s'`); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(ctx, `INSERT INTO files (version_id, path, hash, size, is_binary) SELECT id, 'c.js', sha256('x'), 1, false FROM versions`); err != nil {
		t.Errorf("a commit while files_hash builds: %v", err)
	}
	var n int
	if err := other.QueryRow(ctx, `SELECT count(*) FROM blobs`).Scan(&n); err != nil || n != 1 {
		t.Errorf("reading blobs while files_hash builds: %d, %v", n, err)
	}
	if err := commit.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-migrated; err != nil {
		t.Fatal(err)
	}
	if oid, valid := filesHash(t, db); oid == 0 || !valid {
		t.Errorf("files_hash after the migration: oid %d, valid %v", oid, valid)
	}
}

// TestFilesHashKeptWhereAlreadyBuilt: a database that built files_hash in
// 00008, before the build moved to 00009, keeps its index: 00009 neither
// fails nor builds it again.
func TestFilesHashKeptWhereAlreadyBuilt(t *testing.T) {
	db, url := migratedTo(t, beforeFilesHash)
	if _, err := db.ExecContext(t.Context(), `CREATE INDEX files_hash ON files (hash)`); err != nil { // as 00008 did
		t.Fatal(err)
	}
	before, _ := filesHash(t, db)
	s, err := Open(t.Context(), url, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if after, valid := filesHash(t, db); after != before || !valid {
		t.Errorf("files_hash oid %d (valid %v) after the migration, want the one built before, %d", after, valid, before)
	}
}

// TestFilesHashBuildRetriedAfterAFailure: a concurrent build that failed
// leaves an invalid index of its name; the next start drops it and builds
// files_hash again, rather than take the name for a finished build.
func TestFilesHashBuildRetriedAfterAFailure(t *testing.T) {
	db, url := migratedTo(t, beforeFilesHash)
	if _, err := db.ExecContext(t.Context(), `INSERT INTO files (version_id, path, hash, size, is_binary) SELECT id, 'b.js', sha256('x'), 1, false FROM versions`); err != nil {
		t.Fatal(err)
	}
	// Two files share a body, so a unique build fails half-way, as a
	// build stopped by a crash or a cancel does.
	if _, err := db.ExecContext(t.Context(), `CREATE UNIQUE INDEX CONCURRENTLY files_hash ON files (hash)`); err == nil {
		t.Fatal("the unique build succeeded")
	}
	if oid, valid := filesHash(t, db); oid == 0 || valid {
		t.Fatalf("after the failed build: oid %d, valid %v; want an invalid index", oid, valid)
	}
	s, err := Open(t.Context(), url, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if oid, valid := filesHash(t, db); oid == 0 || !valid {
		t.Errorf("files_hash after the migration: oid %d, valid %v", oid, valid)
	}
}
