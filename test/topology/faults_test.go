package topology

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/app"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/faultproxy"
	"github.com/pkgscope/pkgscope/internal/redistest"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// answerBound is how long a warm request may take whatever Redis does. It
// is a bound on hanging, enforced by the client's deadline, not a latency
// measurement: a warm read answers in milliseconds, a blackholed Redis
// costs at most redis-dial-timeout + 2×redis-timeout (600ms by default)
// once per cooldown.
const answerBound = 2 * time.Second

var files = map[string]string{
	"a.js":         "export const a = 1;\n",
	"b.js":         "export const b = 2;\n",
	"lib/c.d.ts":   "export declare const c: 3;\n",
	"package.json": `{"name":"faulty","version":"1.0.0"}`,
}

type result struct {
	url, want, body string
	status          int
	err             error
}

func (r result) ok() bool { return r.err == nil && r.status == http.StatusOK && r.body == r.want }

// load runs workers that read the files from the replicas until stop is
// closed, at most maxRequests in all, sending every result; the caller
// reads results until the channel closes.
func load(ctx context.Context, hc *http.Client, urls []string, workers, maxRequests int, stop <-chan struct{}) <-chan result {
	results := make(chan result)
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	paths := []string{"a.js", "b.js", "lib/c.d.ts"}
	for w := range workers {
		wg.Go(func() {
			for i := w; ; i += workers {
				mu.Lock()
				n++
				over := n > maxRequests
				mu.Unlock()
				if over {
					return
				}
				select {
				case <-stop:
					return
				default:
				}
				p := paths[i%len(paths)]
				url := urls[i%len(urls)] + "/v1/npm/faulty@1.0.0/" + p
				status, body, err := get(ctx, hc, url, answerBound)
				// Sent even after stop: the coordinator checks every
				// answer, including those in flight when the load ends.
				results <- result{url, files[p], body, status, err}
			}
		})
	}
	go func() { wg.Wait(); close(results) }()
	return results
}

// TestRedisKilledAndBlackholedMidLoad runs 3 replicas whose Redis sits
// behind a fault proxy, under a steady load of warm reads: with Redis
// killed, then blackholed, every read still answers, correctly and within
// answerBound; once Redis is back, the replicas write to it again.
func TestRedisKilledAndBlackholedMidLoad(t *testing.T) {
	proxy, err := faultproxy.New(redistest.Addr(t))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	// No local cache and no held raw answers, so every read goes to
	// Redis and feels the fault; a short cooldown, so replicas probe
	// Redis often.
	d := newDeployment(t, proxy.Addr(), "PKGSCOPE_CACHE_LOCAL_BYTES=0", "PKGSCOPE_RAW_ANSWER_BYTES=0", "PKGSCOPE_REDIS_COOLDOWN=50ms")
	d.reg.Publish("faulty", "1.0.0", tarballtest.Package(t, files))
	replicas := d.start(3)
	var urls []string
	for _, r := range replicas {
		urls = append(urls, r.url)
	}
	ctx := t.Context()
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	for _, u := range urls {
		if status, body, err := get(ctx, hc, u+"/v1/npm/faulty@1.0.0/a.js", time.Minute); err != nil || status != http.StatusOK || body != files["a.js"] {
			t.Fatalf("warming %s: %d %q %v", u, status, body, err)
		}
	}

	stop := make(chan struct{})
	results := load(ctx, hc, urls, 6, 20000, stop)
	failures := 0
	// take reads results until at least n came and until reached reports
	// that the phase did what it is for; the load's request cap bounds it.
	take := func(phase string, n int, reached func() bool) {
		t.Helper()
		for i := 0; i < n || !reached(); i++ {
			r, open := <-results
			if !open {
				t.Fatalf("%s: the load ran out of requests before the phase was reached (proxy %+v)", phase, proxy.Stats())
			}
			if !r.ok() {
				if failures++; failures <= 5 {
					t.Errorf("%s: %s → %d %q %v", phase, r.url, r.status, r.body, r.err)
				}
			}
		}
	}
	// Each phase lasts until every replica has logged what the phase is
	// for: its breaker opening (Redis down or blackholed: the timeouts
	// fired and the reads went on without Redis) or closing (Redis
	// answered again).
	logged := func(msg string) func() bool {
		from := make([]int, len(replicas))
		for i, r := range replicas {
			from[i] = strings.Count(r.log.String(), msg)
		}
		return func() bool {
			for i, r := range replicas {
				if strings.Count(r.log.String(), msg) == from[i] {
					return false
				}
			}
			return true
		}
	}
	const down, up = `msg="redis unavailable`, `msg="redis reachable again"`
	// Each condition counts log lines from before its fault is applied,
	// so a replica that reacts at once is not missed.
	take("Redis up", 60, func() bool { return true })
	reached := logged(down)
	proxy.Kill()
	take("Redis killed", 60, reached)
	reached = logged(up)
	if err := proxy.Resume(); err != nil {
		t.Fatal(err)
	}
	take("Redis back", 60, reached)
	reached = logged(down)
	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	take("Redis blackholed", 60, reached)
	reached = logged(up)
	if err := proxy.Resume(); err != nil {
		t.Fatal(err)
	}
	take("Redis back again", 60, reached)
	close(stop)
	for r := range results {
		if !r.ok() {
			if failures++; failures <= 5 {
				t.Errorf("in flight at the end: %s → %d %q %v", r.url, r.status, r.body, r.err)
			}
		}
	}
	if failures > 0 {
		t.Fatalf("%d reads failed", failures)
	}

	// Caching resumed: with the entries gone from Redis, reads put them
	// back. Bounded by a request count; no sleeping.
	rdb := redistest.Client(t)
	key := d.prefix + "cache:files:faulty@1.0.0"
	if err := rdb.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if i == 1000 {
			t.Fatalf("after 1000 reads with Redis back, no replica wrote %s", key)
		}
		if status, _, err := get(ctx, hc, urls[i%len(urls)]+"/v1/npm/faulty@1.0.0/b.js", answerBound); err != nil || status != http.StatusOK {
			t.Fatalf("read after recovery: %d %v", status, err)
		}
		if rdb.Exists(ctx, key).Val() == 1 {
			break
		}
	}
}

// inProcess wires a mirror with app.New (so its cache counters are
// visible) on the embedded store, with Redis at redisAddr.
func inProcess(t *testing.T, redisAddr string, tweak func(*config.Config)) (*app.App, *fakeregistry.Registry, string) {
	t.Helper()
	reg := fakeregistry.New(t)
	cfg := config.Default()
	cfg.DataDir, cfg.ProjectDir = t.TempDir(), t.TempDir()
	cfg.RedisURL, cfg.RedisPrefix = "redis://"+redisAddr+"/0", redistest.Prefix(t)
	tweak(&cfg)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	env := reg.Env()
	a, err := app.New(t.Context(), cfg, slog.New(slog.DiscardHandler), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		srv.Close()
		a.Close()
	})
	return a, reg, srv.URL
}

func TestCacheCountersStopAndResumeWithRedis(t *testing.T) {
	proxy, err := faultproxy.New(redistest.Addr(t))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	a, reg, url := inProcess(t, proxy.Addr(), func(c *config.Config) {
		c.CacheLocalBytes = 0
		c.RawAnswerBytes = 0
		c.RedisCooldown = time.Millisecond
	})
	reg.Publish("faulty", "1.0.0", tarballtest.Package(t, files))
	ctx := t.Context()
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	read := func(phase string) {
		t.Helper()
		status, body, err := get(ctx, hc, url+"/v1/npm/faulty@1.0.0/a.js", answerBound)
		if err != nil || status != http.StatusOK || body != files["a.js"] {
			t.Fatalf("%s: %d %q %v", phase, status, body, err)
		}
	}
	read("cold")
	// The cold read is answered once the download is verified, before
	// the version is committed: a read just after it may still be
	// answered from the fill, past the cache. Once committed, a read of
	// the stored version is loaded into Redis, and the next one hits it.
	for i := 0; a.Cache.Stats().Redis.Hits == 0; i++ {
		if i == 100 {
			t.Fatalf("100 warm reads with Redis up and no Redis hit: %+v", a.Cache.Stats())
		}
		read("warm")
	}
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
		before := a.Cache.Stats()
		for range 10 {
			read("Redis " + fault.name)
		}
		s := a.Cache.Stats()
		if s.Redis.Hits != before.Redis.Hits || s.Redis.Errors == before.Redis.Errors {
			t.Errorf("Redis %s: hits %d → %d, errors %d → %d; want no hits and errors counted",
				fault.name, before.Redis.Hits, s.Redis.Hits, before.Redis.Errors, s.Redis.Errors)
		}
		if err := proxy.Resume(); err != nil {
			t.Fatal(err)
		}
		hits := s.Redis.Hits
		for i := 0; a.Cache.Stats().Redis.Hits == hits; i++ {
			if i == 1000 {
				t.Fatalf("after Redis came back (%s), 1000 reads without a Redis hit: %+v", fault.name, a.Cache.Stats())
			}
			read("Redis back after " + fault.name)
		}
	}
}

func TestRateLimitAnswers429InTheAPIShape(t *testing.T) {
	_, reg, url := inProcess(t, redistest.Addr(t), func(c *config.Config) {
		c.RateLimitPerMinute, c.RateLimitBurst = 1, 1
	})
	t.Cleanup(func() {
		rdb := redistest.Client(t)
		if keys := rdb.Keys(context.Background(), "rate:test:*ratelimit*").Val(); len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	})
	reg.Publish("faulty", "1.0.0", tarballtest.Package(t, files))
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	if status, _, err := get(t.Context(), hc, url+"/v1/npm/faulty@1.0.0/a.js", time.Minute); err != nil || status != http.StatusOK {
		t.Fatalf("first request: %d %v", status, err)
	}
	resp, err := hc.Get(url + "/v1/npm/faulty@1.0.0/a.js")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusTooManyRequests || body.Error.Code != "rate_limited" ||
		!strings.Contains(body.Error.Message, "rate-limit-per-minute") || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second request: %d %+v Retry-After=%q; want 429 rate_limited naming the setting, with Retry-After",
			resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	// Health checks stay open.
	if status, _, err := get(t.Context(), hc, url+"/healthz", time.Minute); err != nil || status != http.StatusOK {
		t.Errorf("healthz under the limit: %d %v", status, err)
	}
}
