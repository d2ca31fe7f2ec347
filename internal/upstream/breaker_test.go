package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// isOpen checks err is the breaker's refusal with the given Retry-After.
func isOpen(t *testing.T, err error, retry time.Duration) {
	t.Helper()
	var ue *unavailable.Error
	if !errors.As(err, &ue) || !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("err = %v, want an *unavailable.Error wrapping ErrCircuitOpen", err)
	}
	if ue.RetryAfter != retry {
		t.Errorf("RetryAfter = %v, want %v (%v)", ue.RetryAfter, retry, err)
	}
	if errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v also matches ErrNotFound", err)
	}
}

func TestBreakerOpensAfterConsecutiveFailuresAndProbesBack(t *testing.T) {
	const n, cooldown = 3, time.Minute
	e := newEnv(t, Config{BreakerFailures: n, BreakerCooldown: cooldown})
	e.reg.Publish("p", "1.0.0", tgz(t))
	e.reg.Publish("q", "1.0.0", tgz(t))
	e.reg.Fail("p", 429, "1")
	ctx := context.Background()
	for i := range n {
		if _, err := e.c.Packument(ctx, "p"); errors.Is(err, ErrCircuitOpen) || err == nil {
			t.Fatalf("failure %d: err = %v, want the registry's 429", i+1, err)
		}
	}
	// Open: no request leaves, for any package on that host.
	_, err := e.c.Packument(ctx, "p")
	isOpen(t, err, cooldown)
	_, err = e.c.Packument(ctx, "q")
	isOpen(t, err, cooldown)
	if got := e.reg.PackumentRequests("p") + e.reg.PackumentRequests("q"); got != n {
		t.Errorf("registry saw %d requests, want %d: an open breaker sends none", got, n)
	}
	e.clock.Advance(20 * time.Second)
	_, err = e.c.Packument(ctx, "q")
	isOpen(t, err, 40*time.Second)

	// Cooldown over, still failing: one probe goes, fails, and the
	// breaker opens for a whole cooldown again.
	e.clock.Advance(40 * time.Second)
	if _, err := e.c.Packument(ctx, "p"); errors.Is(err, ErrCircuitOpen) || err == nil {
		t.Fatalf("probe: err = %v, want the registry's 429", err)
	}
	_, err = e.c.Packument(ctx, "p")
	isOpen(t, err, cooldown)
	if got := e.reg.PackumentRequests("p"); got != n+1 {
		t.Errorf("registry saw %d requests, want %d (the failures and one probe)", got, n+1)
	}

	// Registry back: the next probe closes the breaker.
	e.reg.Fail("p", 0, "")
	e.clock.Advance(cooldown)
	if _, err := e.c.Packument(ctx, "p"); err != nil {
		t.Fatalf("probe after recovery: %v", err)
	}
	if _, err := e.c.Packument(ctx, "q"); err != nil {
		t.Fatalf("after the breaker closed: %v", err)
	}
}

func TestBreakerCountsOnlyConsecutiveFailures(t *testing.T) {
	const n = 3
	e := newEnv(t, Config{BreakerFailures: n, PackumentTTL: time.Millisecond})
	e.reg.Publish("ok", "1.0.0", tgz(t))
	e.reg.Publish("down", "1.0.0", tgz(t))
	e.reg.Fail("down", 429, "")
	ctx := context.Background()
	for round := range 4 {
		for range n - 1 {
			if _, err := e.c.Packument(ctx, "down"); errors.Is(err, ErrCircuitOpen) {
				t.Fatalf("round %d: breaker opened after fewer than %d consecutive failures", round, n)
			}
		}
		e.clock.Advance(time.Second) // past the TTL: "ok" is asked again
		if _, err := e.c.Packument(ctx, "ok"); err != nil {
			t.Fatalf("round %d: a success between failures: %v", round, err)
		}
	}
}

// Answers that prove the host is up never open the breaker: they are one
// package's problem.
func TestBreakerIgnoresAnswersFromALiveHost(t *testing.T) {
	const n = 2
	tests := []struct {
		name  string
		setup func(r *fakeregistry.Registry)
	}{
		{"404", func(r *fakeregistry.Registry) {}},
		{"403", func(r *fakeregistry.Registry) { r.Fail("x", 403, "") }},
		{"500", func(r *fakeregistry.Registry) { r.Fail("x", 500, "") }},
		{"503", func(r *fakeregistry.Registry) { r.Fail("x", 503, "") }},
		{"garbage JSON", func(r *fakeregistry.Registry) { r.SetRawPackument("x", []byte("<html>hello</html>")) }},
		{"wrong type", func(r *fakeregistry.Registry) { r.SetRawPackument("x", []byte(`{"versions":[1,2]}`)) }},
		{"wrong name", func(r *fakeregistry.Registry) { r.SetRawPackument("x", []byte(`{"name":"y"}`)) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{BreakerFailures: n})
			tc.setup(e.reg)
			for i := range n + 2 {
				_, err := e.c.Packument(context.Background(), "x")
				if err == nil || errors.Is(err, ErrCircuitOpen) {
					t.Fatalf("request %d: err = %v, want the registry's own answer", i+1, err)
				}
			}
			if got := e.reg.PackumentRequests("x"); got != n+2 {
				t.Errorf("registry saw %d requests, want %d", got, n+2)
			}
		})
	}
}

func TestBreakerOff(t *testing.T) {
	e := newEnv(t, Config{BreakerFailures: -1})
	e.reg.Fail("p", 429, "")
	for range 10 {
		if _, err := e.c.Packument(context.Background(), "p"); errors.Is(err, ErrCircuitOpen) {
			t.Fatal("breaker opened with BreakerFailures -1")
		}
	}
	if got := e.reg.PackumentRequests("p"); got != 10 {
		t.Errorf("registry saw %d requests, want 10", got)
	}
}

// Tarball failures count against the tarball's host, which here is the
// registry's, so packuments from it stop too.
func TestBreakerCoversTarballs(t *testing.T) {
	const n, cooldown = 2, 10 * time.Second
	e := newEnv(t, Config{BreakerFailures: n, BreakerCooldown: cooldown})
	e.reg.Publish("p", "1.0.0", tgz(t))
	e.reg.Publish("q", "1.0.0", tgz(t))
	v := e.version(t, "p", "1.0.0")
	e.reg.Fail("p", 429, "")
	ctx := context.Background()
	for range n {
		if _, err := fetchAll(ctx, e.c, "p", v); err == nil || errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("err = %v, want the registry's 429", err)
		}
	}
	_, err := fetchAll(ctx, e.c, "p", v)
	isOpen(t, err, cooldown)
	_, err = e.c.Packument(ctx, "q")
	isOpen(t, err, cooldown)
	if got := e.reg.TarballDownloads("p", "1.0.0"); got != n {
		t.Errorf("tarball downloads = %d, want %d", got, n)
	}
}

// A caller giving up says nothing about the host.
func TestBreakerIgnoresCallerCancellation(t *testing.T) {
	e := newEnv(t, Config{BreakerFailures: 1})
	e.reg.Publish("p", "1.0.0", tgz(t))
	v := e.version(t, "p", "1.0.0")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 3 {
		if _, err := fetchAll(ctx, e.c, "p", v); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	}
	if _, err := fetchAll(context.Background(), e.c, "p", v); err != nil {
		t.Fatalf("after cancelled calls: %v", err)
	}
}

// gatedRegistry answers every request with status (200 serves a minimal
// packument of the requested name); while gate is set, a request reports
// its arrival on arrived and waits for gate to close.
type gatedRegistry struct {
	status  atomic.Int32
	hits    atomic.Int32
	gate    atomic.Pointer[chan struct{}]
	arrived chan struct{}
}

func (g *gatedRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.hits.Add(1)
	if ch := g.gate.Load(); ch != nil {
		g.arrived <- struct{}{}
		<-*ch
	}
	status := int(g.status.Load())
	if status != http.StatusOK {
		w.WriteHeader(status)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"name": r.URL.Path[1:], "versions": map[string]any{}})
}

// While the one probe is in flight, other callers are refused at once
// with a short Retry-After instead of piling onto a host that may still be
// dead.
func TestBreakerLetsOneProbeThrough(t *testing.T) {
	g := &gatedRegistry{arrived: make(chan struct{}, 1)}
	g.status.Store(429)
	srv := httptest.NewServer(g)
	defer srv.Close()
	const cooldown = time.Minute
	e := newEnvFor(t, fakeregistry.New(t), srv.URL+"/", Config{BreakerFailures: 1, BreakerCooldown: cooldown})
	ctx := context.Background()
	if _, err := e.c.Packument(ctx, "a"); err == nil {
		t.Fatal("want the 429")
	}
	_, err := e.c.Packument(ctx, "a")
	isOpen(t, err, cooldown)

	e.clock.Advance(cooldown)
	g.status.Store(200)
	gate := make(chan struct{})
	g.gate.Store(&gate)
	probe := make(chan error, 1)
	go func() { _, err := e.c.Packument(ctx, "a"); probe <- err }()
	<-g.arrived
	_, err = e.c.Packument(ctx, "b")
	isOpen(t, err, probeRetryAfter)
	g.gate.Store(nil)
	close(gate)
	if err := <-probe; err != nil {
		t.Fatalf("probe: %v", err)
	}
	if _, err := e.c.Packument(ctx, "b"); err != nil {
		t.Fatalf("after the probe closed the breaker: %v", err)
	}
	if got := g.hits.Load(); got != 3 {
		t.Errorf("registry saw %d requests, want 3 (failure, probe, b)", got)
	}
}

// Timeouts and bodies cut short count as failures: they are what a dead
// or dying host looks like.
func TestBreakerCountsTimeoutsAndCutBodies(t *testing.T) {
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		io.WriteString(w, `{"name":"a","versions":{`)
	}))
	defer cut.Close()
	e := newEnvFor(t, fakeregistry.New(t), cut.URL+"/", Config{BreakerFailures: 2})
	for range 2 {
		if _, err := e.c.Packument(context.Background(), "a"); err == nil {
			t.Fatal("want an error for a cut body")
		}
	}
	_, err := e.c.Packument(context.Background(), "a")
	isOpen(t, err, 30*time.Second)

	e = newEnv(t, Config{BreakerFailures: 2, RequestTimeout: 20 * time.Millisecond})
	release := e.reg.Hold("slow")
	defer release()
	for range 2 {
		if _, err := e.c.Packument(context.Background(), "slow"); err == nil {
			t.Fatal("want a timeout")
		}
	}
	_, err = e.c.Packument(context.Background(), "slow")
	isOpen(t, err, 30*time.Second)
}

func TestClassify(t *testing.T) {
	ue := func(status int, err error) error { return &unavailable.Error{Status: status, Err: err} }
	var syn json.SyntaxError
	tests := []struct {
		err  error
		want outcome
	}{
		{nil, healthy},
		{fmt.Errorf("x: %w", ErrNotFound), healthy},
		{fmt.Errorf("x: %w", ErrIntegrity), healthy},
		{fmt.Errorf("x: %w", ErrTooLarge), healthy},
		{fmt.Errorf("x: %w", context.Canceled), neutral},
		{fmt.Errorf("x: %w", ErrTarballURL), neutral},
		{ue(0, ErrCircuitOpen), neutral},
		{ue(500, errors.New("x")), healthy},
		{ue(504, errors.New("x")), healthy},
		{ue(429, errors.New("x")), failed},
		{ue(401, errors.New("x")), healthy},
		{ue(0, errors.New("connection refused")), failed},
		{ue(0, fmt.Errorf("decoding: %w", io.ErrUnexpectedEOF)), failed},
		{ue(0, fmt.Errorf("decoding: %w", &syn)), healthy},
	}
	for _, tt := range tests {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("classify(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}
