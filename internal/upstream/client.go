package upstream

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/pkgscope/pkgscope/internal/lru"
	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/unavailable"
	"golang.org/x/sync/singleflight"
)

// Config holds every limit of the registry client. A zero field takes its
// value from DefaultConfig.
type Config struct {
	// PackumentTTL is how long a whole packument (and so its dist-tags) is
	// served from memory. Versions themselves are immutable and cached
	// without expiry (see MaxCachedVersions).
	PackumentTTL time.Duration
	// MinRefetchInterval is how often a packument is fetched again, before
	// its TTL, because it lacks a version a caller asked for by exact
	// version (see PackumentListing). Default 10 s.
	MinRefetchInterval time.Duration
	// RequestTimeout bounds one packument or version-manifest request,
	// body included.
	RequestTimeout time.Duration
	// TarballTimeout bounds one whole tarball download, from the request
	// to the Download's Close. The ingest reads the body as it arrives, so
	// this bounds its pace too. 4 minutes leaves a minute of the mirror's
	// 5-minute fill-timeout for the packument and the commit (a 256 MiB
	// tarball at 2 MB/s takes about 2).
	TarballTimeout time.Duration
	// MaxPackumentBytes caps a packument body (and a version manifest's),
	// after any transport decompression. Abbreviated packuments of packages that publish
	// nightlies are large: typescript's measured 10 MB (3478 versions),
	// @types/node's 9 MB; 64 MiB leaves room for six times that.
	MaxPackumentBytes int64
	// MaxTarballBytes caps a compressed tarball.
	MaxTarballBytes int64
	// MaxPackumentTimesBytes caps how much of a full packument Times reads
	// to find its "time" object (which follows "versions"); past it the
	// dates are reported TooLarge. Full packuments measured (npm view
	// through npm's configured registry, 2026-12-06): lodash 0.13 MB,
	// express 0.56 MB, zod 3.3 MB, react 4.1 MB, @types/node 9.4 MB,
	// typescript 10.5 MB, next 21 MB ("time" at byte 20.86 M, after
	// "versions"). 16 MiB covers all but the largest few, like next,
	// whose page then says its dates are left out.
	MaxPackumentTimesBytes int64
	// MaxCachedTimes bounds the cache of Times' answers, counted as
	// versions (one entry costs about 60 bytes), least recently used
	// dropped: the default holds about 12 MB.
	MaxCachedTimes int
	// AllowedTarballHosts are hosts, besides the package's registry, that
	// dist.tarball may point at: "host" (the scheme's default port),
	// "host:port", or a URL whose host is taken.
	AllowedTarballHosts []string
	// UserAgent is sent with every request.
	UserAgent string
	// MaxCachedPackumentBytes bounds the packument cache by the summed
	// size of the bodies the cached packuments were decoded from (least
	// recently used are dropped). The decoded form keeps less: measured
	// 4.8 MB of heap for typescript's 10 MB body (3478 versions), 1.9 MB
	// for react's 4 MB (2963 versions), so the heap cost is at most about
	// half this figure.
	MaxCachedPackumentBytes int64
	// MaxCachedVersions bounds the cache of individual versions that
	// CachedVersion answers from (least recently used are dropped). One
	// entry (tarball URL, integrity, shasum) measured about 510 bytes, so
	// the default costs about 50 MB when full.
	MaxCachedVersions int
	// BreakerFailures is how many consecutive failures of one registry
	// host (no answer in time, a refused or cut connection, a 429; not a
	// 5xx, which answers at once and is often one package's) open its
	// circuit breaker: for BreakerCooldown every request to that host fails at
	// once with an *unavailable.Error (ErrCircuitOpen, RetryAfter the time
	// left) instead of waiting on RequestTimeout or TarballTimeout; then
	// one probe request goes through, and its success closes the breaker.
	// 5 lets a few unlucky requests through without tripping; a host
	// that is really down costs 5 timeouts, then nothing. Negative turns
	// the breaker off.
	BreakerFailures int
	// BreakerCooldown is how long an open breaker refuses requests. 30s
	// is the Retry-After callers get for an outage anyway.
	BreakerCooldown time.Duration
	// Clock tells the time for cache expiry, Retry-After dates and breaker
	// cooldowns; tests inject a fake one.
	Clock func() time.Time
}

// DefaultConfig returns the defaults, the one place they are written.
func DefaultConfig() Config {
	return Config{
		PackumentTTL:            5 * time.Minute,
		MinRefetchInterval:      10 * time.Second,
		RequestTimeout:          30 * time.Second,
		TarballTimeout:          4 * time.Minute,
		MaxPackumentBytes:       64 << 20,
		MaxTarballBytes:         256 << 20,
		MaxPackumentTimesBytes:  16 << 20,
		MaxCachedTimes:          200_000,
		UserAgent:               "pkgscope",
		MaxCachedPackumentBytes: 256 << 20,
		MaxCachedVersions:       100_000,
		BreakerFailures:         5,
		BreakerCooldown:         30 * time.Second,
		Clock:                   time.Now,
	}
}

// withDefaults fills zero fields from DefaultConfig (a negative
// BreakerFailures stays: it turns the breaker off).
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	c.PackumentTTL = cmp.Or(c.PackumentTTL, d.PackumentTTL)
	c.MinRefetchInterval = cmp.Or(c.MinRefetchInterval, d.MinRefetchInterval)
	c.RequestTimeout = cmp.Or(c.RequestTimeout, d.RequestTimeout)
	c.TarballTimeout = cmp.Or(c.TarballTimeout, d.TarballTimeout)
	c.MaxPackumentBytes = cmp.Or(c.MaxPackumentBytes, d.MaxPackumentBytes)
	c.MaxTarballBytes = cmp.Or(c.MaxTarballBytes, d.MaxTarballBytes)
	c.MaxPackumentTimesBytes = cmp.Or(c.MaxPackumentTimesBytes, d.MaxPackumentTimesBytes)
	c.MaxCachedTimes = cmp.Or(c.MaxCachedTimes, d.MaxCachedTimes)
	c.UserAgent = cmp.Or(c.UserAgent, d.UserAgent)
	c.MaxCachedPackumentBytes = cmp.Or(c.MaxCachedPackumentBytes, d.MaxCachedPackumentBytes)
	c.MaxCachedVersions = cmp.Or(c.MaxCachedVersions, d.MaxCachedVersions)
	c.BreakerFailures = cmp.Or(c.BreakerFailures, d.BreakerFailures)
	c.BreakerCooldown = cmp.Or(c.BreakerCooldown, d.BreakerCooldown)
	if c.Clock == nil {
		c.Clock = d.Clock
	}
	return c
}

// Client fetches packuments and tarballs from the registries npm is
// configured with. It is safe for concurrent use.
type Client struct {
	npm   *npmrc.Config
	cfg   Config
	hc    *http.Client
	hosts hostSet            // AllowedTarballHosts, canonical
	group singleflight.Group // packuments, by name
	// manifests are Version's requests, by "name@version".
	manifests singleflight.Group
	// breakers stop requests to a host that keeps failing (breaker.go).
	breakers *breakers

	// dropped counts what sanitize removed from packuments.
	dropped dropCounter

	packuments *lru.Cache[string, cachedPackument]
	// times are Times' answers by name, fetched once per name at a time.
	times      *lru.Cache[string, cachedTimes]
	timesGroup singleflight.Group
	versions   *lru.Cache[versionKey, PackumentVersion]

	// onJoin, when set by tests, runs after a caller has joined the
	// in-flight fetch of name.
	onJoin func(name string)
}

type cachedPackument struct {
	p       *Packument
	fetched time.Time
}

type versionKey struct{ name, version string }

// New returns a client for the registries in npm. hc may be nil for a
// default client; it is copied, not modified, and its redirects are
// limited to the same hosts a tarball may come from.
func New(npm *npmrc.Config, cfg Config, hc *http.Client) *Client {
	cfg = cfg.withDefaults()
	c := &Client{
		npm:        npm,
		cfg:        cfg,
		hosts:      newHostSet(cfg.AllowedTarballHosts),
		packuments: lru.New[string, cachedPackument](cfg.MaxCachedPackumentBytes, lru.Options{}),
		versions:   lru.New[versionKey, PackumentVersion](int64(cfg.MaxCachedVersions), lru.Options{}),
		times:      lru.New[string, cachedTimes](int64(cfg.MaxCachedTimes), lru.Options{}),
		breakers:   newBreakers(cfg.BreakerFailures, cfg.BreakerCooldown, cfg.Clock),
	}
	if hc == nil {
		hc = &http.Client{}
	}
	copied := *hc
	copied.CheckRedirect = c.checkRedirect(hc.CheckRedirect)
	c.hc = &copied
	return c
}

// Packument returns the abbreviated packument of name, from memory when
// it was fetched less than PackumentTTL ago. The result is shared: callers
// must not modify it.
//
// Errors: ErrInvalidName for a name npm cannot have; ErrNotFound (wrapped)
// only when the registry answers 404; ErrTooLarge over MaxPackumentBytes;
// the caller's ctx.Err() (wrapped) when ctx ends first; otherwise an
// *unavailable.Error (wrapping ErrCircuitOpen, without a request, while
// the registry host's breaker is open). Failures are never cached.
//
// Concurrent calls for one name share one request, which runs detached
// from any caller's cancellation (with RequestTimeout), so one caller
// giving up does not fail the others.
func (c *Client) Packument(ctx context.Context, name string) (*Packument, error) {
	return c.packument(ctx, name, c.cfg.PackumentTTL)
}

// PackumentListing is Packument for a caller that wants an exact version:
// when the cached packument does not list version (published since it was
// cached), it is fetched again, at most once per MinRefetchInterval, so a
// new version is found at once rather than after PackumentTTL. The
// version may still be missing from the answer: then it does not exist.
func (c *Client) PackumentListing(ctx context.Context, name, version string) (*Packument, error) {
	p, err := c.packument(ctx, name, c.cfg.PackumentTTL)
	if err != nil {
		return nil, err
	}
	if _, ok := p.Versions[version]; ok {
		return p, nil
	}
	return c.packument(ctx, name, c.cfg.MinRefetchInterval)
}

// packument returns name's packument from memory when it was fetched less
// than maxAge ago, else from the registry.
func (c *Client) packument(ctx context.Context, name string, maxAge time.Duration) (*Packument, error) {
	escaped, err := escapeName(name)
	if err != nil {
		return nil, err
	}
	if p := c.fresh(name, maxAge); p != nil {
		return p, nil
	}
	detached := context.WithoutCancel(ctx)
	ch := c.group.DoChan(name, func() (any, error) {
		// A caller that just missed the previous flight finds its result
		// here instead of asking again.
		if p := c.fresh(name, maxAge); p != nil {
			return p, nil
		}
		return c.fetchPackument(detached, name, escaped)
	})
	if c.onJoin != nil {
		c.onJoin(name)
	}
	return await[*Packument](ctx, ch, "packument "+name)
}

// await returns a shared flight's result, or ctx's error (wrapped with
// what) when the caller stops waiting first; the flight goes on.
func await[T any](ctx context.Context, ch <-chan singleflight.Result, what string) (T, error) {
	select {
	case res := <-ch:
		if res.Err != nil {
			var zero T
			return zero, res.Err
		}
		return res.Val.(T), nil
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("%s: %w", what, ctx.Err())
	}
}

// CachedVersion returns a version of name seen in any packument fetched
// earlier. Versions are immutable once published, so the entry never
// expires; it lets a caller that wants an exact version skip the
// packument request.
func (c *Client) CachedVersion(name, version string) (PackumentVersion, bool) {
	return c.versions.Get(versionKey{name, version})
}

// fresh returns the cached packument of name if it is younger than maxAge.
func (c *Client) fresh(name string, maxAge time.Duration) *Packument {
	e, ok := c.packuments.Get(name)
	if !ok || c.cfg.Clock().Sub(e.fetched) >= maxAge {
		return nil
	}
	return e.p
}

// packumentAccept prefers the abbreviated document, which carries only
// what installs need; a registry without it answers the full one, whose
// extra fields are ignored.
const packumentAccept = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8"

func (c *Client) fetchPackument(ctx context.Context, name, escaped string) (p *Packument, err error) {
	what := "packument " + name
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	resp, done, err := c.getDocument(ctx, name, escaped, packumentAccept, what)
	if err != nil {
		return nil, err
	}
	defer func() { done(err) }()
	defer drainClose(resp.Body)
	if resp.ContentLength > c.cfg.MaxPackumentBytes {
		return nil, fmt.Errorf("%s: %d bytes (Config.MaxPackumentBytes %d): %w", what, resp.ContentLength, c.cfg.MaxPackumentBytes, ErrTooLarge)
	}
	p = new(Packument)
	body := &limitedReader{r: resp.Body, n: c.cfg.MaxPackumentBytes}
	if err := json.NewDecoder(body).Decode(p); err != nil {
		if body.exceeded {
			return nil, fmt.Errorf("%s: over %d bytes (Config.MaxPackumentBytes): %w", what, c.cfg.MaxPackumentBytes, ErrTooLarge)
		}
		return nil, transportError(context.Background(), what+": decoding", err)
	}
	if p.Name == "" {
		p.Name = name
	}
	if p.Name != name {
		return nil, &unavailable.Error{Source: unavailable.Registry, Status: resp.StatusCode, RetryAfter: defaultRetryAfter,
			Err: fmt.Errorf("%s: registry answered the packument of %q", what, truncate(p.Name))}
	}
	c.dropped.sanitize(p)
	for v, pv := range p.Versions {
		if pv.Version != v {
			pv.Version = v
			p.Versions[v] = pv
		}
	}

	c.packuments.Add(name, cachedPackument{p: p, fetched: c.cfg.Clock()}, body.read)
	for v, pv := range p.Versions {
		c.versions.Add(versionKey{name, v}, pv, 1)
	}
	return p, nil
}

// getDocument asks name's registry for its document at escaped (with
// npm's auth for it) through the host's breaker. On success the caller
// closes resp.Body with drainClose and reports the outcome of reading it
// to done; on failure the breaker has been told already.
func (c *Client) getDocument(ctx context.Context, name, escaped, accept, what string) (resp *http.Response, done func(error), err error) {
	registry := c.npm.RegistryFor(name)
	u := registry + escaped
	req, err := http.NewRequestWithContext(withOrigin(ctx, registry), http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, &unavailable.Error{Source: unavailable.Registry, RetryAfter: defaultRetryAfter, Err: fmt.Errorf("%s: %w", what, err)}
	}
	done, err = c.breakers.allow(breakerKey(req.URL), what)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	if auth := c.npm.AuthHeader(u); auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err = c.send(context.Background(), req, what)
	if err != nil {
		done(err)
		return nil, nil, err
	}
	return resp, done, nil
}

// limitedReader reads at most n bytes and then fails with ErrTooLarge, so
// a streaming decoder stops at the limit instead of buffering past it.
type limitedReader struct {
	r        io.Reader
	n        int64
	read     int64
	exceeded bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		// Probe one byte: a body of exactly n bytes is within the limit.
		var one [1]byte
		k, err := l.r.Read(one[:])
		if k > 0 {
			l.exceeded = true
			return 0, ErrTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	l.read += int64(k)
	return k, err
}

// drainClose reads a little of what is left so the connection can be
// reused, then closes. 4 KiB covers error bodies; more is not worth
// reading just to save a connection.
func drainClose(body io.ReadCloser) {
	io.CopyN(io.Discard, body, 4<<10)
	body.Close()
}
