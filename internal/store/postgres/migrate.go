package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"hash/crc64"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/pkgscope/pkgscope/migrations"
)

// lockPollInterval is how often a replica waiting for another's migration
// retries the advisory lock. goose's default is 5 s; 1 s (its minimum) keeps
// the replicas that lose the race from starting up to 4 s late.
const lockPollInterval = time.Second

// migrate applies pending migrations through database/sql, which goose
// needs, on a pool used only for this and closed before returning.
//
// Replicas starting together all call migrate: goose holds a session-level
// advisory lock while it checks and applies, so one migrates and the rest
// wait, then find nothing pending. The lock id is derived from the schema
// so that separate schemas on one server (one per test, or several
// deployments) do not queue behind each other.
func migrate(ctx context.Context, cfg *pgx.ConnConfig, timeout time.Duration) error {
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	// goose holds the lock on one connection and migrates on another.
	db.SetMaxOpenConns(2)

	var current sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&current); err != nil {
		return fmt.Errorf("postgres: migrate: find schema: %w", err)
	}
	if !current.Valid {
		return fmt.Errorf("postgres: migrate: no schema in search_path %q exists", cfg.RuntimeParams["search_path"])
	}
	schema := current.String
	locker, err := lock.NewPostgresSessionLocker(
		lock.WithLockID(migrationLockID(schema)),
		lock.WithLockTimeout(uint64(lockPollInterval/time.Second), uint64(max(1, timeout/lockPollInterval))),
	)
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.Postgres,
		goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("postgres: migrate schema %q: %w", schema, err)
	}
	return nil
}

// migrationLockID is the advisory lock key for migrating schema.
func migrationLockID(schema string) int64 {
	return int64(crc64.Checksum([]byte("pkgscope migrations "+schema), crc64.MakeTable(crc64.ECMA)))
}
