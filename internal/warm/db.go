package warm

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// db runs the queries on warm_requests and warm_items (migrations
// 00002_warm.sql) on either store's database, through database/sql: the
// queries are written once with ? placeholders and rebound for Postgres.
type db struct {
	sql      *sql.DB
	postgres bool
}

// rebind turns ? placeholders into $1, $2, ... for Postgres. The queries
// of this package hold no ? inside string literals.
func (d *db) rebind(q string) string {
	if !d.postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// at is how a time is bound: timestamptz in Postgres, unix microseconds in
// SQLite (the convention of migrations/sqlite).
func (d *db) at(t time.Time) any {
	if d.postgres {
		return t
	}
	return t.UnixMicro()
}

func (d *db) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return d.sql.ExecContext(ctx, d.rebind(q), args...)
}

func (d *db) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return d.sql.QueryRowContext(ctx, d.rebind(q), args...)
}

// query runs q and calls scan for each row. The rows are read to the end
// and closed before query returns, so scan must not itself query: SQLite's
// writer has one connection, and a second query would wait for ever.
func (d *db) query(ctx context.Context, q string, scan func(*sql.Rows) error, args ...any) error {
	rows, err := d.sql.QueryContext(ctx, d.rebind(q), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// inTx runs fn in one transaction.
func (d *db) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// dbTime scans a time stored either way.
type dbTime struct{ t *time.Time }

func (s dbTime) Scan(v any) error {
	switch v := v.(type) {
	case time.Time:
		*s.t = v
	case int64:
		*s.t = time.UnixMicro(v)
	default:
		return fmt.Errorf("warm: cannot scan %T as a time", v)
	}
	return nil
}
