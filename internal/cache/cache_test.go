package cache

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/faultproxy"
	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/redisconn"
	"github.com/pkgscope/pkgscope/internal/redistest"
	"github.com/pkgscope/pkgscope/internal/resolve"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/unavailable"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a test clock moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// openRedis connects to the test Redis under prefix, directly or through
// addr (a fault proxy) when not "".
func openRedis(t *testing.T, prefix, addr string) *redisconn.Conn {
	t.Helper()
	u := redistest.URL(t)
	if addr != "" {
		u = "redis://" + addr + "/0"
	}
	opt := redisconn.DefaultOptions()
	opt.URL, opt.Prefix = u, prefix
	rc, err := redisconn.Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return rc
}

// testStore is a real embedded store holding pkg@1.0.0 with the files in
// bodies, in path order.
func testStore(t *testing.T, bodies map[string][]byte) store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	nv := store.NewVersion{Name: "pkg", Version: "1.0.0", Integrity: "sha512-x"}
	var blobs []store.Blob
	for _, p := range sortedKeys(bodies) {
		h := store.HashOf(bodies[p])
		blobs = append(blobs, store.Blob{Hash: h, Data: bodies[p]})
		nv.Files = append(nv.Files, store.File{Path: p, Size: int64(len(bodies[p])), Hash: h})
	}
	if err := st.PutBlobs(ctx, blobs); err != nil {
		t.Fatal(err)
	}
	if err := st.CommitVersion(ctx, nv); err != nil {
		t.Fatal(err)
	}
	return st
}

func sortedKeys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return ks
}

func TestReplicasShareImmutableEntriesThroughRedis(t *testing.T) {
	ctx := context.Background()
	small := []byte("export const x = 1;\n")
	big := bytes.Repeat([]byte("b"), 300<<10) // over MaxBodyBytes
	st := testStore(t, map[string][]byte{"index.js": small, "big.js": big})
	prefix := redistest.Prefix(t)
	a := New(openRedis(t, prefix, ""), DefaultOptions())
	b := New(openRedis(t, prefix, ""), DefaultOptions())
	ra, rb := a.Reader(st), b.Reader(st)

	files, err := ra.Files(ctx, "pkg", "1.0.0")
	if err != nil || len(files) != 2 {
		t.Fatalf("Files = %v, %v", files, err)
	}
	if _, err := ra.Files(ctx, "pkg", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats(); s.Local.Hits != 1 || s.Loads != 1 || s.Redis.Misses != 1 {
		t.Errorf("replica a after two lists: %+v, want 1 local hit, 1 Redis miss, 1 store load", s)
	}
	// Replica b has never seen it: Redis answers, the store is not asked.
	got, err := rb.Files(ctx, "pkg", "1.0.0")
	if err != nil || len(got) != 2 || got[0] != files[0] || got[1] != files[1] {
		t.Fatalf("replica b Files = %v, %v; want %v", got, err, files)
	}
	if s := b.Stats(); s.Redis.Hits != 1 || s.Loads != 0 {
		t.Errorf("replica b: %+v, want 1 Redis hit and no store load", s)
	}

	// A small body goes the same way.
	hSmall, hBig := store.HashOf(small), store.HashOf(big)
	if body, err := ra.Blob(ctx, hSmall); err != nil || !bytes.Equal(body, small) {
		t.Fatalf("a Blob = %q, %v", body, err)
	}
	if body, err := rb.Blob(ctx, hSmall); err != nil || !bytes.Equal(body, small) {
		t.Fatalf("b Blob = %q, %v", body, err)
	}
	if s := b.Stats(); s.Redis.Hits != 2 || s.Loads != 0 {
		t.Errorf("replica b after the body: %+v, want 2 Redis hits, no store load", s)
	}

	// A big body is never cached: each read is a store read, and after
	// the first, Redis is not even asked.
	for range 3 {
		if body, err := rb.Blob(ctx, hBig); err != nil || !bytes.Equal(body, big) {
			t.Fatalf("big Blob: %d bytes, %v", len(body), err)
		}
	}
	s := b.Stats()
	if s.Loads != 3 || s.Redis.Misses != 1 {
		t.Errorf("replica b after 3 big reads: %+v, want 3 store loads and 1 Redis miss", s)
	}
	if n, _ := redistest.Client(t).Exists(ctx, prefix+"cache:blob:"+hexOf(hBig)).Result(); n != 0 {
		t.Errorf("a body over MaxBodyBytes was stored in Redis")
	}
}

func hexOf(h store.Hash) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	for _, c := range h {
		b.WriteByte(digits[c>>4])
		b.WriteByte(digits[c&15])
	}
	return b.String()
}

func TestCorruptRedisEntriesAreNeverServed(t *testing.T) {
	ctx := context.Background()
	body := []byte("the real bytes\n")
	st := testStore(t, map[string][]byte{"a.js": body})
	prefix := redistest.Prefix(t)
	rdb := redistest.Client(t)
	h := store.HashOf(body)
	tests := []struct {
		name, key string
		value     []byte
		read      func(store.Reader) error
	}{
		{"body that does not match its hash", "blob:" + hexOf(h), seal([]byte("forged bytes\n"), time.Time{}), func(r store.Reader) error {
			got, err := r.Blob(ctx, h)
			if err == nil && !bytes.Equal(got, body) {
				return errors.New("served " + string(got))
			}
			return err
		}},
		{"garbled file list", "files:pkg@1.0.0", seal([]byte{5, 1, 2}, time.Time{}), func(r store.Reader) error {
			got, err := r.Files(ctx, "pkg", "1.0.0")
			if err == nil && (len(got) != 1 || got[0].Path != "a.js") {
				return errors.New("served a wrong list")
			}
			return err
		}},
		{"unknown envelope", "files:pkg@1.0.0", []byte("\x09garbage"), func(r store.Reader) error {
			_, err := r.Files(ctx, "pkg", "1.0.0")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := rdb.Set(ctx, prefix+"cache:"+tt.key, tt.value, 0).Err(); err != nil {
				t.Fatal(err)
			}
			c := New(openRedis(t, prefix, ""), DefaultOptions())
			if err := tt.read(c.Reader(st)); err != nil {
				t.Fatal(err)
			}
			if s := c.Stats(); s.Redis.Errors != 1 || s.Loads != 1 {
				t.Errorf("stats %+v, want 1 Redis error and the store read", s)
			}
		})
	}
}

func TestMissesAndErrorsAreNotCached(t *testing.T) {
	ctx := context.Background()
	st := testStore(t, map[string][]byte{"a.js": []byte("a")})
	c := New(openRedis(t, redistest.Prefix(t), ""), DefaultOptions())
	r := c.Reader(st)
	if _, err := r.Files(ctx, "pkg", "2.0.0"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Files of an absent version: %v", err)
	}
	// A fill commits it: the very next read sees it.
	b := []byte("b")
	if err := st.PutBlobs(ctx, []store.Blob{{Hash: store.HashOf(b), Data: b}}); err != nil {
		t.Fatal(err)
	}
	if err := st.CommitVersion(ctx, store.NewVersion{Name: "pkg", Version: "2.0.0", Integrity: "sha512-y",
		Files: []store.File{{Path: "b.js", Size: 1, Hash: store.HashOf(b)}}}); err != nil {
		t.Fatal(err)
	}
	files, err := r.Files(ctx, "pkg", "2.0.0")
	if err != nil || len(files) != 1 || files[0].Path != "b.js" {
		t.Fatalf("Files after the commit = %v, %v", files, err)
	}
}

// TestReadyVersionRecordsAreCached: the record of a ready version (which
// explore reads with every answer, for its deprecation) is read from the
// store once per cache and shared through Redis; a failed one is read
// every time, so the fill that turns it ready is seen at once.
func TestReadyVersionRecordsAreCached(t *testing.T) {
	ctx := context.Background()
	st := testStore(t, map[string][]byte{"a.js": []byte("a")})
	prefix := redistest.Prefix(t)
	a, b := New(openRedis(t, prefix, ""), DefaultOptions()), New(openRedis(t, prefix, ""), DefaultOptions())
	want, err := st.Version(ctx, "pkg", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Cache{a, a, b} {
		if got, err := c.Reader(st).Version(ctx, "pkg", "1.0.0"); err != nil || got.Integrity != want.Integrity || !got.CreatedAt.Equal(want.CreatedAt) || got.State != store.StateReady {
			t.Fatalf("Version = %+v, %v; want %+v", got, err, want)
		}
	}
	if sa, sb := a.Stats(), b.Stats(); sa.Loads != 1 || sa.Local.Hits != 1 || sb.Loads != 0 || sb.Redis.Hits != 1 {
		t.Errorf("loads %d and %d, local hits %d, Redis hits %d; want one store read in all", sa.Loads, sb.Loads, sa.Local.Hits, sb.Redis.Hits)
	}
	if err := st.MarkFailed(ctx, "pkg", "2.0.0", "upstream 503"); err != nil {
		t.Fatal(err)
	}
	r := a.Reader(st)
	if v, err := r.Version(ctx, "pkg", "2.0.0"); err != nil || v.State != store.StateFailed {
		t.Fatalf("failed Version = %+v, %v", v, err)
	}
	body := []byte("b")
	if err := st.PutBlobs(ctx, []store.Blob{{Hash: store.HashOf(body), Data: body}}); err != nil {
		t.Fatal(err)
	}
	if err := st.CommitVersion(ctx, store.NewVersion{Name: "pkg", Version: "2.0.0", Integrity: "sha512-y", Deprecated: "use 3",
		Files: []store.File{{Path: "b.js", Size: 1, Hash: store.HashOf(body)}}}); err != nil {
		t.Fatal(err)
	}
	if v, err := r.Version(ctx, "pkg", "2.0.0"); err != nil || v.State != store.StateReady || v.Deprecated != "use 3" {
		t.Errorf("Version after the commit = %+v, %v; want ready, deprecated", v, err)
	}
}

// registryResolver is the real resolver over the fake registry, with the
// upstream client's packument cache on clk.
func registryResolver(t *testing.T, reg *fakeregistry.Registry, st store.VersionReader, clk *clock, packumentTTL time.Duration) *resolve.Resolver {
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
	cfg := upstream.DefaultConfig()
	cfg.PackumentTTL, cfg.Clock = packumentTTL, clk.Now
	return resolve.New(upstream.New(npm, cfg, &http.Client{}), st)
}

func TestMovedDistTagIsSeenAfterTheTTLAndExactVersionsNeverExpire(t *testing.T) {
	ctx := context.Background()
	reg := fakeregistry.New(t)
	reg.Publish("pkg", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "1"}))
	reg.Publish("pkg", "2.0.0", tarballtest.Package(t, map[string]string{"a.js": "2"}), fakeregistry.WithTag("next"))
	st := testStore(t, map[string][]byte{"a.js": []byte("1")})
	clk := newClock()
	const packumentTTL, resolveTTL = time.Minute, 30 * time.Second
	opt := DefaultOptions()
	opt.ResolveTTL, opt.Now = resolveTTL, clk.Now
	prefix := redistest.Prefix(t)
	// Two replicas, each with its own upstream client.
	a := New(openRedis(t, prefix, ""), opt)
	b := New(openRedis(t, prefix, ""), opt)
	ra := a.Resolver(registryResolver(t, reg, st, clk, packumentTTL))
	rb := b.Resolver(registryResolver(t, reg, st, clk, packumentTTL))

	latest, _ := npmspec.ParseSpec("latest")
	exact, _ := npmspec.ParseSpec("2.0.0")
	resolveAll := func(r Resolver, spec npmspec.Spec, want string) {
		t.Helper()
		if got, err := r.Resolve(ctx, "pkg", spec); err != nil || got != want {
			t.Fatalf("Resolve(%s) = %q, %v; want %q", spec.Raw, got, err, want)
		}
	}
	resolveAll(ra, latest, "1.0.0")
	resolveAll(ra, exact, "2.0.0")
	reg.SetDistTag("pkg", "latest", "2.0.0")

	// Within the TTL both replicas keep the old answer: b from Redis.
	clk.Add(resolveTTL - time.Second)
	resolveAll(ra, latest, "1.0.0")
	resolveAll(rb, latest, "1.0.0")
	if s := b.Stats(); s.Redis.Hits != 1 || s.Loads != 0 {
		t.Errorf("replica b within the TTL: %+v, want its answer from Redis", s)
	}
	if n := reg.PackumentRequests("pkg"); n != 1 {
		t.Errorf("%d packument requests within the TTL, want 1", n)
	}

	// Past both TTLs (this cache's, then the packument cache's), the move
	// is seen.
	clk.Add(packumentTTL + time.Second)
	resolveAll(ra, latest, "2.0.0")
	resolveAll(rb, latest, "2.0.0")

	// An exact version is immutable: it never goes back to the resolver.
	loads := a.Stats().Loads
	clk.Add(1000 * time.Hour)
	resolveAll(ra, exact, "2.0.0")
	if s := a.Stats(); s.Loads != loads {
		t.Errorf("an exact version was resolved again after 1000h: loads %d → %d", loads, s.Loads)
	}
}

func TestResolveErrorsAreNotCached(t *testing.T) {
	ctx := context.Background()
	reg := fakeregistry.New(t)
	reg.Publish("pkg", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "1"}))
	st := testStore(t, nil)
	clk := newClock()
	opt := DefaultOptions()
	opt.Now = clk.Now
	c := New(openRedis(t, redistest.Prefix(t), ""), opt)
	r := c.Resolver(registryResolver(t, reg, st, clk, time.Minute))
	reg.Fail("pkg", http.StatusServiceUnavailable, "")
	latest, _ := npmspec.ParseSpec("")
	var ue *unavailable.Error
	if _, err := r.Resolve(ctx, "pkg", latest); !errors.As(err, &ue) {
		t.Fatalf("Resolve with the registry down: %v", err)
	}
	reg.Fail("pkg", 0, "")
	if got, err := r.Resolve(ctx, "pkg", latest); err != nil || got != "1.0.0" {
		t.Fatalf("Resolve once the registry is back = %q, %v", got, err)
	}
}

func TestRedisDownReadsGoOnFromTheStoreAndCachingResumes(t *testing.T) {
	ctx := context.Background()
	body := []byte("body\n")
	st := testStore(t, map[string][]byte{"a.js": body})
	p, err := faultproxy.New(redistest.Addr(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	breakerClock := newClock()
	opt := DefaultOptions()
	opt.LocalBytes = 0 // every read reaches for Redis
	ro := redisconn.DefaultOptions()
	ro.URL, ro.Prefix, ro.Now = "redis://"+p.Addr()+"/0", redistest.Prefix(t), breakerClock.Now
	rc, err := redisconn.Open(ro)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	c := New(rc, opt)
	r := c.Reader(st)
	read := func() {
		t.Helper()
		if got, err := r.Blob(ctx, store.HashOf(body)); err != nil || !bytes.Equal(got, body) {
			t.Fatalf("Blob = %q, %v", got, err)
		}
	}
	read()
	read()
	if s := c.Stats(); s.Redis.Hits != 1 {
		t.Fatalf("before the fault: %+v, want a Redis hit", s)
	}
	for _, fault := range []struct {
		name  string
		apply func() error
	}{
		{"killed", func() error { p.Kill(); return nil }},
		{"blackholed", p.Blackhole},
	} {
		t.Run(fault.name, func(t *testing.T) {
			if err := fault.apply(); err != nil {
				t.Fatal(err)
			}
			before := c.Stats()
			for range 20 {
				read()
			}
			s := c.Stats()
			if s.Loads-before.Loads != 20 || !s.Breaker.Open || s.Redis.Errors-before.Redis.Errors != 20 {
				t.Errorf("with Redis %s: %+v, want 20 store reads, 20 Redis errors, breaker open", fault.name, s)
			}
			// Twenty reads, but only the first reached the network: the
			// breaker skipped Redis for the other nineteen.
			if n := s.Breaker.Failures - before.Breaker.Failures; n != 1 {
				t.Errorf("%d commands failed against a %s Redis, want 1 (then the breaker skips it)", n, fault.name)
			}
			if err := p.Resume(); err != nil {
				t.Fatal(err)
			}
			// Past the cooldown one probe goes through, succeeds, and
			// caching resumes: Redis hits move again.
			breakerClock.Add(ro.Cooldown)
			hits := c.Stats().Redis.Hits
			read()
			read()
			if s := c.Stats(); s.Breaker.Open || s.Redis.Hits <= hits {
				t.Errorf("after Resume and the cooldown: %+v, want the breaker closed and Redis hits moving", s)
			}
		})
	}
}
