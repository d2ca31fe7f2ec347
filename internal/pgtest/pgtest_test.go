package pgtest

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSchemaName(t *testing.T) {
	tests := []struct {
		in, prefix string
	}{
		{"TestFoo", "t_testfoo_"},
		{"TestStore/put and commit#01", "t_teststore_put_and_commit_01_"},
		{strings.Repeat("A", 200), "t_aaaa"},
	}
	for _, tt := range tests {
		got := schemaName(tt.in)
		if !strings.HasPrefix(got, tt.prefix) || len(got) > maxSchemaName {
			t.Errorf("schemaName(%q) = %q, want prefix %q and at most %d bytes", tt.in, got, tt.prefix, maxSchemaName)
		}
	}
	if a, b := schemaName("TestX"), schemaName("TestX"); a == b {
		t.Errorf("two schemas for one test share the name %q", a)
	}
}

func TestURLSelectsAFreshSchema(t *testing.T) {
	var schema string
	t.Run("inner", func(t *testing.T) {
		u := URL(t)
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(schema, "t_testurlselectsafreshschema_inner_") {
			t.Fatalf("current_schema() = %q, want the test's schema", schema)
		}
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = $1", schema).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("fresh schema holds %d tables", n)
		}
		if _, err := conn.Exec(ctx, "CREATE TABLE t (x int)"); err != nil {
			t.Fatal(err)
		}
	})
	// The inner test's cleanup has run: its schema must be gone.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("schema %q survived its test", schema)
	}
}

// fatalRecorder captures a Fatalf instead of failing the real test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestUnreachableServerFailsWithAHint(t *testing.T) {
	// Port 1 on loopback refuses connections at once.
	t.Setenv(EnvURL, "postgres://postgres:secret@127.0.0.1:1/test?sslmode=disable")
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		URL(rec)
	}()
	<-done
	for _, want := range []string{"Postgres is not reachable at", "127.0.0.1:1", EnvURL} {
		if !strings.Contains(rec.msg, want) {
			t.Errorf("message %q lacks %q", rec.msg, want)
		}
	}
	if strings.Contains(rec.msg, "secret") {
		t.Errorf("message %q leaks the password", rec.msg)
	}
}
