package reliability

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/redistest"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// TestRateLimitFloodSparesOtherTokens: with the rate limit on (Redis),
// one token flooding a warm read gets 429 with Retry-After, and another
// token reading at its own pace meanwhile is never refused (issue 25 §7).
// The other token's latencies, idle and under the flood, are logged (p50,
// p99 and their ratio), not asserted.
func TestRateLimitFloodSparesOtherTokens(t *testing.T) {
	prefix := redistest.Prefix(t)
	rdb := redistest.Client(t)
	t.Cleanup(func() {
		if keys := rdb.Keys(context.Background(), "rate:"+prefix+"*").Val(); len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	})
	const samples = 200  // the calm token's reads per phase, within its burst
	const floodConns = 2 // the flooding token's connections, one per core here
	m := newMirror(t, func(c *config.Config) {
		c.Tokens = "flood-token,calm-token"
		c.RedisURL, c.RedisPrefix = redistest.URL(t), prefix
		c.RateLimitPerMinute, c.RateLimitBurst = 2*samples+10, 2*samples+10
	})
	m.reg.Publish("calm", "1.0.0", tb.Package(t, map[string]string{"index.js": "module.exports = 1;\n"}))
	const path = "/v1/npm/calm@1.0.0/index.js"
	get := func(token string) (int, string, time.Duration) {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", m.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		start := time.Now()
		resp, err := m.hc.Do(req)
		if err != nil {
			return 0, err.Error(), time.Since(start)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After"), time.Since(start)
	}
	if code, _, _ := get("flood-token"); code != 200 { // the fill, by the token that floods next
		t.Fatalf("first read: %d", code)
	}
	calm := func(phase string) []time.Duration {
		var lat []time.Duration
		for range samples {
			code, _, d := get("calm-token")
			if code != http.StatusOK {
				t.Errorf("%s: the calm token was answered %d", phase, code)
			}
			lat = append(lat, d)
		}
		slices.Sort(lat)
		return lat
	}
	idle := calm("idle")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent, limited, noRetry atomic.Int64
	refused := make(chan struct{})
	var once sync.Once
	for range floodConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, retry, _ := get("flood-token")
				sent.Add(1)
				if code == http.StatusTooManyRequests {
					once.Do(func() { close(refused) })
					limited.Add(1)
					if retry == "" {
						noRetry.Add(1)
					}
				}
			}
		}()
	}
	<-refused // the flood has spent its burst: measure while it is refused
	flooded := calm("under the flood")
	close(stop)
	wg.Wait()
	if noRetry.Load() != 0 {
		t.Errorf("the flooding token sent %d reads, %d refused with 429 (%d without Retry-After); want each 429 with Retry-After",
			sent.Load(), limited.Load(), noRetry.Load())
	}
	p := func(lat []time.Duration, q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	t.Logf("flood on %d connections: %d reads, %d answered 429; calm token p50 %s idle, %s under the flood; p99 %s idle, %s under the flood (%.2fx)",
		floodConns, sent.Load(), limited.Load(), p(idle, .5), p(flooded, .5), p(idle, .99), p(flooded, .99),
		float64(p(flooded, .99))/float64(p(idle, .99)))
}
