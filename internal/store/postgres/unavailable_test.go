package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pkgscope/pkgscope/internal/faultproxy"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/store"
)

func TestUnreachable(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&pgconn.ConnectError{Config: &pgconn.Config{}}, true},
		{fmt.Errorf("query: %w", io.ErrUnexpectedEOF), true},
		{fmt.Errorf("query: %w", pgconn.ErrConnClosed), true},
		{fmt.Errorf("query: %w", context.DeadlineExceeded), true},
		{&pgconn.PgError{Code: "57P01"}, true}, // admin_shutdown
		{&pgconn.PgError{Code: "08006"}, true}, // connection_failure
		{&pgconn.PgError{Code: "53300"}, true}, // too_many_connections
		{&pgconn.PgError{Code: "23505"}, false},
		{&pgconn.PgError{Code: "42P01"}, false},
		{pgx.ErrNoRows, false},
		{context.Canceled, false},
		{fmt.Errorf("x: %w", store.ErrUnavailable), false}, // already translated
	}
	for _, tt := range tests {
		if got := unreachable(tt.err); got != tt.want {
			t.Errorf("unreachable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// A database killed or blackholed behind a fault proxy makes every read
// fail with store.ErrUnavailable, the blackhole within QueryTimeout; once
// it is back, the same store reads again.
func TestDatabaseDownIsUnavailable(t *testing.T) {
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.New(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	u.Host = proxy.Addr()
	opts := testOptions
	opts.QueryTimeout = 200 * time.Millisecond
	s, err := Open(context.Background(), u.String(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	read := func() error { _, err := s.Version(ctx, "x", "1.0.0"); return err }
	// healthy reads until the store answers (ErrNotFound): a read may meet
	// a connection a fault broke, or, on a loaded machine, pass the 200 ms
	// query timeout; anything but ErrUnavailable is a failure, and 30 s
	// without an answer is one.
	healthy := func(when string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := read()
			if errors.Is(err, store.ErrNotFound) {
				return
			}
			if !errors.Is(err, store.ErrUnavailable) || time.Now().After(deadline) {
				t.Fatalf("%s: %v, want ErrNotFound", when, err)
			}
		}
	}
	healthy("before the fault")
	for _, fault := range []struct {
		name  string
		apply func() error
	}{
		{"killed", func() error { proxy.Kill(); return nil }},
		{"blackholed", proxy.Blackhole},
	} {
		if err := fault.apply(); err != nil {
			t.Fatal(err)
		}
		// Bounded by QueryTimeout, not by this test's patience.
		bound, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := s.Files(bound, "x", "1.0.0")
		cancel()
		if !errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: Files = %v, want ErrUnavailable only", fault.name, err)
		}
		err = s.CommitVersion(ctx, store.NewVersion{Name: "x", Version: "1.0.0"})
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s: CommitVersion = %v, want ErrUnavailable", fault.name, err)
		}
		if err := proxy.Resume(); err != nil {
			t.Fatal(err)
		}
		// The pool drops the connections the fault broke.
		healthy(fault.name + ": after the database came back")
	}
}
