package postgres

import (
	"context"
	"io/fs"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/storetest"
	"github.com/pkgscope/pkgscope/migrations"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testOptions keeps each test's pool small: the suite opens a store per
// subtest against a server shared with other packages' tests.
var testOptions = Options{MaxConns: 4}

func openTest(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), pgtest.URL(t), testOptions)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTest(t) })
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

func BenchmarkPutBlobs(b *testing.B)      { storetest.BenchmarkPutBlobs(b, openBench(b)) }
func BenchmarkCommitVersion(b *testing.B) { storetest.BenchmarkCommitVersion(b, openBench(b)) }
func BenchmarkFiles(b *testing.B)         { storetest.BenchmarkFiles(b, openBench(b)) }
func BenchmarkBlob(b *testing.B)          { storetest.BenchmarkBlob(b, openBench(b)) }
