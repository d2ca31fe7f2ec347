package postgres

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/storetest"
	"github.com/pkgscope/pkgscope/migrations"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testOptions keeps each test's pool small: the suite opens a store per
// subtest against a server shared with other packages' tests.
// BlobRefreshAfter is what the mirror sets for the suite's grace.
var testOptions = Options{MaxConns: 4, BlobRefreshAfter: storetest.Grace / 2}

func openTest(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), pgtest.URL(t), testOptions)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return aged{openTest(t)} })
}

// aged is the store with storetest.BlobAger, for the collector's tests.
type aged struct{ *Store }

func (a aged) AgeBlobs(ctx context.Context, d time.Duration) error {
	_, err := a.pool.Exec(ctx, `UPDATE blobs SET written_at = written_at - $1::bigint * interval '1 microsecond'`, d.Microseconds())
	return err
}

// TestReplicasMigrateTogether opens several stores on one empty schema at
// once, as replicas starting together do: all must succeed, and the
// migration must be applied once.
func TestReplicasMigrateTogether(t *testing.T) {
	url := pgtest.URL(t)
	const replicas = 4
	stores := make([]*Store, replicas)
	errs := make([]error, replicas)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = Open(context.Background(), url, testOptions)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: Open: %v", i, err)
			continue
		}
		defer stores[i].Close()
	}
	if t.Failed() {
		return
	}
	var applied int
	err := stores[0].pool.QueryRow(t.Context(),
		`SELECT count(*) FROM goose_db_version WHERE version_id > 0 AND is_applied`).Scan(&applied)
	if err != nil {
		t.Fatal(err)
	}
	files, err := fs.Glob(migrations.Postgres, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if applied != len(files) {
		t.Errorf("goose_db_version records %d applied migrations, want each of the %d once", applied, len(files))
	}
}

func TestOpenMissingSchema(t *testing.T) {
	url := pgtest.URL(t) + "_no_such_schema"
	s, err := Open(context.Background(), url, testOptions)
	if err == nil {
		s.Close()
		t.Fatal("Open succeeded on a search_path naming no existing schema")
	}
}

// openBench opens a store closed when b ends.
func openBench(b *testing.B) *Store {
	s := openTest(b)
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkPutBlobs(b *testing.B)       { storetest.BenchmarkPutBlobs(b, openBench(b)) }
func BenchmarkPutBlobsStored(b *testing.B) { storetest.BenchmarkPutBlobsStored(b, openBench(b), 0) }
func BenchmarkCollectBlobs(b *testing.B)   { storetest.BenchmarkCollectBlobs(b, openBench(b)) }
func BenchmarkPutBlobsStoredOld(b *testing.B) {
	storetest.BenchmarkPutBlobsStored(b, aged{openBench(b)}, 24*time.Hour)
}
func BenchmarkCommitVersion(b *testing.B) { storetest.BenchmarkCommitVersion(b, openBench(b)) }
func BenchmarkFiles(b *testing.B)         { storetest.BenchmarkFiles(b, openBench(b)) }
func BenchmarkBlob(b *testing.B)          { storetest.BenchmarkBlob(b, openBench(b)) }

// TestCollectSkipsBlobsInUse: a pass meets old unreferenced blobs that
// another transaction holds — a PutBlobs refreshing one, not yet
// committed, and a commit whose file row names the other (its foreign key
// check key-locks the blob) — and keeps both, without waiting for them
// (FOR UPDATE SKIP LOCKED: a pass that waited would wait here for ever, as
// this test commits only after the pass returns; WriteTimeout then fails
// it). Once both transactions are over, the refreshed blob is young and
// kept, and the other, named by nothing since the commit rolled back, goes.
func TestCollectSkipsBlobsInUse(t *testing.T) {
	ctx := t.Context()
	opts := testOptions
	opts.WriteTimeout = 20 * time.Second
	s, err := Open(ctx, pgtest.URL(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	refreshed := store.Blob{Hash: store.HashOf([]byte("refreshed")), Data: []byte("refreshed")}
	named := store.Blob{Hash: store.HashOf([]byte("named")), Data: []byte("named")}
	if err := s.PutBlobs(ctx, []store.Blob{refreshed, named}); err != nil {
		t.Fatal(err)
	}
	if err := (aged{s}).AgeBlobs(ctx, 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	refresh, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer refresh.Rollback(ctx)
	if _, err := refresh.Exec(ctx, `UPDATE blobs SET written_at = now() WHERE hash = $1`, refreshed.Hash[:]); err != nil {
		t.Fatal(err)
	}
	commit, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer commit.Rollback(ctx)
	if _, err := commit.Exec(ctx, `SELECT 1 FROM blobs WHERE hash = $1 FOR KEY SHARE`, named.Hash[:]); err != nil {
		t.Fatal(err)
	}
	p, err := s.CollectBlobs(ctx, time.Hour, 0, 100)
	if err != nil {
		t.Fatalf("CollectBlobs with blobs in use: %v", err)
	}
	if p.Examined != 2 || p.Deleted != 0 {
		t.Errorf("pass = %+v, want both blobs examined and kept", p)
	}
	if err := refresh.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := commit.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if p, err = s.CollectBlobs(ctx, time.Hour, 0, 100); err != nil || p.Deleted != 1 {
		t.Fatalf("pass after = %+v, %v; want the one named by nothing deleted", p, err)
	}
	if _, err := s.Blob(ctx, refreshed.Hash); err != nil {
		t.Errorf("the refreshed blob: %v", err)
	}
	if _, err := s.Blob(ctx, named.Hash); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the blob no longer named: %v, want ErrNotFound", err)
	}
}

// TestMigrateBlobGC migrates a schema holding a version and its index from
// before the collector (migration 00007): every stored body gets a
// written time of the migration (the first pass after the upgrade deletes
// nothing, whatever the bodies' age) and the existing index's chunks are
// listed in index_chunks, so they are kept once old.
func TestMigrateBlobGC(t *testing.T) {
	ctx := t.Context()
	url := pgtest.URL(t)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 7); err != nil {
		t.Fatal(err)
	}
	m := storetest.NewGCMigration()
	for _, b := range m.Bodies() {
		h := store.HashOf(b)
		if _, err := db.ExecContext(ctx, `INSERT INTO blobs (hash, size, codec, data) VALUES ($1, $2, 0, $3)`, h[:], len(b), b); err != nil {
			t.Fatal(err)
		}
	}
	hb := store.HashOf(m.File)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO versions (name, version, state, file_count) VALUES ('one', '1.0.0', 'ready', 1)`, nil},
		{`INSERT INTO files (version_id, path, hash, size, is_binary) SELECT id, 'index.js', $1, 20, false FROM versions`, []any{hb[:]}},
		{`INSERT INTO version_indexes (version_id, format, size, chunks, coverage, stats) SELECT id, 3, 18, $1, 1, '{}' FROM versions`,
			[]any{m.IndexChunks()}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}

	s, err := Open(ctx, url, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m.Check(t, aged{s})
}

// TestPutBlobsRefreshesOnlyOldBodies: PutBlobs refreshes a stored body's
// written time only when it is older than BlobRefreshAfter (half the
// grace here, as the mirror sets it): a body put again 20 minutes after it
// was written keeps that time and is collected an hour after it, one put
// again 40 minutes after is young again.
func TestPutBlobsRefreshesOnlyOldBodies(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	defer s.Close()
	recent := store.Blob{Hash: store.HashOf([]byte("recent")), Data: []byte("recent")}
	old := store.Blob{Hash: store.HashOf([]byte("old")), Data: []byte("old")}
	put := func(b store.Blob) {
		t.Helper()
		if err := s.PutBlobs(ctx, []store.Blob{b}); err != nil {
			t.Fatal(err)
		}
	}
	agedBy := func(d time.Duration) {
		t.Helper()
		if err := (aged{s}).AgeBlobs(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	put(old)
	agedBy(20 * time.Minute)
	put(recent)
	agedBy(20 * time.Minute) // old: 40 minutes, recent: 20
	put(old)
	put(recent)
	agedBy(50 * time.Minute) // old: 50 since its refresh; recent: 70 since it was written
	p, err := s.CollectBlobs(ctx, storetest.Grace, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Blob(ctx, old.Hash); err != nil || p.Deleted != 1 {
		t.Errorf("pass = %+v; the body refreshed 50 minutes ago: %v; want it kept, the other deleted", p, err)
	}
	if _, err := s.Blob(ctx, recent.Hash); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the body put again while younger than BlobRefreshAfter: %v, want it collected with its first time", err)
	}
}
