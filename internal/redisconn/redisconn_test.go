package redisconn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/faultproxy"
	"github.com/pkgscope/pkgscope/internal/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// logLines counts the lines a logger wrote.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}
func (l *logLines) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.FieldsFunc(l.buf.String(), func(r rune) bool { return r == '\n' })
}

var errDown = &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}

func TestBreakerOpensSkipsProbesAndLogsOncePerIncident(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	var out logLines
	b := NewBreaker(5*time.Second, clk.Now, slog.New(slog.NewTextHandler(&out, nil)))

	// Closed: everything passes; answers (nil, redis.Nil, an error
	// reply) keep it closed.
	for _, result := range []error{nil, redis.Nil, fmt.Errorf("get: %w", redis.Nil)} {
		if err := b.Allow(); err != nil {
			t.Fatalf("closed breaker refused: %v", err)
		}
		b.ReportResult(result)
	}
	if b.Open() {
		t.Fatal("answers opened the breaker")
	}

	// A caller giving up is not a Redis failure.
	b.Allow()
	b.ReportResult(context.Canceled)
	if b.Open() {
		t.Fatal("a cancelled caller opened the breaker")
	}

	// Many commands in flight fail together: one incident, one log line.
	for range 5 {
		if err := b.Allow(); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		b.ReportResult(errDown)
	}
	if !b.Open() {
		t.Fatal("failures left the breaker closed")
	}
	for range 100 {
		if err := b.Allow(); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("open breaker admitted a command: %v", err)
		}
	}

	// After the cooldown: one probe, the others still skip.
	clk.Add(5 * time.Second)
	if err := b.Allow(); err != nil {
		t.Fatalf("no probe after the cooldown: %v", err)
	}
	if err := b.Allow(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a second command went through during the probe: %v", err)
	}
	b.ReportResult(errDown) // the probe fails: another cooldown
	if err := b.Allow(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("admitted right after a failed probe: %v", err)
	}
	clk.Add(5 * time.Second)
	if err := b.Allow(); err != nil {
		t.Fatalf("no second probe: %v", err)
	}
	b.ReportResult(nil)
	if b.Open() {
		t.Fatal("a good probe left the breaker open")
	}

	s := b.Stats()
	if s.Incidents != 1 || s.Failures != 6 || s.Rejected != 102 {
		t.Errorf("stats %+v, want 1 incident, 6 failures, 102 rejected", s)
	}
	lines := out.lines()
	if len(lines) != 2 || !strings.Contains(lines[0], "redis unavailable") || !strings.Contains(lines[1], "redis reachable again") {
		t.Errorf("log lines %q, want one for the start and one for the end of the outage", lines)
	}
}

func TestBreakerReleasesAProbeWhoseCallerGaveUp(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	b := NewBreaker(time.Second, clk.Now, nil)
	b.Allow()
	b.ReportResult(errDown)
	clk.Add(time.Second)
	if err := b.Allow(); err != nil {
		t.Fatal(err)
	}
	b.ReportResult(context.Canceled)
	if err := b.Allow(); err != nil {
		t.Fatalf("a cancelled probe kept the probe slot: %v", err)
	}
}

func open(t *testing.T, addr string, clk *clock) *Conn {
	t.Helper()
	opt := DefaultOptions()
	opt.URL, opt.Prefix = "redis://"+addr+"/0", redistest.Prefix(t)
	if clk != nil {
		opt.Now = clk.Now
	}
	c, err := Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestDoAgainstARealRedis(t *testing.T) {
	c := open(t, redistest.Addr(t), nil)
	ctx := context.Background()
	key := c.Key("k")
	if err := c.Do(ctx, func(ctx context.Context) error { return c.Client.Set(ctx, key, "v", time.Minute).Err() }); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := c.Do(ctx, func(ctx context.Context) (err error) { got, err = c.Client.Get(ctx, key).Result(); return err }); err != nil || got != "v" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if !strings.HasPrefix(key, "test:") || !strings.HasSuffix(key, ":k") {
		t.Errorf("Key = %q, want the configured prefix", key)
	}
}

// TestBlackholedRedisCostsOneBoundedWait checks that no command waits on a
// Redis that accepts connections and never answers: the caller's context
// has no deadline, so without the configured timeouts Do would hang
// (until go test's timeout), and after the first failure the breaker
// answers at once without touching the network.
func TestBlackholedRedisCostsOneBoundedWait(t *testing.T) {
	p, err := faultproxy.New(redistest.Addr(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	c := open(t, p.Addr(), clk)
	ctx := context.Background()
	ping := func(ctx context.Context) error { return c.Client.Ping(ctx).Err() }
	if err := c.Do(ctx, ping); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	for _, fault := range []struct {
		name  string
		apply func() error
	}{
		{"blackholed", p.Blackhole},
		{"killed", func() error { p.Kill(); return nil }},
	} {
		t.Run(fault.name, func(t *testing.T) {
			if err := fault.apply(); err != nil {
				t.Fatal(err)
			}
			if err := c.Do(ctx, ping); err == nil || errors.Is(err, ErrUnavailable) {
				t.Fatalf("first command against a %s Redis: %v, want its own failure", fault.name, err)
			}
			if err := c.Do(ctx, ping); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("second command: %v, want the breaker to skip Redis", err)
			}
			if err := p.Resume(); err != nil {
				t.Fatal(err)
			}
			clk.Add(DefaultOptions().Cooldown)
			if err := c.Do(ctx, ping); err != nil {
				t.Fatalf("after Resume and the cooldown: %v", err)
			}
		})
	}
}

func TestOpenRefusesAMalformedURL(t *testing.T) {
	for _, u := range []string{"", "http://127.0.0.1:6379", "redis://127.0.0.1:6379/notanumber"} {
		opt := DefaultOptions()
		opt.URL = u
		if c, err := Open(opt); err == nil {
			c.Close()
			t.Errorf("Open(%q) succeeded", u)
		}
	}
}

// busyPool opens a Conn with one pooled connection and holds that
// connection in a blocking command for hold: commands meanwhile wait for
// the pool, not for Redis.
func busyPool(t *testing.T, hold time.Duration) *Conn {
	t.Helper()
	opt := DefaultOptions()
	opt.URL, opt.Prefix, opt.PoolSize = "redis://"+redistest.Addr(t)+"/0", redistest.Prefix(t), 1
	c, err := Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	started := make(chan struct{})
	go func() {
		defer close(done)
		close(started)
		_ = c.Client.BLPop(context.Background(), hold, c.Key("never-pushed"))
	}()
	<-started
	t.Cleanup(func() { <-done; c.Close() })
	// Wait for the BLPOP to hold the pool's connection.
	for st := c.Client.PoolStats(); st.TotalConns != 1 || st.IdleConns != 0; st = c.Client.PoolStats() {
		select {
		case <-done:
			t.Fatal("the blocking command ended before it held the connection")
		case <-time.After(time.Millisecond):
		}
	}
	return c
}

// TestBusyPoolIsNotAnOutage: a command that finds every pooled connection
// busy fails with redis.ErrPoolTimeout and leaves the breaker closed: the
// process is saturated, Redis answers (a stampede on one replica used to
// open the breaker and drop the cross-replica fill lock).
func TestBusyPoolIsNotAnOutage(t *testing.T) {
	c := busyPool(t, 2*time.Second)
	err := c.Do(context.Background(), func(ctx context.Context) error { return c.Client.Ping(ctx).Err() })
	if !errors.Is(err, redis.ErrPoolTimeout) {
		t.Fatalf("Ping with the only connection busy = %v, want redis.ErrPoolTimeout", err)
	}
	if c.Breaker.Open() || c.Breaker.Stats().Failures != 0 {
		t.Errorf("breaker after a pool timeout: %+v, want closed with no failure", c.Breaker.Stats())
	}
}
