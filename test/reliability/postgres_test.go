package reliability

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/faultproxy"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/postgres"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// storeUnavailableIs503 records whether explore.Classify maps
// store.ErrUnavailable to 503: until it does, a request meeting a Postgres
// that refuses connections answers 500 "internal" (a blackholed one
// already answers 503 "timeout", through context.DeadlineExceeded). The
// store side is fixed and tested (internal/store/postgres
// TestDatabaseDownIsUnavailable); the one missing line is reported in
// docs/RELIABILITY.md. Set this to true when it lands.
const storeUnavailableIs503 = true

// pgBound is the client deadline while Postgres is faulty: the store's
// QueryTimeout (5s by default, postgres.Options) fails a read that meets a
// blackhole, so an answer must come well within this.
const pgBound = 15 * time.Second

// viaProxy returns a fresh test schema's URL with its host replaced by a
// fault proxy in front of the Postgres server, and the direct URL.
func viaProxy(t *testing.T) (proxied, direct string, p *faultproxy.Proxy) {
	t.Helper()
	direct = pgtest.URL(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	p, err = faultproxy.New(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	u.Host = p.Addr()
	return u.String(), direct, p
}

// openDirect opens the test schema without the proxy, to look at what the
// mirror left in it.
func openDirect(t *testing.T, direct string) *postgres.Store {
	t.Helper()
	st, err := postgres.Open(t.Context(), direct, postgres.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

var pgFiles = map[string]string{
	"package.json": `{"name":"warm","version":"1.0.0"}`,
	"index.js":     "module.exports = require('./lib/a.js');\n",
	"lib/a.js":     "exports.a = 1;\n",
}

// pgMirror is a mirror on Postgres behind a fault proxy, with its
// in-process cache and held raw answers off so every request reaches the
// store and meets the fault.
func pgMirror(t *testing.T) (*mirror, *faultproxy.Proxy, *postgres.Store) {
	proxied, direct, proxy := viaProxy(t)
	m := newMirror(t, func(c *config.Config) {
		c.DatabaseURL = proxied
		c.CacheLocalBytes = 0
		c.RawAnswerBytes = 0 // nor held raw answers
	})
	return m, proxy, openDirect(t, direct)
}

// down checks an answer given while Postgres is unreachable: within the
// client deadline, never a 404 or a 200, and a 503 with Retry-After.
func down(t *testing.T, phase string, a answer) {
	t.Helper()
	if a.err != nil {
		t.Errorf("%s: no answer within %s: %v", phase, pgBound, a.err)
		return
	}
	if a.status == http.StatusInternalServerError && a.code() == "internal" && !storeUnavailableIs503 {
		t.Logf("%s: 500 internal (known: explore.Classify does not map store.ErrUnavailable yet)", phase)
		return
	}
	ra, err := strconv.Atoi(a.header.Get("Retry-After"))
	if a.status != http.StatusServiceUnavailable || err != nil || ra < 1 {
		t.Errorf("%s: %v (Retry-After %q), want 503 with Retry-After", phase, a, a.header.Get("Retry-After"))
	}
}

func (m *mirror) getWithin(path string, bound time.Duration) answer {
	return do(m.t.Context(), m.hc, http.MethodGet, m.url+path, "", bound)
}

// recovers reads path until it answers want, at most 20 times: the pool
// drops connections the fault broke as it meets them, without a restart.
func recovers(t *testing.T, m *mirror, phase, path, want string) {
	t.Helper()
	var a answer
	for range 20 {
		if a = m.getWithin(path, pgBound); a.err == nil && a.status == http.StatusOK {
			break
		}
	}
	if a.status != http.StatusOK || string(a.body) != want {
		t.Fatalf("%s: %s after 20 tries: %v, want 200 %q", phase, path, a, want)
	}
}

// TestPostgresKilledBlackholedSlow: with Postgres killed, then blackholed,
// warm and cold requests answer 503 with Retry-After within the client
// deadline (never 404, never a hang); each time Postgres is back, the
// same process serves again on its own; with Postgres slow, answers are
// right, and a cold version ingests whole.
func TestPostgresKilledBlackholedSlow(t *testing.T) {
	t.Parallel() // mostly waiting on QueryTimeout
	m, proxy, direct := pgMirror(t)
	m.reg.Publish("warm", "1.0.0", tb.Package(t, pgFiles))
	for _, cold := range []string{"cold-a", "cold-b", "cold-slow"} {
		m.reg.Publish(cold, "1.0.0", tb.Package(t, map[string]string{"x.js": cold + "\n"}))
	}
	recovers(t, m, "warming", "/v1/npm/warm@1.0.0/index.js", pgFiles["index.js"])

	faults := []struct {
		name  string
		apply func() error
		cold  string
	}{
		{"killed", func() error { proxy.Kill(); return nil }, "cold-a"},
		{"blackholed", proxy.Blackhole, "cold-b"},
	}
	for _, f := range faults {
		if err := f.apply(); err != nil {
			t.Fatal(err)
		}
		down(t, f.name+" warm read", m.getWithin("/v1/npm/warm@1.0.0/lib/a.js", pgBound))
		down(t, f.name+" warm list", m.getWithin("/v1/npm/warm@1.0.0/-/files", pgBound))
		down(t, f.name+" cold read", m.getWithin("/v1/npm/"+f.cold+"@1.0.0/x.js", pgBound))
		if err := proxy.Resume(); err != nil {
			t.Fatal(err)
		}
		recovers(t, m, "after "+f.name, "/v1/npm/warm@1.0.0/lib/a.js", pgFiles["lib/a.js"])
		recovers(t, m, "after "+f.name+" (cold)", "/v1/npm/"+f.cold+"@1.0.0/x.js", f.cold+"\n")
	}

	// Slow: every chunk each way waits 20ms. Answers are right and a cold
	// version ingests whole.
	proxy.SetLatency(20 * time.Millisecond)
	recovers(t, m, "slow warm", "/v1/npm/warm@1.0.0/index.js", pgFiles["index.js"])
	recovers(t, m, "slow cold", "/v1/npm/cold-slow@1.0.0/x.js", "cold-slow\n")
	proxy.SetLatency(0)
	for _, name := range []string{"warm", "cold-a", "cold-b", "cold-slow"} {
		m.stored(t, name, "1.0.0")
		whole(t, direct, name, "1.0.0")
	}
}

// whole checks that name@version is in the store with every file of its
// tarball, each body readable and matching its hash.
func whole(t *testing.T, st store.Reader, name, version string) []store.File {
	t.Helper()
	files, err := st.Files(t.Context(), name, version)
	if err != nil {
		t.Fatalf("%s@%s: Files: %v", name, version, err)
	}
	for _, f := range files {
		b, err := st.Blob(t.Context(), f.Hash)
		if err != nil || store.HashOf(b) != f.Hash || int64(len(b)) != f.Size {
			t.Errorf("%s@%s: %s: blob %d bytes, %v", name, version, f.Path, len(b), err)
		}
	}
	return files
}

// noPartial checks the visibility rule: a version is absent, or whole.
func noPartial(t *testing.T, st store.Reader, name, version string, wantFiles int) {
	t.Helper()
	files, err := st.Files(t.Context(), name, version)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		t.Fatalf("%s@%s: Files: %v", name, version, err)
	case len(files) != wantFiles:
		t.Fatalf("%s@%s is visible with %d of its %d files", name, version, len(files), wantFiles)
	}
}

// bigPackage is a tarball of n files of size bytes each, random so that
// neither gzip nor the store's zstd shrinks them: the store receives about
// n×size bytes, in several PutBlobs batches (8 MiB each by default).
func bigPackage(t *testing.T, seed uint64, n, size int) ([]byte, map[string]string) {
	rng := rand.New(rand.NewPCG(seed, seed))
	files := map[string]string{"package.json": `{"name":"big"}`}
	var entries []tb.Entry
	for i := range n {
		b := make([]byte, size)
		for j := range b {
			b[j] = byte('a' + rng.IntN(26))
		}
		if j := rng.IntN(size); j > 0 {
			b[j] = '\n'
		}
		files[fmt.Sprintf("chunk/%03d.txt", i)] = string(b)
	}
	for p, body := range files {
		entries = append(entries, tb.File("package/"+p, body))
	}
	slices.SortFunc(entries, func(a, b tb.Entry) int { return strings.Compare(a.Header.Name, b.Header.Name) })
	return tb.TGZ(t, entries...), files
}

// TestPostgresResetMidIngest cuts every Postgres connection in the middle
// of a 24 MiB ingest (after 12 MiB of store traffic: the first 8 MiB
// batch of blobs is stored, the second is being written): the request fails with 503 (or the known 500), nothing
// of the version is visible, and once Postgres is back the same request
// ingests it whole; blobs written before the cut are not written twice.
func TestPostgresResetMidIngest(t *testing.T) {
	t.Parallel()
	m, proxy, direct := pgMirror(t)
	tgz, files := bigPackage(t, 1, 48, 512<<10)
	m.reg.Publish("big", "1.0.0", tgz)
	m.reg.Publish("small", "1.0.0", tb.Package(t, pgFiles))
	recovers(t, m, "warming", "/v1/npm/small@1.0.0/index.js", pgFiles["index.js"])

	proxy.KillAfter(12 << 20)
	a := m.getWithin("/v1/npm/big@1.0.0/-/files", time.Minute)
	// The listing is answered from the verified download before the
	// store's writes (docs/ARCHITECTURE.md "The miss path"), or fails if
	// the cut comes first; the fill ends after the cut either way.
	if a.status != http.StatusOK {
		down(t, "cut mid-ingest", a)
	}
	_ = m.app.EnsureIndex(t.Context(), "big", "1.0.0") // returns once the fill has ended
	if proxy.Mode() != faultproxy.Killed {
		t.Fatalf("the ingest finished before the cut (%+v): %v", proxy.Stats(), a)
	}
	noPartial(t, direct, "big", "1.0.0", len(files))
	before, err := direct.BlobCount(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := proxy.Resume(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		a = m.getWithin("/v1/npm/big@1.0.0/-/files", time.Minute)
		if a.status == http.StatusOK {
			break
		}
		if i == 20 {
			t.Fatalf("after Postgres came back, 20 tries: %v", a)
		}
		noPartial(t, direct, "big", "1.0.0", len(files))
	}
	m.stored(t, "big", "1.0.0")
	got := whole(t, direct, "big", "1.0.0")
	if len(got) != len(files) {
		t.Fatalf("big@1.0.0 has %d files, want %d", len(got), len(files))
	}
	for _, f := range got {
		b, _ := direct.Blob(t.Context(), f.Hash)
		if string(b) != files[f.Path] {
			t.Errorf("%s: stored body differs from the tarball's", f.Path)
		}
	}
	// Content addressing: the retry met the bodies written before the
	// cut and went on (PutBlobs skips them; none is stored twice, the
	// hash is the key).
	after, err := direct.BlobCount(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("blobs before the retry %d, after %d (index chunks included)", before, after)
	if before <= int64(len(pgFiles)) {
		t.Errorf("no body of big was stored before the cut (%d blobs): the cut came too early to test idempotence", before)
	}
}
