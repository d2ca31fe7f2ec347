// Package pgtest gives each test its own empty Postgres schema, so tests
// that use the real database run in parallel without seeing each other's
// rows, and leave nothing behind.
//
// The server comes from PKGSCOPE_TEST_DATABASE_URL (default DefaultURL). A
// test that needs Postgres fails, never skips, when it is not reachable: a
// suite that silently skips in CI is worse than none.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the environment variable holding the test server's URL.
const EnvURL = "PKGSCOPE_TEST_DATABASE_URL"

// DefaultURL is the test server used when EnvURL is unset: the local
// Postgres the README tells developers to run.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// connectTimeout bounds how long a test waits for the server before failing;
// a local server answers in milliseconds, a missing one should not hang the
// suite until go test's 10-minute timeout.
const connectTimeout = 10 * time.Second

// maxSchemaName keeps test schemas usable by the warm queue: River names
// its notification channels schema.topic, which must fit Postgres' 63-byte
// identifier limit, so it takes schemas of at most 46 bytes (and a name over
// 63 would be silently truncated, letting two tests share a schema).
const maxSchemaName = 46

// ServerURL returns the URL of the test server (EnvURL or DefaultURL).
func ServerURL() string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return DefaultURL
}

// URL creates a fresh schema for t on the test server and returns a URL
// whose search_path selects it, so everything the test creates lands
// there. The schema is dropped with CASCADE when t ends. URL calls
// t.Fatalf when the server cannot be reached. The server URL must be in
// URL form (postgres://...), not keyword=value form.
func URL(t testing.TB) string {
	t.Helper()
	server := ServerURL()
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("pgtest: %s=%q is not a postgres:// URL", EnvURL, server)
	}
	schema := schemaName(t.Name())

	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	exec(t, ctx, server, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		defer cancel()
		exec(t, ctx, server, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	})

	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// exec runs one statement on a short-lived connection to server.
func exec(t testing.TB, ctx context.Context, server, sql string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("pgtest: Postgres is not reachable at %s: start it (see README) or set %s: %v",
			redact(server), EnvURL, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9_]+`)

// schemaName turns a test name into a unique schema name: the lowercased
// name with anything but [a-z0-9_] squeezed to "_", cut to fit, and a
// random suffix so that reruns (-count=2) and parallel packages never
// collide.
func schemaName(testName string) string {
	var b [4]byte
	rand.Read(b[:])
	suffix := "_" + hex.EncodeToString(b[:])
	base := strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(testName), "_"), "_")
	base = "t_" + base
	if max := maxSchemaName - len(suffix); len(base) > max {
		base = base[:max]
	}
	return base + suffix
}

// redact hides a password in a URL for messages.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}
