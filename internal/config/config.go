// Package config is the mirror's one typed configuration: defaults in one
// place, each setting overridable by a flag and an environment variable,
// validated at load with messages that name the setting to fix.
package config

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config is everything the mirror needs to start.
type Config struct {
	// Addr is the listen address of the HTTP API.
	Addr string
	// DataDir holds the embedded store and local caches.
	DataDir string
	// DatabaseURL selects the Postgres store; empty means the embedded one.
	DatabaseURL string
	// ProjectDir is where npm's project .npmrc is looked for.
	ProjectDir string

	// MaxBodyBytes caps a request body; MaxWarmBodyBytes the body of
	// POST /v1/warm, which carries a lockfile (a large monorepo's runs to
	// tens of MB).
	MaxBodyBytes, MaxWarmBodyBytes int64
	// AllowedHosts are the Host names (and browser origins) a mirror
	// without tokens answers besides the loopback names; "*" allows any.
	AllowedHosts []string
	// WarmInProcess runs warm jobs in the mirror process. It is always so
	// with the embedded store (there is no separate worker on a laptop);
	// with Postgres, `indexer worker` processes run them unless this is set.
	WarmInProcess bool
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout bound
	// the HTTP server; WriteTimeout must outlast FillTimeout, since a cold
	// request waits for its ingest.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// ShutdownTimeout is how long in-flight requests get on SIGTERM.
	ShutdownTimeout time.Duration
	// FillTimeout bounds one miss: packument, tarball, ingest, commit.
	FillTimeout time.Duration
	// FailedRetryAfter is how long a version whose tarball failed for good
	// (integrity, limits, corrupt archive) is answered with that failure
	// instead of being downloaded again.
	FailedRetryAfter time.Duration

	// PackumentTTL is how long resolved dist-tags and version lists are
	// cached; exact versions are immutable and cached for good.
	PackumentTTL time.Duration
	// BreakerFailures consecutive failures (timeouts, refused or cut
	// connections, 429) to one registry host open its circuit breaker for
	// BreakerCooldown: requests fail at once with Retry-After, then one
	// probe goes through. Negative turns the breaker off.
	BreakerFailures int
	BreakerCooldown time.Duration
	// PackumentRefetch is how often a cached packument is fetched again
	// early because it lacks an exact version asked for (just published).
	PackumentRefetch time.Duration
	// UpstreamTimeout bounds one packument request; TarballTimeout one
	// tarball download.
	UpstreamTimeout, TarballTimeout time.Duration
	// MaxTarballBytes caps a compressed tarball download.
	MaxTarballBytes int64
	// AllowedTarballHosts are hosts besides the registry's that
	// dist.tarball may point at (comma-separated in the environment).
	AllowedTarballHosts []string

	// Ingest caps: total unpacked bytes, regular files, tar entries, one
	// file's size.
	MaxUnpackedBytes int64
	MaxFiles         int
	MaxEntries       int
	MaxFileBytes     int64

	// Read: DefaultReadLimit lines when none is asked, at most
	// MaxReadLimit; lines wider than MaxLineWidth bytes are cut with a
	// marker; one read returns at most MaxReadBytes of content.
	DefaultReadLimit, MaxReadLimit, MaxLineWidth int
	MaxReadBytes                                 int

	// Glob: patterns per request, bytes per pattern, brace groups per
	// pattern and alternatives they may expand to.
	MaxGlobPatterns, MaxGlobPatternBytes, MaxGlobBraceGroups, MaxGlobAlternatives int

	// Grep: IndexDir caches indexes on this node (default DataDir/indexes);
	// MaxOpenIndexes stay mapped at once. A grep's pattern is at most
	// MaxGrepPatternBytes; it returns DefaultMaxMatches lines unless asked
	// for up to MaxMatches, at most MaxContextLines of context, at most
	// MaxGrepOutputBytes of text, lines cut to a GrepLineWindow-byte window
	// around the match, and stops after GrepTimeout with what it found.
	IndexDir       string
	MaxOpenIndexes int
	MaxIndexBuilds int // index builds at once (each holds a version's postings)
	// MaxIndexBytes caps one version's search index file (its distinct
	// text plus about 0.3x for postings): a version over it still lists
	// and reads, and grep says why. IndexCacheBytes bounds the local index
	// cache on disk (least recently used files are removed; 0: no bound).
	MaxIndexBytes, IndexCacheBytes                      int64
	MaxGrepPatternBytes, DefaultMaxMatches, MaxMatches  int
	MaxContextLines, MaxGrepOutputBytes, GrepLineWindow int
	GrepTimeout                                         time.Duration

	// JSDelivrFallback answers list, glob, read and grep from jsDelivr
	// when the registry cannot serve a version (internal/jsdelivr). Off
	// by default: it sends package names to a public service, which an
	// org mirror of private packages must opt into. Scopes with a registry
	// of their own in .npmrc are never sent.
	JSDelivrFallback bool
	// JSDelivrDataURL and JSDelivrCDNURL are the bases of jsDelivr's Data
	// API and CDN; either empty turns the fallback off.
	JSDelivrDataURL, JSDelivrCDNURL string
	// JSDelivrTimeout bounds one jsDelivr request; JSDelivrMaxListingBytes
	// caps a Data API answer and JSDelivrMaxFileBytes one CDN file.
	JSDelivrTimeout                               time.Duration
	JSDelivrMaxListingBytes, JSDelivrMaxFileBytes int64
	// A grep answered from jsDelivr fetches at most JSDelivrGrepMaxFiles
	// files and JSDelivrGrepMaxBytes bytes (smallest first) within
	// JSDelivrGrepTimeout, and says it is incomplete when that was not
	// the whole package.
	JSDelivrGrepMaxFiles int
	JSDelivrGrepMaxBytes int64
	JSDelivrGrepTimeout  time.Duration
	// ColdBudget is how long a request waits for a cold fill before
	// jsDelivr answers it (the fill goes on, and the next request is
	// served from the store); 0 waits for the fill. Needs the fallback.
	ColdBudget time.Duration

	// RedisURL enables Redis: a cache layer shared by replicas, the
	// cross-replica fill lock and rate limits. Empty runs without it.
	// Every use degrades: with Redis down the mirror serves from the store.
	RedisURL string
	// RedisPrefix starts every key, so deployments sharing a server do
	// not collide.
	RedisPrefix string
	// RedisDialTimeout bounds one connection attempt and RedisTimeout one
	// command's write and read: a down or blackholed Redis costs a request
	// at most their sum (plus one more read) before the breaker opens.
	RedisDialTimeout, RedisTimeout time.Duration
	// RedisCooldown is how long Redis is skipped after a failure before
	// one request probes it again.
	RedisCooldown time.Duration
	// RedisLockTTL is how long a fill lock lives unless released; it must
	// outlast fill-timeout. 0 means fill-timeout plus 30s (see LockTTL).
	RedisLockTTL time.Duration

	// CacheLocalBytes is the in-process cache's budget (0 disables it);
	// bodies over CacheMaxBodyBytes and file lists over CacheMaxListBytes
	// are cached in neither layer.
	CacheLocalBytes, CacheMaxBodyBytes, CacheMaxListBytes int64
	// CacheResolveTTL is how long a range or dist-tag resolution is
	// reused (0: not cached); a moved dist-tag is seen after at most this
	// plus packument-ttl. CacheRedisTTL is how long immutable entries
	// (file lists, bodies) live in Redis.
	CacheResolveTTL, CacheRedisTTL time.Duration

	// RateLimitPerMinute is the sustained requests per minute one caller
	// (bearer token, else client IP) may send, across replicas; 0 turns
	// limits off. RateLimitBurst is how many it may send at once (0: the
	// per-minute figure). Limits need RedisURL.
	RateLimitPerMinute, RateLimitBurst int

	// TokensFile names a file of bearer tokens, one entry per line
	// (internal/auth: TOKEN, TOKEN:@scope,..., sha256:HEX[:@scope,...]);
	// Tokens holds more, comma-separated, from PKGSCOPE_TOKENS only (a
	// flag would show them in ps). With either set, every route but the
	// health checks needs "Authorization: Bearer TOKEN"; with neither the
	// API is open, fine on a laptop, not for an org-wide service.
	TokensFile string
	Tokens     Secret
	// MetricsAddr, when set, serves /metrics on a listener of its own,
	// without tokens (bind it to a private network), and not on Addr;
	// empty serves /metrics on Addr behind the tokens. PprofAddr, when
	// set, serves net/http/pprof on a listener of its own; empty (the
	// default) turns it off. The two may be the same address.
	MetricsAddr, PprofAddr string

	// WebDocs*Version pin the four data packages of explore_web_docs
	// (internal/webdocs), read through this mirror: exact versions keep
	// answers stable and serve air-gapped once warm.
	WebDocsBCDVersion, WebDocsInventoryVersion, WebDocsIDLVersion, WebDocsFeaturesVersion string
	// MDNBaseURL is MDN's site, whose JSON get_doc reads for the article
	// text; empty (or "off") answers from the packages alone. MDNTimeout
	// bounds one MDN request; MDNCacheBytes is the in-memory budget of
	// MDN pages kept.
	MDNBaseURL    string
	MDNTimeout    time.Duration
	MDNCacheBytes int64
	// A web-docs query, path or key is at most WebDocsMaxQueryBytes; a
	// search returns at most WebDocsMaxResults documents; get_doc's content
	// is cut at WebDocsMaxDocBytes.
	WebDocsMaxQueryBytes, WebDocsMaxResults, WebDocsMaxDocBytes int
}

// Secret is a setting never to be printed: fmt and slog show it as
// [redacted].
type Secret string

// String hides the secret.
func (Secret) String() string { return "[redacted]" }

// GoString hides the secret from %#v.
func (Secret) GoString() string { return "[redacted]" }

// LogValue hides the secret from slog.
func (Secret) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// MarshalJSON hides the secret from encoding/json, which slog's JSON
// handler uses for a Config logged whole.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// Default returns the defaults. Each is explained where the setting is
// registered in Load.
func Default() Config {
	return Config{
		Addr:                "127.0.0.1:7878",
		DataDir:             defaultDataDir(),
		MaxBodyBytes:        1 << 20,
		MaxWarmBodyBytes:    64 << 20,
		ReadHeaderTimeout:   10 * time.Second,
		ReadTimeout:         30 * time.Second,
		WriteTimeout:        6 * time.Minute,
		IdleTimeout:         2 * time.Minute,
		ShutdownTimeout:     30 * time.Second,
		FillTimeout:         5 * time.Minute,
		FailedRetryAfter:    5 * time.Minute,
		PackumentTTL:        5 * time.Minute,
		PackumentRefetch:    10 * time.Second,
		BreakerFailures:     5,
		BreakerCooldown:     30 * time.Second,
		UpstreamTimeout:     30 * time.Second,
		TarballTimeout:      4 * time.Minute,
		MaxTarballBytes:     256 << 20,
		MaxUnpackedBytes:    1 << 30,
		MaxFiles:            100_000,
		MaxEntries:          200_000,
		MaxFileBytes:        256 << 20,
		DefaultReadLimit:    2000,
		MaxReadLimit:        20_000,
		MaxLineWidth:        2000,
		MaxReadBytes:        512 << 10,
		MaxGlobPatterns:     64,
		MaxGlobPatternBytes: 512,
		MaxGlobBraceGroups:  8,
		MaxGlobAlternatives: 256,
		MaxOpenIndexes:      64,
		MaxIndexBuilds:      2,
		// next@16.4.6, among npm's largest, indexes to 232 MB; 1 GiB keeps
		// room for 4x that and bounds the disk one version can take.
		MaxIndexBytes:       1 << 30,
		IndexCacheBytes:     10 << 30,
		MaxGrepPatternBytes: 4096,
		DefaultMaxMatches:   100,
		MaxMatches:          100_000,
		MaxContextLines:     20,
		MaxGrepOutputBytes:  8 << 20,
		GrepLineWindow:      512,
		GrepTimeout:         10 * time.Second,
		// jsDelivr's public hosts: a CDN over the public registry, not a
		// registry. A first listing of a large version makes jsDelivr
		// fetch the tarball itself, hence 20s; no file it serves exceeds
		// its 150 MB package limit. A grep's 64 MiB is the text of most
		// packages whole (the median npm version unpacks to well under
		// 1 MB) and costs about as much memory again for its index.
		JSDelivrDataURL:         "https://data.jsdelivr.com",
		JSDelivrCDNURL:          "https://cdn.jsdelivr.net",
		JSDelivrTimeout:         20 * time.Second,
		JSDelivrMaxListingBytes: 32 << 20,
		JSDelivrMaxFileBytes:    64 << 20,
		JSDelivrGrepMaxFiles:    1000,
		JSDelivrGrepMaxBytes:    64 << 20,
		JSDelivrGrepTimeout:     20 * time.Second,
		// An agent asking for a cold large package gets an answer in 3s
		// instead of the minute an ingest of a 100 MB package can take.
		ColdBudget: 3 * time.Second,
		// Redis is an optimisation: a warm read answers from the store in
		// about a millisecond, so waiting longer than 200ms on Redis is a
		// loss, and 5s of not trying keeps an outage from costing every
		// request that wait.
		RedisPrefix:      "pkgscope:",
		RedisDialTimeout: 200 * time.Millisecond,
		RedisTimeout:     200 * time.Millisecond,
		RedisCooldown:    5 * time.Second,
		// 128 MiB holds the file lists and small bodies agents read most
		// (a typical package's list is 5-50 KiB); bodies over 256 KiB are
		// mostly bundles and maps, read rarely and in windows.
		CacheLocalBytes:   128 << 20,
		CacheMaxBodyBytes: 256 << 10,
		CacheMaxListBytes: 4 << 20,
		CacheResolveTTL:   time.Minute,
		CacheRedisTTL:     24 * time.Hour,
		// The versions webdocs.DefaultVersions names (a test there checks
		// they agree); MDN answers a page in ~200 ms, 10s is for a slow
		// day; 64 MiB holds ~2,000 rendered pages; see webdocs.Limits for
		// the caps.
		WebDocsBCDVersion:       "8.1.9",
		WebDocsInventoryVersion: "0.2.20260206",
		WebDocsIDLVersion:       "3.85.0",
		WebDocsFeaturesVersion:  "3.40.0",
		MDNBaseURL:              "https://developer.mozilla.org",
		MDNTimeout:              10 * time.Second,
		MDNCacheBytes:           64 << 20,
		WebDocsMaxQueryBytes:    512,
		WebDocsMaxResults:       50,
		WebDocsMaxDocBytes:      96 << 10,
	}
}

func defaultDataDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "pkgscope")
	}
	return ".pkgscope"
}

// Load builds a Config from defaults, then the environment, then flags in
// args (flags win). getenv is os.Getenv outside tests.
func Load(name string, args []string, getenv func(string) string) (Config, error) {
	c := Default()
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	b := NewBinder(fs, getenv)

	b.Str(&c.Addr, "addr", "PKGSCOPE_ADDR", "listen address of the HTTP API")
	b.Str(&c.DataDir, "data-dir", "PKGSCOPE_DATA_DIR", "directory of the embedded store and local caches")
	b.Secret(&c.DatabaseURL, "database-url", "PKGSCOPE_DATABASE_URL", "Postgres URL (also DATABASE_URL); empty means the embedded store")
	if c.DatabaseURL == "" {
		c.DatabaseURL = getenv("DATABASE_URL")
	}
	b.Str(&c.ProjectDir, "project-dir", "PKGSCOPE_PROJECT_DIR", "where the project .npmrc is read from (default: the working directory)")

	b.Bytes(&c.MaxBodyBytes, "max-body-bytes", "PKGSCOPE_MAX_BODY_BYTES", "largest request body")
	b.Bytes(&c.MaxWarmBodyBytes, "max-warm-body-bytes", "PKGSCOPE_MAX_WARM_BODY_BYTES", "largest POST /v1/warm body (a lockfile)")
	b.List(&c.AllowedHosts, "allowed-hosts", "PKGSCOPE_ALLOWED_HOSTS", "comma-separated host names a mirror without tokens answers besides localhost (\"*\": any)")
	b.Boolean(&c.WarmInProcess, "warm-in-process", "PKGSCOPE_WARM_IN_PROCESS", "run warm jobs in this process (always so with the embedded store)")
	b.Dur(&c.ReadHeaderTimeout, "read-header-timeout", "PKGSCOPE_READ_HEADER_TIMEOUT", "time to read request headers")
	b.Dur(&c.ReadTimeout, "read-timeout", "PKGSCOPE_READ_TIMEOUT", "time to read a whole request")
	b.Dur(&c.WriteTimeout, "write-timeout", "PKGSCOPE_WRITE_TIMEOUT", "time to write a response, including a cold fill")
	b.Dur(&c.IdleTimeout, "idle-timeout", "PKGSCOPE_IDLE_TIMEOUT", "keep-alive idle time")
	b.Dur(&c.ShutdownTimeout, "shutdown-timeout", "PKGSCOPE_SHUTDOWN_TIMEOUT", "grace period for in-flight requests on shutdown")
	b.Dur(&c.FailedRetryAfter, "failed-retry-after", "PKGSCOPE_FAILED_RETRY_AFTER", "how long a version whose tarball failed its checks is answered from memory before trying again")
	b.Dur(&c.FillTimeout, "fill-timeout", "PKGSCOPE_FILL_TIMEOUT", "time for one miss: fetch, verify, ingest, commit")

	b.Dur(&c.PackumentTTL, "packument-ttl", "PKGSCOPE_PACKUMENT_TTL", "how long dist-tags and version lists are cached")
	b.Int(&c.BreakerFailures, "breaker-failures", "PKGSCOPE_BREAKER_FAILURES", "consecutive failures to a registry host that open its circuit breaker (negative: off)")
	b.Dur(&c.BreakerCooldown, "breaker-cooldown", "PKGSCOPE_BREAKER_COOLDOWN", "how long an open circuit breaker refuses requests before one probe")
	b.Dur(&c.PackumentRefetch, "packument-refetch", "PKGSCOPE_PACKUMENT_REFETCH", "how often a cached packument lacking a requested exact version is fetched again early")
	b.Dur(&c.UpstreamTimeout, "upstream-timeout", "PKGSCOPE_UPSTREAM_TIMEOUT", "time for one packument request")
	b.Dur(&c.TarballTimeout, "tarball-timeout", "PKGSCOPE_TARBALL_TIMEOUT", "time for one tarball download")
	b.Bytes(&c.MaxTarballBytes, "max-tarball-bytes", "PKGSCOPE_MAX_TARBALL_BYTES", "largest compressed tarball")
	b.List(&c.AllowedTarballHosts, "allowed-tarball-hosts", "PKGSCOPE_ALLOWED_TARBALL_HOSTS", "comma-separated hosts besides the registry's that dist.tarball may name")

	b.Bytes(&c.MaxUnpackedBytes, "max-unpacked-bytes", "PKGSCOPE_MAX_UNPACKED_BYTES", "largest unpacked package")
	b.Int(&c.MaxFiles, "max-files", "PKGSCOPE_MAX_FILES", "most regular files in a package")
	b.Int(&c.MaxEntries, "max-entries", "PKGSCOPE_MAX_ENTRIES", "most tar entries in a package")
	b.Bytes(&c.MaxFileBytes, "max-file-bytes", "PKGSCOPE_MAX_FILE_BYTES", "largest single file")

	b.Int(&c.DefaultReadLimit, "default-read-limit", "PKGSCOPE_DEFAULT_READ_LIMIT", "lines a read returns when no limit is asked")
	b.Int(&c.MaxReadLimit, "max-read-limit", "PKGSCOPE_MAX_READ_LIMIT", "most lines one read may ask for")
	b.Int(&c.MaxLineWidth, "max-line-width", "PKGSCOPE_MAX_LINE_WIDTH", "bytes of a line a read shows before cutting it")
	b.Int(&c.MaxReadBytes, "max-read-bytes", "PKGSCOPE_MAX_READ_BYTES", "most content bytes one read returns")

	b.Int(&c.MaxGlobPatterns, "max-glob-patterns", "PKGSCOPE_MAX_GLOB_PATTERNS", "most glob patterns per request")
	b.Int(&c.MaxGlobPatternBytes, "max-glob-pattern-bytes", "PKGSCOPE_MAX_GLOB_PATTERN_BYTES", "longest glob pattern")
	b.Int(&c.MaxGlobBraceGroups, "max-glob-brace-groups", "PKGSCOPE_MAX_GLOB_BRACE_GROUPS", "most {…} groups in one glob")
	b.Int(&c.MaxGlobAlternatives, "max-glob-alternatives", "PKGSCOPE_MAX_GLOB_ALTERNATIVES", "most alternatives a glob's braces may expand to")

	b.Str(&c.IndexDir, "index-dir", "PKGSCOPE_INDEX_DIR", "local cache of search indexes (default: data-dir/indexes)")
	b.Int(&c.MaxIndexBuilds, "max-index-builds", "PKGSCOPE_MAX_INDEX_BUILDS", "search index builds run at once (each holds one body and the postings in memory: ~330 MiB for next@16)")
	b.Bytes(&c.MaxIndexBytes, "max-index-bytes", "PKGSCOPE_MAX_INDEX_BYTES", "largest search index of one version (over it, grep of that version is refused; list and read still work)")
	b.Bytes(&c.IndexCacheBytes, "index-cache-bytes", "PKGSCOPE_INDEX_CACHE_BYTES", "local search index cache size; least recently used indexes are removed past it (0: no bound)")
	b.Int(&c.MaxOpenIndexes, "max-open-indexes", "PKGSCOPE_MAX_OPEN_INDEXES", "search indexes kept mapped at once")
	b.Int(&c.MaxGrepPatternBytes, "max-grep-pattern-bytes", "PKGSCOPE_MAX_GREP_PATTERN_BYTES", "longest grep pattern")
	b.Int(&c.DefaultMaxMatches, "default-max-matches", "PKGSCOPE_DEFAULT_MAX_MATCHES", "matching lines a grep returns when maxMatches is not given")
	b.Int(&c.MaxMatches, "max-matches", "PKGSCOPE_MAX_MATCHES", "largest maxMatches a grep may ask for")
	b.Int(&c.MaxContextLines, "max-context-lines", "PKGSCOPE_MAX_CONTEXT_LINES", "largest contextLines a grep may ask for")
	b.Int(&c.MaxGrepOutputBytes, "max-grep-output-bytes", "PKGSCOPE_MAX_GREP_OUTPUT_BYTES", "most text bytes one grep returns")
	b.Int(&c.GrepLineWindow, "grep-line-window", "PKGSCOPE_GREP_LINE_WINDOW", "bytes of a long line shown around a match")
	b.Dur(&c.GrepTimeout, "grep-timeout", "PKGSCOPE_GREP_TIMEOUT", "time one grep may take before answering with what it found")

	b.Boolean(&c.JSDelivrFallback, "jsdelivr-fallback", "PKGSCOPE_JSDELIVR_FALLBACK", "answer from jsDelivr when the registry cannot serve a version (sends package names to jsDelivr)")
	b.Str(&c.JSDelivrDataURL, "jsdelivr-data-url", "PKGSCOPE_JSDELIVR_DATA_URL", "base URL of jsDelivr's Data API (empty: no fallback)")
	b.Str(&c.JSDelivrCDNURL, "jsdelivr-cdn-url", "PKGSCOPE_JSDELIVR_CDN_URL", "base URL of jsDelivr's CDN (empty: no fallback)")
	b.Dur(&c.JSDelivrTimeout, "jsdelivr-timeout", "PKGSCOPE_JSDELIVR_TIMEOUT", "time for one jsDelivr request")
	b.Bytes(&c.JSDelivrMaxListingBytes, "jsdelivr-max-listing-bytes", "PKGSCOPE_JSDELIVR_MAX_LISTING_BYTES", "largest jsDelivr Data API answer")
	b.Bytes(&c.JSDelivrMaxFileBytes, "jsdelivr-max-file-bytes", "PKGSCOPE_JSDELIVR_MAX_FILE_BYTES", "largest file fetched from jsDelivr's CDN")
	b.Int(&c.JSDelivrGrepMaxFiles, "jsdelivr-grep-max-files", "PKGSCOPE_JSDELIVR_GREP_MAX_FILES", "most files one grep fetches from jsDelivr's CDN")
	b.Bytes(&c.JSDelivrGrepMaxBytes, "jsdelivr-grep-max-bytes", "PKGSCOPE_JSDELIVR_GREP_MAX_BYTES", "most bytes one grep fetches from jsDelivr's CDN")
	b.Dur(&c.JSDelivrGrepTimeout, "jsdelivr-grep-timeout", "PKGSCOPE_JSDELIVR_GREP_TIMEOUT", "time one grep may spend fetching from jsDelivr's CDN")
	b.Dur(&c.ColdBudget, "cold-budget", "PKGSCOPE_COLD_BUDGET", "how long a request waits for a cold fill before jsDelivr answers it (0: wait; needs jsdelivr-fallback)")

	b.Secret(&c.RedisURL, "redis-url", "PKGSCOPE_REDIS_URL", "Redis URL (also REDIS_URL) for the shared cache, fill lock and rate limits; empty runs without Redis")
	if c.RedisURL == "" {
		c.RedisURL = getenv("REDIS_URL")
	}
	b.Str(&c.RedisPrefix, "redis-prefix", "PKGSCOPE_REDIS_PREFIX", "prefix of every Redis key")
	b.Dur(&c.RedisDialTimeout, "redis-dial-timeout", "PKGSCOPE_REDIS_DIAL_TIMEOUT", "time to connect to Redis")
	b.Dur(&c.RedisTimeout, "redis-timeout", "PKGSCOPE_REDIS_TIMEOUT", "time for one Redis command's write and read")
	b.Dur(&c.RedisCooldown, "redis-cooldown", "PKGSCOPE_REDIS_COOLDOWN", "how long Redis is skipped after a failure")
	b.Dur(&c.RedisLockTTL, "redis-lock-ttl", "PKGSCOPE_REDIS_LOCK_TTL", "lifetime of a fill lock (0: fill-timeout + 30s)")
	b.Bytes(&c.CacheLocalBytes, "cache-local-bytes", "PKGSCOPE_CACHE_LOCAL_BYTES", "budget of the in-process cache (0 disables it)")
	b.Bytes(&c.CacheMaxBodyBytes, "cache-max-body-bytes", "PKGSCOPE_CACHE_MAX_BODY_BYTES", "largest file body cached")
	b.Bytes(&c.CacheMaxListBytes, "cache-max-list-bytes", "PKGSCOPE_CACHE_MAX_LIST_BYTES", "largest file list cached")
	b.Dur(&c.CacheResolveTTL, "cache-resolve-ttl", "PKGSCOPE_CACHE_RESOLVE_TTL", "how long a range or dist-tag resolution is reused (0: not cached)")
	b.Dur(&c.CacheRedisTTL, "cache-redis-ttl", "PKGSCOPE_CACHE_REDIS_TTL", "how long immutable entries live in Redis")
	b.Int(&c.RateLimitPerMinute, "rate-limit-per-minute", "PKGSCOPE_RATE_LIMIT_PER_MINUTE", "requests per minute per caller (0: no limit; needs redis-url)")
	b.Int(&c.RateLimitBurst, "rate-limit-burst", "PKGSCOPE_RATE_LIMIT_BURST", "requests a caller may send at once (0: the per-minute figure)")

	b.Str(&c.TokensFile, "tokens-file", "PKGSCOPE_TOKENS_FILE", "file of bearer tokens required on every route but health checks, one per line: TOKEN, TOKEN:@scope,... or sha256:HEX (more in $PKGSCOPE_TOKENS, comma-separated)")
	c.Tokens = Secret(getenv("PKGSCOPE_TOKENS"))
	b.Str(&c.MetricsAddr, "metrics-addr", "PKGSCOPE_METRICS_ADDR", "serve /metrics on this address, without tokens, instead of on addr")
	b.Str(&c.PprofAddr, "pprof-addr", "PKGSCOPE_PPROF_ADDR", "serve net/http/pprof on this address (empty: off)")

	b.Str(&c.WebDocsBCDVersion, "webdocs-bcd-version", "PKGSCOPE_WEBDOCS_BCD_VERSION", "version of @mdn/browser-compat-data explore_web_docs reads")
	b.Str(&c.WebDocsInventoryVersion, "webdocs-inventory-version", "PKGSCOPE_WEBDOCS_INVENTORY_VERSION", "version of @ddbeck/mdn-content-inventory explore_web_docs reads")
	b.Str(&c.WebDocsIDLVersion, "webdocs-idl-version", "PKGSCOPE_WEBDOCS_IDL_VERSION", "version of @webref/idl explore_web_docs reads")
	b.Str(&c.WebDocsFeaturesVersion, "webdocs-features-version", "PKGSCOPE_WEBDOCS_FEATURES_VERSION", "version of web-features explore_web_docs reads")
	b.Str(&c.MDNBaseURL, "mdn-base-url", "PKGSCOPE_MDN_BASE_URL", `MDN's site, read for article text ("off": the data packages alone)`)
	b.Dur(&c.MDNTimeout, "mdn-timeout", "PKGSCOPE_MDN_TIMEOUT", "time for one MDN request")
	b.Bytes(&c.MDNCacheBytes, "mdn-cache-bytes", "PKGSCOPE_MDN_CACHE_BYTES", "memory for MDN pages kept")
	b.Int(&c.WebDocsMaxQueryBytes, "webdocs-max-query-bytes", "PKGSCOPE_WEBDOCS_MAX_QUERY_BYTES", "longest web-docs query, path or key")
	b.Int(&c.WebDocsMaxResults, "webdocs-max-results", "PKGSCOPE_WEBDOCS_MAX_RESULTS", "most documents one web-docs search returns")
	b.Int(&c.WebDocsMaxDocBytes, "webdocs-max-doc-bytes", "PKGSCOPE_WEBDOCS_MAX_DOC_BYTES", "bytes of a web doc's content shown before it is cut")

	if err := b.Err(); err != nil {
		return c, err
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if c.MDNBaseURL == "off" {
		c.MDNBaseURL = ""
	}
	return c, c.Validate()
}

// Validate checks the settings together, naming the one to fix.
func (c Config) Validate() error {
	var errs []error
	positive := func(name string, v int64) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", name, v))
		}
	}
	positive("max-body-bytes", c.MaxBodyBytes)
	positive("max-warm-body-bytes", c.MaxWarmBodyBytes)
	positive("max-tarball-bytes", c.MaxTarballBytes)
	positive("max-unpacked-bytes", c.MaxUnpackedBytes)
	positive("max-files", int64(c.MaxFiles))
	positive("max-entries", int64(c.MaxEntries))
	positive("max-file-bytes", c.MaxFileBytes)
	positive("default-read-limit", int64(c.DefaultReadLimit))
	positive("max-read-limit", int64(c.MaxReadLimit))
	positive("max-line-width", int64(c.MaxLineWidth))
	positive("max-read-bytes", int64(c.MaxReadBytes))
	positive("max-glob-patterns", int64(c.MaxGlobPatterns))
	positive("max-glob-pattern-bytes", int64(c.MaxGlobPatternBytes))
	positive("max-glob-alternatives", int64(c.MaxGlobAlternatives))
	positive("max-open-indexes", int64(c.MaxOpenIndexes))
	positive("max-index-builds", int64(c.MaxIndexBuilds))
	positive("max-index-bytes", c.MaxIndexBytes)
	if c.IndexCacheBytes < 0 {
		errs = append(errs, fmt.Errorf("index-cache-bytes must not be negative, got %d", c.IndexCacheBytes))
	}
	positive("max-grep-pattern-bytes", int64(c.MaxGrepPatternBytes))
	positive("default-max-matches", int64(c.DefaultMaxMatches))
	positive("max-grep-output-bytes", int64(c.MaxGrepOutputBytes))
	positive("grep-timeout", int64(c.GrepTimeout))
	if c.MaxMatches < c.DefaultMaxMatches {
		errs = append(errs, fmt.Errorf("max-matches (%d) is below default-max-matches (%d)", c.MaxMatches, c.DefaultMaxMatches))
	}
	if c.GrepLineWindow < 16 {
		errs = append(errs, fmt.Errorf("grep-line-window must be at least 16, got %d", c.GrepLineWindow))
	}
	if c.DefaultReadLimit > c.MaxReadLimit {
		errs = append(errs, fmt.Errorf("default-read-limit (%d) is above max-read-limit (%d)", c.DefaultReadLimit, c.MaxReadLimit))
	}
	if c.WriteTimeout <= c.FillTimeout {
		errs = append(errs, fmt.Errorf("write-timeout (%s) must be longer than fill-timeout (%s): a cold request waits for its fill", c.WriteTimeout, c.FillTimeout))
	}
	notNegative := func(name string, v int64) {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %d", name, v))
		}
	}
	notNegative("cache-local-bytes", c.CacheLocalBytes)
	notNegative("cache-max-body-bytes", c.CacheMaxBodyBytes)
	notNegative("cache-max-list-bytes", c.CacheMaxListBytes)
	notNegative("cache-resolve-ttl", int64(c.CacheResolveTTL))
	notNegative("rate-limit-per-minute", int64(c.RateLimitPerMinute))
	notNegative("rate-limit-burst", int64(c.RateLimitBurst))
	if c.RedisURL != "" {
		if !strings.HasPrefix(c.RedisURL, "redis://") && !strings.HasPrefix(c.RedisURL, "rediss://") && !strings.HasPrefix(c.RedisURL, "unix://") {
			errs = append(errs, errors.New("redis-url must start with redis://, rediss:// or unix://"))
		}
		positive("redis-dial-timeout", int64(c.RedisDialTimeout))
		positive("redis-timeout", int64(c.RedisTimeout))
		positive("cache-redis-ttl", int64(c.CacheRedisTTL))
		notNegative("redis-cooldown", int64(c.RedisCooldown))
		if c.RedisLockTTL != 0 && c.RedisLockTTL <= c.FillTimeout {
			errs = append(errs, fmt.Errorf("redis-lock-ttl (%s) must be longer than fill-timeout (%s): a lock that expires mid-fill lets another replica download the same version", c.RedisLockTTL, c.FillTimeout))
		}
	}
	if c.RateLimitPerMinute > 0 && c.RedisURL == "" {
		errs = append(errs, errors.New("rate-limit-per-minute needs redis-url: limits are shared by all replicas through Redis"))
	}
	for _, side := range []struct{ name, addr string }{{"metrics-addr", c.MetricsAddr}, {"pprof-addr", c.PprofAddr}} {
		if side.addr != "" && side.addr == c.Addr {
			errs = append(errs, fmt.Errorf("%s must differ from addr (%s): it is served without tokens, on a listener of its own", side.name, c.Addr))
		}
	}
	if c.JSDelivrEnabled() {
		positive("jsdelivr-timeout", int64(c.JSDelivrTimeout))
		positive("jsdelivr-max-listing-bytes", c.JSDelivrMaxListingBytes)
		positive("jsdelivr-max-file-bytes", c.JSDelivrMaxFileBytes)
		positive("jsdelivr-grep-max-files", int64(c.JSDelivrGrepMaxFiles))
		positive("jsdelivr-grep-max-bytes", c.JSDelivrGrepMaxBytes)
		positive("jsdelivr-grep-timeout", int64(c.JSDelivrGrepTimeout))
		notNegative("cold-budget", int64(c.ColdBudget))
		for _, u := range []struct{ name, url string }{{"jsdelivr-data-url", c.JSDelivrDataURL}, {"jsdelivr-cdn-url", c.JSDelivrCDNURL}} {
			if !strings.HasPrefix(u.url, "http://") && !strings.HasPrefix(u.url, "https://") {
				errs = append(errs, fmt.Errorf("%s must be an http(s) URL, got %q", u.name, u.url))
			}
		}
	}
	if c.DatabaseURL == "" && c.DataDir == "" {
		errs = append(errs, errors.New("data-dir must be set when no database-url is given (the embedded store lives there)"))
	}
	for _, v := range []struct{ name, spec string }{{"webdocs-bcd-version", c.WebDocsBCDVersion}, {"webdocs-inventory-version", c.WebDocsInventoryVersion}, {"webdocs-idl-version", c.WebDocsIDLVersion}, {"webdocs-features-version", c.WebDocsFeaturesVersion}} {
		if v.spec == "" {
			errs = append(errs, fmt.Errorf("%s must be set (an exact version is best)", v.name))
		}
	}
	if c.MDNBaseURL != "" {
		if !strings.HasPrefix(c.MDNBaseURL, "http://") && !strings.HasPrefix(c.MDNBaseURL, "https://") {
			errs = append(errs, fmt.Errorf(`mdn-base-url must be an http(s) URL or "off", got %q`, c.MDNBaseURL))
		}
		positive("mdn-timeout", int64(c.MDNTimeout))
		positive("mdn-cache-bytes", c.MDNCacheBytes)
	}
	positive("webdocs-max-query-bytes", int64(c.WebDocsMaxQueryBytes))
	positive("webdocs-max-results", int64(c.WebDocsMaxResults))
	positive("webdocs-max-doc-bytes", int64(c.WebDocsMaxDocBytes))
	return errors.Join(errs...)
}

// JSDelivrEnabled reports whether the jsDelivr fallback is on: switched
// on, with both base URLs set.
func (c Config) JSDelivrEnabled() bool {
	return c.JSDelivrFallback && c.JSDelivrDataURL != "" && c.JSDelivrCDNURL != ""
}

// LockTTL is the fill lock's lifetime: RedisLockTTL, or fill-timeout plus
// a 30s margin for the commit after the fill's last byte.
func (c Config) LockTTL() time.Duration {
	if c.RedisLockTTL > 0 {
		return c.RedisLockTTL
	}
	return c.FillTimeout + 30*time.Second
}

// Binder registers flags whose defaults come from environment variables,
// collecting parse errors that name the variable: the mirror's settings
// here and the indexer's own (cmd/indexer) use it alike.
type Binder struct {
	fs     *flag.FlagSet
	getenv func(string) string
	errs   []error
}

// NewBinder binds flags on fs to environment variables read with getenv.
func NewBinder(fs *flag.FlagSet, getenv func(string) string) *Binder {
	return &Binder{fs: fs, getenv: getenv}
}

// Err is every environment value that failed to parse, joined.
func (b *Binder) Err() error { return errors.Join(b.errs...) }

func (b *Binder) env(name string, parse func(string) error) {
	if v := b.getenv(name); v != "" {
		if err := parse(v); err != nil {
			b.errs = append(b.errs, fmt.Errorf("environment variable %s=%q: %v", name, v, err))
		}
	}
}

// Str binds a string flag.
func (b *Binder) Str(p *string, flagName, envName, usage string) {
	b.env(envName, func(v string) error { *p = v; return nil })
	b.fs.StringVar(p, flagName, *p, usage+" ($"+envName+")")
}

// Secret is Str for a value that may hold a password (a database URL):
// the environment's value is applied but never shown as the flag's
// default, which --help and every flag error print.
func (b *Binder) Secret(p *string, flagName, envName, usage string) {
	b.env(envName, func(v string) error { *p = v; return nil })
	b.fs.Func(flagName, usage+" ($"+envName+"; its value is not shown)", func(v string) error { *p = v; return nil })
}

// List binds a comma-separated list flag.
func (b *Binder) List(p *[]string, flagName, envName, usage string) {
	set := func(v string) error {
		*p = nil
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*p = append(*p, s)
			}
		}
		return nil
	}
	b.env(envName, set)
	b.fs.Func(flagName, usage+" ($"+envName+")", set)
}

// Int binds an integer flag.
func (b *Binder) Int(p *int, flagName, envName, usage string) {
	b.env(envName, func(v string) error {
		n, err := strconv.Atoi(v)
		*p = n
		return err
	})
	b.fs.IntVar(p, flagName, *p, usage+" ($"+envName+")")
}

// Bytes binds a byte-count flag.
func (b *Binder) Bytes(p *int64, flagName, envName, usage string) {
	b.env(envName, func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		*p = n
		return err
	})
	b.fs.Int64Var(p, flagName, *p, usage+" in bytes ($"+envName+")")
}

// Dur binds a duration flag (Go syntax: 30s, 5m).
func (b *Binder) Dur(p *time.Duration, flagName, envName, usage string) {
	b.env(envName, func(v string) error {
		d, err := time.ParseDuration(v)
		*p = d
		return err
	})
	b.fs.DurationVar(p, flagName, *p, usage+" ($"+envName+")")
}

// Boolean binds a boolean flag.
func (b *Binder) Boolean(p *bool, flagName, envName, usage string) {
	b.env(envName, func(v string) error {
		x, err := strconv.ParseBool(v)
		*p = x
		return err
	})
	b.fs.BoolVar(p, flagName, *p, usage+" ($"+envName+")")
}
