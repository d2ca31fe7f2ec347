package sqlite

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/pkgscope/pkgscope/migrations"
)

// TestFilesHashKeptWhereAlreadyBuilt: a file that built files_hash in
// 00008, before the build moved to 00009, opens: 00009 leaves the index
// and the collector's lookups still use it.
func TestFilesHashKeptWhereAlreadyBuilt(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, FileName), DefaultOptions(), false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 8); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE INDEX files_hash ON files (hash)`); err != nil { // as 00008 did
		t.Fatal(err)
	}
	s, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	var plan string
	var id, parent, unused int
	if err := db.QueryRowContext(ctx, `EXPLAIN QUERY PLAN SELECT 1 FROM files WHERE hash = X'00'`).Scan(&id, &parent, &unused, &plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "INDEX files_hash") {
		t.Errorf("a lookup by hash: %q, want it to use files_hash", plan)
	}
}
