package pglock

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/redisconn"
	"github.com/pkgscope/pkgscope/internal/redislock"
	"github.com/pkgscope/pkgscope/internal/redistest"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/postgres"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// closedPort is an address nothing listens on: a Redis that refuses
// connections.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// fillReplica is one mirror's miss path over the shared store: its own
// registry client, single-flight, Redis lock (at redisAddr) and Postgres
// lock, composed as app.OpenCore composes them.
func fillReplica(t *testing.T, st store.Store, url string, reg *fakeregistry.Registry, redisAddr, prefix string) (fill.Filler, *upstream.Client, *Locker) {
	t.Helper()
	ro := redisconn.DefaultOptions()
	ro.URL, ro.Prefix = "redis://"+redisAddr+"/0", prefix
	rc, err := redisconn.Open(ro)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	pl := replica(t, url, DefaultOptions())
	npm, err := npmrc.Load(t.TempDir(), fakeregistry.Getenv(reg.Env()))
	if err != nil {
		t.Fatal(err)
	}
	up := upstream.New(npm, upstream.DefaultConfig(), &http.Client{})
	opt := fill.Options{Timeout: time.Minute, Ingest: ingest.DefaultLimits(),
		Lock: fill.Pair(redislock.New(rc, redislock.DefaultOptions()), pl)}
	return fill.New(st, up, opt), up, pl
}

// TestRedisDownReplicasDownloadOnce: three replicas on one Postgres fill a
// cold version at once while Redis does not answer some or all of them;
// the Postgres lock joins them, so the registry serves the tarball once
// (before it, each replica without Redis filled unlocked: up to 3
// downloads). "two of three" is the stampede CI saw: one replica's Redis
// breaker opens while another holds the Redis lock.
func TestRedisDownReplicasDownloadOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		up   int // replicas reaching Redis
	}{
		{"Redis down on every replica", 0},
		{"Redis down on two of three", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			url := pgtest.URL(t)
			st, err := postgres.Open(ctx, url, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			reg := fakeregistry.New(t)
			reg.Publish("pkg", "1.0.0", tarballtest.Package(t, map[string]string{"index.js": "module.exports = 1\n"}))
			prefix, down := redistest.Prefix(t), closedPort(t)
			waiting := make(chan string, 3)
			var fills []fill.Filler
			for i := range 3 {
				addr := down
				if i < tc.up {
					addr = redistest.Addr(t)
				}
				f, up, pl := fillReplica(t, st, url, reg, addr, prefix)
				pl.onWait = func(k string) { waiting <- k }
				// Each replica knows the version already, so only the
				// tarball is requested below.
				if _, err := up.Packument(ctx, "pkg"); err != nil {
					t.Fatal(err)
				}
				fills = append(fills, f)
			}
			var wg sync.WaitGroup
			defer wg.Wait() // after release, deferred below
			release := reg.Hold("pkg")
			defer release()
			first := reg.Arrived("pkg")
			errs := make(chan error, len(fills))
			for _, f := range fills {
				wg.Go(func() { errs <- f.Fill(ctx, "pkg", "1.0.0") })
			}
			await(t, first, "the first tarball request")
			// One replica downloads; the other two wait on its Postgres
			// lock. Another tarball request meanwhile is the bug.
			second := reg.Arrived("pkg")
			for range len(fills) - 1 {
				select {
				case <-waiting:
				case <-second:
					t.Fatalf("a second replica requested the tarball while the first downloaded it")
				case <-time.After(guard):
					t.Fatalf("replicas did not wait on the Postgres lock within %s", guard)
				}
			}
			release()
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if n := reg.TarballDownloads("pkg", "1.0.0"); n != 1 {
				t.Fatalf("%d tarball downloads for 3 replicas, want 1", n)
			}
			if v, err := st.Version(ctx, "pkg", "1.0.0"); err != nil || v.State != store.StateReady {
				t.Fatalf("stored version = %+v, %v", v, err)
			}
		})
	}
}

// await waits for ch, failing the test after guard.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(guard):
		t.Fatalf("%s did not come within %s", what, guard)
	}
}
