package pglock

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/faultproxy"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/fill/locktest"
	"github.com/pkgscope/pkgscope/internal/pgtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ fill.Lock = (*Locker)(nil)

// guard bounds a test that waits for the lock, so a lock never freed fails
// the test with a message instead of hanging until go test's timeout.
const guard = time.Minute

// replica is one mirror's Locker on the shared database url.
func replica(t *testing.T, url string, opt Options) *Locker {
	t.Helper()
	l, err := Open(context.Background(), url, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

func never(context.Context) bool { return false }

func TestConformance(t *testing.T) {
	locktest.Run(t, func(t *testing.T) locktest.Replicas {
		url := pgtest.URL(t)
		a, b := replica(t, url, DefaultOptions()), replica(t, url, DefaultOptions())
		return locktest.Replicas{A: a, B: b, OnWait: func(f func(string)) { b.onWait = f }, Stats: func() locktest.Counts {
			s := b.Stats()
			return locktest.Counts{Acquired: s.Acquired, Waited: s.Waited, HandedOff: s.HandedOff, TimedOut: s.TimedOut}
		}}
	})
}

// TestKilledHolderFreesTheLock: a holder whose session ends (its process
// crashed, its connection broke) frees the lock with it: no TTL to wait
// out. Its late release must neither fail nor free the next holder's lock.
func TestKilledHolderFreesTheLock(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a, b := replica(t, url, DefaultOptions()), replica(t, url, DefaultOptions())
	releaseA, err := a.Acquire(ctx, "k", never)
	if err != nil || releaseA == nil {
		t.Fatalf("a.Acquire = %v, %v", releaseA != nil, err)
	}
	defer releaseA() // when the test fails before it: the pool's Close waits for it
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	id := uint64(ID(a.ns, "k"))
	// A bigint advisory lock shows in pg_locks as classid (its high 32
	// bits) and objid (its low 32 bits), objsubid 1.
	var killed bool
	if err := admin.QueryRow(ctx, `
		SELECT pg_terminate_backend(pid, 30000) FROM pg_locks
		WHERE locktype = 'advisory' AND objsubid = 1 AND granted
		  AND classid::bigint = $1 AND objid::bigint = $2`, int64(id>>32), int64(uint32(id))).Scan(&killed); err != nil || !killed {
		t.Fatalf("terminating the holder's session: %v, %v", killed, err)
	}
	bctx, cancel := context.WithTimeout(ctx, guard)
	defer cancel()
	releaseB, err := b.Acquire(bctx, "k", never)
	if err != nil || releaseB == nil {
		t.Fatalf("b.Acquire after the holder's session ended = %v, %v; want the lock", releaseB != nil, err)
	}
	defer releaseB()
	releaseA() // its session is gone: nothing to unlock, and b keeps the lock
	if !locktest.Held(t, a, "k") {
		t.Error("a's late release freed b's lock")
	}
	// a's broken connection did not go back to its pool: a takes and
	// releases locks as before.
	for range 2 * DefaultOptions().Conns {
		r, err := a.Acquire(ctx, "other", never)
		if err != nil || r == nil {
			t.Fatalf("a.Acquire after its holder was killed = %v, %v", r != nil, err)
		}
		r()
	}
}

// TestConnsBoundTheLocksHeld: with every connection holding a lock,
// Acquire answers ErrBusy at once (the fill goes on without this lock)
// instead of waiting for an unrelated fill; a released lock frees its
// connection for the next.
func TestConnsBoundTheLocksHeld(t *testing.T) {
	ctx := context.Background()
	opt := DefaultOptions()
	opt.Conns = 2
	l := replica(t, pgtest.URL(t), opt)
	var releases []func()
	for _, k := range []string{"a", "b"} {
		r, err := l.Acquire(ctx, k, never)
		if err != nil || r == nil {
			t.Fatalf("Acquire(%s) = %v, %v", k, r != nil, err)
		}
		releases = append(releases, r)
	}
	if r, err := l.Acquire(ctx, "c", never); r != nil || !errors.Is(err, ErrBusy) {
		t.Fatalf("Acquire with every connection holding a lock = %v, %v; want ErrBusy", r != nil, err)
	}
	releases[0]()
	r, err := l.Acquire(ctx, "c", never)
	if err != nil || r == nil {
		t.Fatalf("Acquire after a release = %v, %v", r != nil, err)
	}
	r()
	releases[1]()
	if s := l.Stats(); s.Busy != 1 || s.Acquired != 3 {
		t.Errorf("stats %+v, want one busy answer and three locks", s)
	}
}

// TestBusyCountsFallbacksOnly: Busy counts the fills that went on without
// this lock (what pkgscope_fill_lock_busy_total shows an operator), not a
// waiter's polls that found every connection in use and kept waiting.
func TestBusyCountsFallbacksOnly(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	opt := DefaultOptions()
	opt.Conns = 1
	a, b := replica(t, url, DefaultOptions()), replica(t, url, opt)
	releaseA, err := a.Acquire(ctx, "k", never)
	if err != nil || releaseA == nil {
		t.Fatalf("a.Acquire = %v, %v", releaseA != nil, err)
	}
	defer releaseA()
	// Once b waits for k, another of its fills takes its one connection.
	var other func()
	defer func() {
		if other != nil {
			other()
		}
	}()
	b.onWait = func(string) {
		if other, err = b.Acquire(ctx, "x", never); err != nil || other == nil {
			t.Errorf("b.Acquire(x) = %v, %v", other != nil, err)
		}
	}
	checks := 0
	ready := func(context.Context) bool { checks++; return checks == 3 } // two polls, then a hand-off
	if r, err := b.Acquire(ctx, "k", ready); r != nil || err != nil {
		t.Fatalf("b.Acquire(k) = %v, %v; want handed off", r != nil, err)
	}
	if s := b.Stats(); s.Busy != 0 || s.HandedOff != 1 {
		t.Errorf("stats %+v, want no busy answer (b waited) and one hand-off", s)
	}
}

func TestSchemasDoNotShareLocks(t *testing.T) {
	ctx := context.Background()
	a, b := replica(t, pgtest.URL(t), DefaultOptions()), replica(t, pgtest.URL(t), DefaultOptions())
	ra, err := a.Acquire(ctx, "k", never)
	if err != nil || ra == nil {
		t.Fatal(err)
	}
	defer ra()
	if locktest.Held(t, b, "k") {
		t.Error("a deployment in another schema shares the lock")
	}
}

func TestOpenRefusesBadOptions(t *testing.T) {
	url := pgtest.URL(t)
	for _, tweak := range []func(*Options){
		func(o *Options) { o.Conns = 0 },
		func(o *Options) { o.Timeout = 0 },
		func(o *Options) { o.PollMax = o.PollMin / 2 },
	} {
		opt := DefaultOptions()
		tweak(&opt)
		if l, err := Open(context.Background(), url, opt); err == nil {
			l.Close()
			t.Errorf("Open(%+v) succeeded", opt)
		}
	}
}

// TestPostgresDownFailsTheTry: a Postgres that refuses connections, or
// cuts the one a try holds, fails the try with an error that is not the
// caller's (the fill goes on without this lock), and the lock works again
// once Postgres is back.
func TestPostgresDownFailsTheTry(t *testing.T) {
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.New(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	u.Host = p.Addr()
	opt := DefaultOptions()
	opt.Timeout = 2 * time.Second // the blackholed try's bound: no hang
	l := replica(t, u.String(), opt)
	ctx := context.Background()
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
		r, err := l.Acquire(ctx, "k", never)
		if r != nil || err == nil || ctx.Err() != nil || errors.Is(err, ErrBusy) {
			t.Fatalf("Acquire with Postgres %s = %v, %v; want Postgres' error", fault.name, r != nil, err)
		}
		if err := p.Resume(); err != nil {
			t.Fatal(err)
		}
		r, err = l.Acquire(ctx, "k", never)
		if err != nil || r == nil {
			t.Fatalf("Acquire after Resume = %v, %v", r != nil, err)
		}
		r()
	}
	if s := l.Stats(); s.Unavailable != 2 {
		t.Errorf("stats %+v, want both failed tries counted", s)
	}
}
