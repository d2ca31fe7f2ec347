package redislock

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/faultproxy"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/fill/locktest"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/redisconn"
	"github.com/pkgscope/pkgscope/internal/redistest"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ fill.Lock = (*Locker)(nil)

// replica is one mirror's Redis connection and Locker.
func replica(t *testing.T, addr, prefix string) *Locker {
	t.Helper()
	opt := redisconn.DefaultOptions()
	opt.URL, opt.Prefix = "redis://"+addr+"/0", prefix
	rc, err := redisconn.Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return New(rc, DefaultOptions())
}

func never(context.Context) bool { return false }

func TestConformance(t *testing.T) {
	locktest.Run(t, func(t *testing.T) locktest.Replicas {
		prefix := redistest.Prefix(t)
		a, b := replica(t, redistest.Addr(t), prefix), replica(t, redistest.Addr(t), prefix)
		return locktest.Replicas{A: a, B: b, OnWait: func(f func(string)) { b.onWait = f }, Stats: func() locktest.Counts {
			s := b.Stats()
			return locktest.Counts{Acquired: s.Acquired, Waited: s.Waited, HandedOff: s.HandedOff, TimedOut: s.TimedOut}
		}}
	})
}

// TestLockHasATTL: a holder that dies frees the lock eventually.
func TestLockHasATTL(t *testing.T) {
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	release, err := replica(t, redistest.Addr(t), prefix).Acquire(ctx, "pkg@1.0.0", never)
	if err != nil || release == nil {
		t.Fatalf("Acquire = %v, %v", release != nil, err)
	}
	defer release()
	if ttl := redistest.Client(t).PTTL(ctx, prefix+"lock:pkg@1.0.0").Val(); ttl <= 0 || ttl > DefaultOptions().TTL {
		t.Errorf("lock PTTL = %v, want within (0, %v]", ttl, DefaultOptions().TTL)
	}
}

func TestReleaseNeverFreesAnotherHoldersLock(t *testing.T) {
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	a := replica(t, redistest.Addr(t), prefix)
	release, err := a.Acquire(ctx, "k", never)
	if err != nil {
		t.Fatal(err)
	}
	// a's lock expired mid-fill and another replica took it.
	rdb := redistest.Client(t)
	if err := rdb.Set(ctx, prefix+"lock:k", "other-token", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	release()
	if v := rdb.Get(ctx, prefix+"lock:k").Val(); v != "other-token" {
		t.Fatalf("after a stale release the lock holds %q, want the other holder's token", v)
	}
}

func TestRedisDownFailsFast(t *testing.T) {
	p, err := faultproxy.New(redistest.Addr(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	l := replica(t, p.Addr(), redistest.Prefix(t))
	for _, fault := range []struct {
		name  string
		apply func() error
	}{
		{"killed", func() error { p.Kill(); return nil }},
		{"blackholed", p.Blackhole},
	} {
		if err := fault.apply(); err != nil {
			t.Fatal(err)
		}
		// No deadline on ctx: only the configured timeouts bound it.
		r, err := l.Acquire(context.Background(), "k", never)
		if r != nil || err == nil || errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire with Redis %s = %v, %v; want a Redis error", fault.name, r != nil, err)
		}
	}
}

// chain is one replica's miss path: its own registry client and Locker,
// over the shared store.
func chain(t *testing.T, st store.Store, reg *fakeregistry.Registry, l *Locker) (fill.Filler, *upstream.Client) {
	t.Helper()
	npm, err := npmrc.Load(t.TempDir(), func(k string) string {
		switch k {
		case "npm_config_registry":
			return reg.URL()
		case "npm_config_userconfig", "npm_config_globalconfig":
			return "/dev/null"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	up := upstream.New(npm, upstream.DefaultConfig(), &http.Client{})
	opt := fill.Options{Timeout: time.Minute, Ingest: ingest.DefaultLimits()}
	if l != nil {
		opt.Lock = l
	}
	return fill.New(st, up, opt), up
}

func TestTwoReplicasFillAColdVersionWithOneDownload(t *testing.T) {
	ctx := context.Background()
	reg := fakeregistry.New(t)
	reg.Publish("pkg", "1.0.0", tarballtest.Package(t, map[string]string{"index.js": "module.exports = 1\n"}))
	st, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	prefix := redistest.Prefix(t)
	la, lb := replica(t, redistest.Addr(t), prefix), replica(t, redistest.Addr(t), prefix)
	fa, upA := chain(t, st, reg, la)
	fb, upB := chain(t, st, reg, lb)
	// Each replica knows the version already, so only the tarball is
	// held below.
	for _, up := range []*upstream.Client{upA, upB} {
		if _, err := up.Packument(ctx, "pkg"); err != nil {
			t.Fatal(err)
		}
	}
	release := reg.Hold("pkg")
	waiting := make(chan string, 2)
	la.onWait = func(k string) { waiting <- k }
	lb.onWait = func(k string) { waiting <- k }
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, f := range []fill.Filler{fa, fb} {
		wg.Go(func() { errs <- f.Fill(ctx, "pkg", "1.0.0") })
	}
	<-waiting // one replica holds the lock, the other waits on it
	release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := reg.TarballDownloads("pkg", "1.0.0"); n != 1 {
		t.Fatalf("%d tarball downloads, want 1", n)
	}
	if files, err := st.Files(ctx, "pkg", "1.0.0"); err != nil || len(files) != 1 {
		t.Fatalf("stored files = %v, %v", files, err)
	}
}

func TestFillGoesOnUnlockedWhenRedisIsDown(t *testing.T) {
	ctx := context.Background()
	reg := fakeregistry.New(t)
	reg.Publish("pkg", "1.0.0", tarballtest.Package(t, map[string]string{"index.js": "1\n"}))
	st, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := faultproxy.New(redistest.Addr(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	l := replica(t, p.Addr(), redistest.Prefix(t))
	f, _ := chain(t, st, reg, l)
	p.Kill()
	if err := f.Fill(ctx, "pkg", "1.0.0"); err != nil {
		t.Fatalf("Fill with Redis down: %v", err)
	}
	if s := l.Stats(); s.Unavailable != 1 {
		t.Errorf("stats %+v, want the failed attempt counted", s)
	}
}

// TestBusyPoolWaitsForTheLock: when this replica's pool has no free
// connection (a stampede of requests), Acquire waits and takes the lock
// once one frees, instead of answering an error that makes the fill go on
// without the lock (and the registry serve the tarball once per replica).
func TestBusyPoolWaitsForTheLock(t *testing.T) {
	opt := redisconn.DefaultOptions()
	opt.URL, opt.Prefix, opt.PoolSize = "redis://"+redistest.Addr(t)+"/0", redistest.Prefix(t), 1
	rc, err := redisconn.Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	held := make(chan struct{})
	go func() {
		defer close(held)
		_ = rc.Client.BLPop(context.Background(), time.Second, rc.Key("never-pushed"))
	}()
	for st := rc.Client.PoolStats(); st.TotalConns != 1 || st.IdleConns != 0; st = rc.Client.PoolStats() {
		select {
		case <-held:
			t.Fatal("the blocking command ended before it held the connection")
		case <-time.After(time.Millisecond):
		}
	}
	l := New(rc, DefaultOptions())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	release, err := l.Acquire(ctx, "pkg@1.0.0", never)
	if err != nil || release == nil {
		t.Fatalf("Acquire with the pool busy = %v, %v; want the lock once the pool frees", release != nil, err)
	}
	release()
	<-held
	if st := l.Stats(); st.Unavailable != 0 || st.Acquired != 1 || st.Waited != 1 {
		t.Errorf("stats %+v: want one wait on the busy pool, then the lock, and no outage", st)
	}
}
