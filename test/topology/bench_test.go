package topology

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/app"
	"github.com/pkgscope/pkgscope/internal/cache"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/redistest"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// BenchmarkWarmRESTRead is the mirror's side of bench/load/run.sh without
// the network: a warm GET of a 2.6 KiB file through the whole handler
// (request id, log line, routing, resolve, list, body), for profiling.
func BenchmarkWarmRESTRead(b *testing.B) {
	reg := fakeregistry.New(b)
	reg.Publish("bench-pkg", "1.0.0", tarballtest.Package(b, map[string]string{
		"index.js": strings.Repeat("export function f(a, b) { return a + b; } // the benchmarked read\n", 40),
	}))
	cfg := config.Default()
	cfg.DataDir, cfg.ProjectDir = b.TempDir(), b.TempDir()
	empty := filepath.Join(b.TempDir(), "npmrc")
	os.WriteFile(empty, nil, 0o600)
	env := map[string]string{"npm_config_registry": reg.URL(), "NPM_CONFIG_USERCONFIG": empty, "NPM_CONFIG_GLOBALCONFIG": empty}
	a, err := app.New(b.Context(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), func(k string) string { return env[k] })
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	h := a.Handler()
	get := func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/npm/bench-pkg@1.0.0/index.js", nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
	get()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			get()
		}
	})
}

// BenchmarkMixHitRatio replays a realistic agent mix against two replicas
// sharing Postgres and Redis, and reports each cache layer's hit ratio:
// 30 packages of 60 files with 2 versions each, picked by a Zipf law (a
// few packages get most reads, as in an organisation's dependency tree);
// specs 60% exact, 25% a range, 15% latest; actions 40% read, 25% glob,
// 20% list, 15% grep; each request to either replica. The first touch of
// each version fills it (cold ingests are part of the mix).
//
//	go test -run '^$' -bench MixHitRatio -benchtime 3000x ./test/topology/
func BenchmarkMixHitRatio(b *testing.B) {
	const packages, filesPer = 30, 60
	reg := fakeregistry.New(b)
	for p := range packages {
		for _, v := range []string{"1.0.0", "1.1.0"} {
			fs := map[string]string{"package.json": fmt.Sprintf(`{"name":"pkg%d","version":%q}`, p, v)}
			for f := range filesPer {
				fs[fmt.Sprintf("lib/f%02d.js", f)] = fmt.Sprintf("export const v%d = %q; // %d\n", f, v, p)
			}
			reg.Publish(fmt.Sprintf("pkg%d", p), v, tarballtest.Package(b, fs))
		}
	}
	dbURL, prefix := pgtest.URL(b), redistest.Prefix(b)
	var apps []*app.App
	var handlers []http.Handler
	for range 2 {
		cfg := config.Default()
		cfg.DataDir, cfg.ProjectDir = b.TempDir(), b.TempDir()
		cfg.DatabaseURL, cfg.RedisURL, cfg.RedisPrefix = dbURL, redistest.ServerURL(), prefix
		empty := filepath.Join(b.TempDir(), "npmrc")
		os.WriteFile(empty, nil, 0o600)
		env := map[string]string{"npm_config_registry": reg.URL(), "NPM_CONFIG_USERCONFIG": empty, "NPM_CONFIG_GLOBALCONFIG": empty}
		a, err := app.New(b.Context(), cfg, slog.New(slog.DiscardHandler), func(k string) string { return env[k] })
		if err != nil {
			b.Fatal(err)
		}
		defer a.Close()
		apps, handlers = append(apps, a), append(handlers, a.Handler())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pkgZipf := rand.NewZipf(rng, 1.2, 1, packages-1)
	fileZipf := rand.NewZipf(rng, 1.1, 1, filesPer-1)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		name := fmt.Sprintf("pkg%d", pkgZipf.Uint64())
		var spec string
		switch r := rng.IntN(100); {
		case r < 30:
			spec = "1.0.0"
		case r < 60:
			spec = "1.1.0"
		case r < 85:
			spec = "^1.0.0"
		default:
			spec = "latest"
		}
		file := fmt.Sprintf("lib/f%02d.js", fileZipf.Uint64())
		var body string
		switch r := rng.IntN(100); {
		case r < 40:
			body = fmt.Sprintf(`{"action":"read","packageName":%q,"version":%q,"path":%q}`, name, spec, file)
		case r < 65:
			body = fmt.Sprintf(`{"action":"glob","packageName":%q,"version":%q,"patterns":["lib/f0*.js"]}`, name, spec)
		case r < 85:
			body = fmt.Sprintf(`{"action":"list","packageName":%q,"version":%q}`, name, spec)
		default:
			body = fmt.Sprintf(`{"action":"grep","packageName":%q,"version":%q,"pattern":"v1[0-9]"}`, name, spec)
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/explore", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		handlers[i%2].ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", body, rec.Code, rec.Body)
		}
	}
	b.StopTimer()
	var local, redis cache.LayerStats
	var loads uint64
	for _, a := range apps {
		s := a.Cache.Stats()
		local.Hits, local.Misses = local.Hits+s.Local.Hits, local.Misses+s.Local.Misses
		redis.Hits, redis.Misses = redis.Hits+s.Redis.Hits, redis.Misses+s.Redis.Misses
		loads += s.Loads
	}
	ratio := func(s cache.LayerStats) float64 { return 100 * float64(s.Hits) / float64(max(1, s.Hits+s.Misses)) }
	b.ReportMetric(ratio(local), "local-hit-%")
	b.ReportMetric(ratio(redis), "redis-hit-%")
	b.ReportMetric(100*float64(local.Hits+redis.Hits)/float64(max(1, local.Hits+local.Misses)), "any-hit-%")
	b.ReportMetric(float64(loads)/float64(b.N), "store-loads/op")
}
