// Package config is the mirror's one typed configuration: defaults in one
// place, each setting overridable by a YAML config file, an environment
// variable and a flag (in that order), validated at load with messages
// that name the setting to fix. Settings are bound in groups by topic
// (Binder.Group), which the help (help.go) and docs/OPERATIONS.md's
// generated reference list them by.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config is everything the mirror needs to start.
type Config struct {
	// ConfigFile is the YAML file the settings were read from, if any.
	ConfigFile string
	// Addr is the listen address of the HTTP API.
	Addr string
	// DataDir holds the embedded store and local caches.
	DataDir string
	// DatabaseURL selects the Postgres store; empty means the embedded one.
	DatabaseURL string
	// PGLockConns bounds the connections the Postgres fill lock
	// (internal/pglock) holds, beside the store's pool: one per cold fill
	// in flight in this process; a fill past it takes the Redis lock
	// alone, or none. PGLockTimeout bounds one of its statements. Used
	// only with DatabaseURL.
	PGLockConns   int
	PGLockTimeout time.Duration
	// MigrationLockTimeout is how long a starting process waits for
	// another's migration of the Postgres store before it fails to start:
	// replicas starting together migrate once, one at a time, and the
	// first migration on a large store (files_hash, built concurrently in
	// 00009) may take longer than the default. Used only with DatabaseURL.
	MigrationLockTimeout time.Duration
	// ProjectDir is where npm's project .npmrc is looked for.
	ProjectDir string

	// MaxBodyBytes caps a request body; MaxWarmBodyBytes the body of
	// POST /v1/warm and /v1/projects, which carry a lockfile (a project's
	// may be larger than one to warm: MaxProjectLockfileBytes). A warm
	// body's lockfile over LockfileMaxBytes is refused before it is
	// copied, so a body at this limit costs the mirror about twice it.
	MaxBodyBytes, MaxWarmBodyBytes int64
	// MaxProjectPackages caps the folders of a registered project's
	// node_modules tree; MaxProjectLockfileBytes its lockfile; a project
	// grep over packages not yet warm waits up to ProjectWait for them
	// before answering from what is warm, with complete: false; project
	// answers remember up to ProjectReadyVersions versions as ready, so a
	// grep reads only the others' states from the store (project.Limits).
	MaxProjectPackages      int
	MaxProjectLockfileBytes int64
	ProjectWait             time.Duration
	ProjectReadyVersions    int
	// LockfileMaxBytes, LockfileMaxNodes bound one lockfile parse (see
	// lockfile.Limits, which gives the reasons for the defaults: 8 MiB
	// and 800,000 nodes hold about 10,000 packages in any format), and
	// MaxLockfileParses how many POST /v1/warm and /v1/projects bodies
	// are read and parsed at once; more wait their turn before reading
	// their bodies (warm.DefaultMaxLockfileParses).
	LockfileMaxBytes  int64
	LockfileMaxNodes  int
	MaxLockfileParses int
	// MaxLockfileBytesInFlight caps the bytes of POST /v1/warm and
	// /v1/projects bodies being received at once; they are read before a
	// parse slot is taken (warm.BodyBudget), so a slow body holds none.
	MaxLockfileBytesInFlight int64
	// MaxLockfileBytesPerCaller is one caller's share of it (its token;
	// its address without tokens), so one caller's slow uploads never
	// hold what another's need; MinUploadBytesPerSecond cuts a body that
	// arrives slower (408), once its first 2 s have passed.
	MaxLockfileBytesPerCaller, MinUploadBytesPerSecond int64
	// MaxWarmQueue caps the warm jobs waiting or running: a warm request
	// or project registration whose jobs would pass it answers 503
	// (warm.Config.MaxQueued).
	MaxWarmQueue int
	// MaxFillBytes is the one memory budget of this process's fills,
	// callers' misses and warm jobs alike, and of the index builds after
	// them (fill.Budget): each takes the version's declared unpacked
	// bytes, then the bytes actually read, before its body is read; a
	// version larger than it runs alone. It was max-warm-inflight-bytes,
	// which weighed only warm jobs (issue 25 §1).
	MaxFillBytes int64
	// MaxRequestItems caps the packages of one warm request (a 400 past
	// it, warm.Config.MaxRequestItems); the indexer's flag of the same
	// name sets it for indexer warm.
	MaxRequestItems int
	// PublicURL is the mirror's address as its users reach it
	// ("https://pkgscope.example.internal"): answers then link to the web
	// page of what they answered. Empty: a mirror listening on a loopback
	// address links to that address; any other links nowhere.
	PublicURL string
	// AllowedHosts are the Host names a mirror without tokens answers
	// besides the loopback names; "*" allows any.
	AllowedHosts []string
	// AllowedOrigins are the browser origins (scheme://host[:port]) whose
	// pages a mirror without tokens answers besides its own, cross-site
	// ones included; "*" allows any. Empty by default: a page on another
	// port of localhost is another origin (api.HostGuard).
	AllowedOrigins []string
	// WarmInProcess runs warm jobs in the mirror process. It is always so
	// with the embedded store (there is no separate worker on a laptop);
	// with Postgres, `indexer worker` processes run them unless this is set.
	WarmInProcess bool
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout bound
	// the HTTP server; WriteTimeout must outlast FillTimeout, since a cold
	// request waits for its ingest.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxConnections caps the API listener's open connections (more wait
	// in the kernel's accept queue), and MaxHeaderBytes a request's
	// headers: a connection that has not sent its whole header yet is
	// held for ReadHeaderTimeout, needs no token, and costs the server
	// its buffers (about 100 KiB with 60 KiB of headers).
	MaxConnections int
	MaxHeaderBytes int
	// StalledClientTimeout bounds each write of a raw file streamed to a
	// client: one that stops reading releases its stream then, not at
	// WriteTimeout. MaxBodyBytesInFlight caps the memory of file bodies
	// being served as streams at once (read and raw GETs of bodies over
	// CacheMaxBodyBytes); a request past it waits.
	StalledClientTimeout time.Duration
	MaxBodyBytesInFlight int64
	// ShutdownTimeout is how long in-flight requests get on SIGTERM.
	ShutdownTimeout time.Duration
	// FillTimeout bounds one miss: packument, tarball, ingest, commit.
	FillTimeout time.Duration
	// BlobGCInterval is how often the blob collector runs a pass, across
	// replicas (0: never); a pass examines up to BlobGCBatch blobs and
	// deletes those no version or search index names that were last
	// written more than BlobGCGrace ago, which must exceed twice
	// FillTimeout (blobgc.Options).
	BlobGCInterval, BlobGCGrace time.Duration
	BlobGCBatch                 int
	// FailedRetryAfter is how long a version whose tarball failed for good
	// (integrity, limits, corrupt archive) is answered with that failure
	// instead of being downloaded again.
	FailedRetryAfter time.Duration
	// MaxFills is how many distinct versions this process fetches and
	// ingests at once for its callers; MaxFillWaiters how many more may
	// wait for a turn, past which a miss is refused at once (503 with
	// Retry-After). Callers of a version already being fetched join it
	// and count against neither. Warm jobs are bounded by their workers
	// instead (fill.Slots).
	MaxFills, MaxFillWaiters int

	// PackumentTTL is how long resolved dist-tags and version lists are
	// cached; exact versions are immutable and cached for good.
	PackumentTTL time.Duration
	// PackumentTimesMaxBytes caps how much of a package's full packument
	// the package page reads for its versions' publish dates (the
	// abbreviated one the mirror reads otherwise has none); past it the
	// page omits dates and says why. PackumentTimesTimeout is the longest
	// the package page waits for the dates: the fetch goes on (bounded
	// by upstream-timeout) and a later view shows them.
	PackumentTimesMaxBytes int64
	PackumentTimesTimeout  time.Duration
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
	// CompressWorkers is how many file bodies the store compresses at
	// once while writing them, across all ingests
	// (blobcodec.Config.Workers; default one per core).
	CompressWorkers int

	// Read: DefaultReadLimit lines when none is asked, at most
	// MaxReadLimit; lines wider than MaxLineWidth bytes are cut with a
	// marker; one read returns at most MaxReadBytes of content.
	DefaultReadLimit, MaxReadLimit, MaxLineWidth int
	MaxReadBytes                                 int

	// Diff: one file's line diff stops after MaxDiffWork steps (about a
	// second) and is shown without hunks; a page ends at the next file
	// boundary once its line diffs spent MaxDiffPageWork. Its pages keep
	// the answer budgets below, like every action.
	MaxDiffWork, MaxDiffPageWork int

	// Answer budgets (internal/explore/page.go): an explore answer, JSON
	// or MCP text, is at most AnswerBytes (list, glob, grep) or
	// ReadAnswerBytes (read) unless the request's maxBytes asks for up to
	// MaxAnswerBytes; a cut answer carries the request that continues it.
	// GrepMatchesPerFile caps one file's matches on grep's first pass over
	// the files (the rest comes on later pages).
	AnswerBytes, ReadAnswerBytes, MaxAnswerBytes int
	GrepMatchesPerFile                           int
	// GrepScopeFiles bounds the per-version tables grep keeps (each
	// file's tier, the files with the same bytes): files of the listings
	// held, summed; 0 makes them for every request.
	GrepScopeFiles int
	// FileTreeFiles bounds the file and folder trees list, glob and a
	// read of a folder keep
	// (each version's entries with their totals): files of the listings
	// held, summed; 0 makes them for every request.
	FileTreeFiles int
	// GrepCountTime bounds the count of all matching lines behind the
	// first page of a cut grep (explore.Limits.GrepCountTime).
	GrepCountTime time.Duration
	// GrepCountsBeside is how many of those counts may run beside their
	// pages at once (explore.Limits.GrepCountsBeside).
	GrepCountsBeside int
	// DiffPairFiles bounds what diffs keep of the version pairs they
	// compared (the changes, which files print): files of both listings,
	// summed over the pairs; 0 keeps none.
	DiffPairFiles int
	// DiffRenderBytes bounds the rendered files that diff pages were cut
	// inside, kept so that the next page continues them without
	// rendering them again: their text, summed; 0 keeps none.
	DiffRenderBytes int64
	// DeprecationNoteBytes caps the registry's deprecation message an
	// answer about a deprecated version quotes in its notes.
	DeprecationNoteBytes int

	// Glob: patterns per request, bytes per pattern, brace groups per
	// pattern and alternatives they may expand to.
	MaxGlobPatterns, MaxGlobPatternBytes, MaxGlobBraceGroups, MaxGlobAlternatives int
	// MaxGlobExpandedBytes caps one request's patterns with the brace
	// groups next to stars or slashes written out, and MaxGlobWildcards
	// their star runs, "?" and [classes]: what a path can cost the
	// compiled matcher (pathglob).
	MaxGlobExpandedBytes, MaxGlobWildcards int

	// Grep: IndexDir caches indexes on this node (default DataDir/indexes);
	// MaxOpenIndexes stay mapped at once, mapping at most
	// MaxOpenIndexBytes of index files together. A grep's pattern is at most
	// MaxGrepPatternBytes; a page returns what its byte budget holds, or
	// maxMatches lines when asked, up to MaxMatches (DefaultMaxMatches is
	// the index's cap for a search whose caller sets none: a grep page
	// always sets one, so it does not size pages; issue 28 found one page
	// of 167 lines under a documented default of 100), at most MaxContextLines of context, at most
	// MaxGrepOutputBytes of text, lines cut to a GrepLineWindow-byte window
	// around the match (a long line shows at most GrepWindowsPerLine
	// windows, one per match, and counts the rest up to
	// GrepLineMatchesCounted), and stops after GrepTimeout with what it
	// found.
	IndexDir          string
	MaxOpenIndexes    int
	MaxOpenIndexBytes int64
	MaxIndexBuilds    int // index builds at once (each holds a version's postings)
	// MaxIndexBytes caps one version's search index file (its distinct
	// text plus about 0.3x for postings): a version over it still lists
	// and reads, and grep says why. IndexCacheBytes bounds the local index
	// cache on disk (least recently used files are removed; 0: no bound);
	// a version without a local file is served from the store's copy of
	// its index, its text read through IndexTextCacheBytes of memory.
	MaxIndexBytes, IndexCacheBytes, IndexTextCacheBytes int64
	// IndexSpoolBytes bounds the disk in the index cache that fresh
	// ingests' bodies take until their version's full index is built
	// from them, and from which a cold version's first answers come once
	// its download is verified (search.Options.SpoolBytes; 0: builds
	// read the store, and those answers wait for the commit).
	IndexSpoolBytes int64
	// IndexSpoolWriteBytes bounds the spooled bodies read back into
	// memory to be written to the store, all fills together
	// (search.Options.WriteBackBytes).
	IndexSpoolWriteBytes                                int64
	MaxGrepPatternBytes, DefaultMaxMatches, MaxMatches  int
	MaxContextLines, MaxGrepOutputBytes, GrepLineWindow int
	GrepWindowsPerLine, GrepLineMatchesCounted          int
	GrepTimeout                                         time.Duration

	// MCPStructured makes /mcp answers carry structuredContent (the
	// /v1/explore JSON) and tools/list the output schema, for clients
	// that hand their model JSON (mcp.Options.Structured); a connection
	// asks with /mcp?structured=1 or 0 whatever the default. Off: the
	// text alone is what a model reads, at ≤ 1.2x of it on the wire.
	MCPStructured bool

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
	// RawAnswerBytes bounds the raw reads of exact versions' files kept
	// ready to answer again (api.Options.RawAnswerBytes): bodies the
	// in-process cache may hold too, with their header values; 0 keeps
	// none.
	RawAnswerBytes int64
	// CacheResolveTTL is how long a range or dist-tag resolution is
	// reused (0: not cached); a moved dist-tag is seen after at most this
	// plus packument-ttl. CacheRedisTTL is how long immutable entries
	// (file lists, bodies) live in Redis.
	CacheResolveTTL, CacheRedisTTL time.Duration

	// RateLimitPerMinute is the sustained requests per minute one caller
	// (bearer token, else client IP) may send, across replicas; 0 turns
	// limits off. RateLimitBurst is how many it may send at once (0: the
	// per-minute figure). Limits need RedisURL. RateLimitWarmItems is how
	// many packages of a warm request (POST /v1/warm, a project's
	// registration) count as one request (ratelimit.ChargeItems); one
	// request may carry at most RateLimitBurst × RateLimitWarmItems.
	RateLimitPerMinute, RateLimitBurst, RateLimitWarmItems int

	// TokensFile names a file of bearer tokens, one entry per line
	// (internal/auth: TOKEN, TOKEN:@scope,..., sha256:HEX[:@scope,...]);
	// Tokens holds more, comma-separated, from PKGSCOPE_TOKENS only (a
	// flag would show them in ps). With either set, every route but the
	// health checks needs "Authorization: Bearer TOKEN"; with neither the
	// API is open, fine on a laptop, not for an org-wide service.
	TokensFile string
	Tokens     Secret
	// SessionIdleTimeout ends a web login not used for this long, and
	// SessionLifetime any web login this long after it began
	// (internal/session): the browser's cookie holds a session id kept in
	// the store, never the token.
	SessionIdleTimeout, SessionLifetime time.Duration
	// MetricsAddr, when set, serves /metrics on a listener of its own,
	// without tokens (bind it to a private network), and not on Addr;
	// empty serves /metrics on Addr behind the tokens. PprofAddr, when
	// set, serves net/http/pprof on a listener of its own; empty (the
	// default) turns it off. The two may be the same address.
	MetricsAddr, PprofAddr string
	// LogFlushInterval is the longest a log line waits before it is
	// written, LogBufferBytes the most held meanwhile (internal/logbuf):
	// writing each request's line at once was a write(2) per request.
	// Warnings and errors are written at once. 0 writes every line at
	// once.
	LogFlushInterval time.Duration
	LogBufferBytes   int64
	// AccessLog writes a line at info for every request: its id, method,
	// path, status and latency. Off by default (defaults.go): it cost a
	// warm small read 10-15% of its CPU; off, /metrics still counts
	// requests and errors are still logged with their request id.
	AccessLog bool

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

func defaultDataDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "pkgscope")
	}
	return ".pkgscope"
}

// Load builds a Config from defaults, then the config file (--config or
// $PKGSCOPE_CONFIG), then the environment, then flags in args: each wins
// over the ones before it. getenv is os.Getenv outside tests. A help flag
// in args returns flag.ErrHelp and prints nothing: callers print help
// with ParseHelp and Settings first.
func Load(name string, args []string, getenv func(string) string) (Config, error) {
	var f *File
	if path := configPath(args, getenv); path != "" {
		var err error
		if f, err = ReadFile(path); err != nil {
			return Default(), err
		}
	}
	c, b, fs := bindAll(name, getenv, f)
	_, secErr := f.Section(IndexerSection) // pkgscope-indexer's; checked here too, so both refuse a bad one
	if err := errors.Join(b.Err(), f.unknown(b.Settings()), secErr); err != nil {
		return *c, err
	}
	if err := fs.Parse(args); err != nil {
		return *c, flagError(err, b.Settings())
	}
	if fs.NArg() > 0 {
		return *c, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if c.MDNBaseURL == "off" {
		c.MDNBaseURL = ""
	}
	return *c, c.Validate()
}

// bindAll binds every setting of the mirror, grouped by topic, to a new
// Config of defaults, with the values of f and the environment applied.
func bindAll(name string, getenv func(string) string, f *File) (*Config, *Binder, *flag.FlagSet) {
	c := Default()
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// Help and errors are printed by the caller (ParseHelp, flagError):
	// the flag package's would list every setting, 250 lines.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	b := NewBinder(fs, getenv, EnvPrefix)
	b.file = f

	b.Group("Server and limits")
	b.Str(&c.ConfigFile, "config", "YAML file of settings, keys named as these flags (docs/pkgscope.example.yaml); the environment and flags override it")
	b.Str(&c.Addr, "addr", "listen address of the HTTP API")
	b.Str(&c.PublicURL, "public-url", "the mirror's address as users reach it, for links to its web page in answers (default: the addr when it is loopback)")
	b.Group("Store")
	b.Str(&c.DataDir, "data-dir", "directory of the embedded store and local caches")
	b.Secret(&c.DatabaseURL, "database-url", "Postgres URL (also DATABASE_URL); empty means the embedded store")
	if v := getenv("DATABASE_URL"); v != "" && getenv(EnvPrefix+"DATABASE_URL") == "" {
		c.DatabaseURL = v // the environment wins over the config file
	}
	b.Int(&c.PGLockConns, "pg-lock-conns", "most Postgres connections the cross-replica fill lock holds (one per cold fill in flight; past it a fill takes the Redis lock alone, or none)")
	b.Dur(&c.PGLockTimeout, "pg-lock-timeout", "time for one statement of the Postgres fill lock (a try or a release)")
	b.Dur(&c.MigrationLockTimeout, "migration-lock-timeout", "how long a start waits for another process's migration of the Postgres store (at least 1s)")
	b.Group("Registry: npm's configuration, cold fills")
	b.Str(&c.ProjectDir, "project-dir", "where the project .npmrc is read from (default: the working directory)")

	b.Group("Server and limits")
	b.Bytes(&c.MaxBodyBytes, "max-body-bytes", "largest request body")
	b.Group("Warm requests, projects and lockfiles")
	b.Bytes(&c.MaxWarmBodyBytes, "max-warm-body-bytes", "largest POST /v1/warm body (a lockfile)")
	b.Int(&c.MaxProjectPackages, "max-project-packages", "most package folders a registered project may install")
	b.Bytes(&c.MaxProjectLockfileBytes, "max-project-lockfile-bytes", "largest lockfile POST /v1/projects accepts")
	b.Dur(&c.ProjectWait, "project-wait", "how long a project grep waits for packages not yet warm before answering with complete: false")
	b.Int(&c.ProjectReadyVersions, "project-ready-versions", "how many versions project answers remember as ready, reading only the others' states from the store on each grep (0: none)")
	b.Bytes(&c.LockfileMaxBytes, "lockfile-max-bytes", "largest lockfile POST /v1/warm parses")
	b.Int(&c.LockfileMaxNodes, "lockfile-max-nodes", "most syntax nodes of a YAML or JSONC lockfile (pnpm, yarn, bun) POST /v1/warm parses")
	b.Int(&c.MaxLockfileParses, "max-lockfile-parses", "POST /v1/warm and /v1/projects lockfiles parsed at once, once their bodies arrived; more wait")
	b.Int(&c.MaxRequestItems, "max-request-items", "most packages in one POST /v1/warm request (400 past it)")
	b.Group("Registry: npm's configuration, cold fills")
	b.Bytes(&c.MaxFillBytes, "max-fill-bytes", "memory of the versions filled and indexed at once, callers' misses and warm jobs together (declared unpacked bytes, then actual); a version larger than it runs alone")
	b.Group("Warm requests, projects and lockfiles")
	b.Int(&c.MaxWarmQueue, "max-warm-queue", "warm jobs waiting or running at most; a warm request or project that would pass it is refused (503)")
	b.Bytes(&c.MaxLockfileBytesInFlight, "max-lockfile-bytes-in-flight", "memory of POST /v1/warm and /v1/projects bodies being received at once (at least max-warm-body-bytes); more wait")
	b.Bytes(&c.MaxLockfileBytesPerCaller, "max-lockfile-bytes-per-caller", "one caller's share of max-lockfile-bytes-in-flight (a token, or a client address without tokens; at least max-warm-body-bytes): its uploads past it wait for its own")
	b.Bytes(&c.MinUploadBytesPerSecond, "min-upload-bytes-per-second", "slowest pace a POST /v1/warm or /v1/projects body may arrive at after its first 2 s; slower is cut with 408 (0: no minimum)")
	b.Group("Auth: tokens, allowed hosts and origins, side listeners")
	b.List(&c.AllowedHosts, "allowed-hosts", "comma-separated host names a mirror without tokens answers besides localhost (\"*\": any)")
	b.List(&c.AllowedOrigins, "allowed-origins", "comma-separated browser origins (e.g. http://localhost:3000) whose pages a mirror without tokens answers besides its own (\"*\": any)")
	b.Group("Warm requests, projects and lockfiles")
	b.Boolean(&c.WarmInProcess, "warm-in-process", "run warm jobs in this process (always so with the embedded store)")
	b.Group("Server and limits")
	b.Dur(&c.ReadHeaderTimeout, "read-header-timeout", "time to read request headers")
	b.Dur(&c.ReadTimeout, "read-timeout", "time to read a whole request")
	b.Int(&c.MaxConnections, "max-connections", "connections the API listener keeps open at once; more wait to be accepted")
	b.Int(&c.MaxHeaderBytes, "max-header-bytes", "largest request header block (request line, headers, cookies) in bytes")
	b.Dur(&c.WriteTimeout, "write-timeout", "time to write a response, including a cold fill")
	b.Dur(&c.StalledClientTimeout, "stalled-client-timeout", "time one write of a raw file streamed from the store (over cache-max-body-bytes) may take before a client that stopped reading is dropped; a body held in memory has write-timeout")
	b.Bytes(&c.MaxBodyBytesInFlight, "max-body-bytes-in-flight", "memory of file bodies streamed at once (read, raw GETs); more wait")
	b.Dur(&c.IdleTimeout, "idle-timeout", "keep-alive idle time")
	b.Dur(&c.ShutdownTimeout, "shutdown-timeout", "grace period for in-flight requests on shutdown")
	b.Group("Registry: npm's configuration, cold fills")
	b.Dur(&c.FailedRetryAfter, "failed-retry-after", "how long a version whose tarball failed its checks is answered from memory before trying again")
	b.Dur(&c.FillTimeout, "fill-timeout", "time for one miss: fetch, verify, ingest, commit")
	b.Int(&c.MaxFills, "max-fills", "distinct versions this process fetches and ingests at once for its callers; more wait")
	b.Int(&c.MaxFillWaiters, "max-fill-waiters", "cold fills that may wait for one of max-fills; a miss past them is refused at once (503 with Retry-After)")
	b.Group("Store")
	b.Dur(&c.BlobGCInterval, "blob-gc-interval", "how often the blob collector runs a pass, across replicas (0: never)")
	b.Dur(&c.BlobGCGrace, "blob-gc-grace", "how long a file body or index chunk nothing names is kept after it was last written (must exceed twice fill-timeout)")
	b.Int(&c.BlobGCBatch, "blob-gc-batch", "most blobs one blob collector pass examines")

	b.Group("Registry: npm's configuration, cold fills")
	b.Dur(&c.PackumentTTL, "packument-ttl", "how long dist-tags and version lists are cached")
	b.Bytes(&c.PackumentTimesMaxBytes, "packument-times-max-bytes", "most bytes of a full packument the package page reads for publish dates; past it dates are omitted")
	b.Dur(&c.PackumentTimesTimeout, "packument-times-timeout", "longest the package page waits for publish dates before showing the page without them")
	b.Int(&c.BreakerFailures, "breaker-failures", "consecutive failures to a registry host that open its circuit breaker (negative: off)")
	b.Dur(&c.BreakerCooldown, "breaker-cooldown", "how long an open circuit breaker refuses requests before one probe")
	b.Dur(&c.PackumentRefetch, "packument-refetch", "how often a cached packument lacking a requested exact version is fetched again early")
	b.Dur(&c.UpstreamTimeout, "upstream-timeout", "time for one packument or version-manifest request")
	b.Dur(&c.TarballTimeout, "tarball-timeout", "time for one tarball download, which the ingest reads as it arrives")
	b.Bytes(&c.MaxTarballBytes, "max-tarball-bytes", "largest compressed tarball")
	b.List(&c.AllowedTarballHosts, "allowed-tarball-hosts", "comma-separated hosts besides the registry's that dist.tarball may name")

	b.Group("Ingest limits")
	b.Bytes(&c.MaxUnpackedBytes, "max-unpacked-bytes", "largest unpacked package")
	b.Int(&c.MaxFiles, "max-files", "most regular files in a package")
	b.Int(&c.MaxEntries, "max-entries", "most tar entries in a package")
	b.Bytes(&c.MaxFileBytes, "max-file-bytes", "largest single file")
	b.Int(&c.CompressWorkers, "compress-workers", "file bodies the store compresses at once while ingesting (default: one per core)")

	b.Group("Answers: read, diff, glob and budgets")
	b.Int(&c.DefaultReadLimit, "default-read-limit", "lines a read returns when no limit is asked")
	b.Int(&c.MaxReadLimit, "max-read-limit", "most lines one read may ask for")
	b.Int(&c.MaxLineWidth, "max-line-width", "bytes of a line a read shows before cutting it")
	b.Int(&c.MaxReadBytes, "max-read-bytes", "most content bytes one read returns")
	b.Int(&c.MaxDiffWork, "max-diff-work", "steps one file's line diff may take before it is shown without hunks")
	b.Int(&c.MaxDiffPageWork, "max-diff-page-work", "line-diff steps after which a diff page ends at the next file (truncatedBy diffWork)")
	b.Int(&c.AnswerBytes, "answer-bytes", "bytes a list, glob or grep answer holds when the request gives no maxBytes")
	b.Int(&c.ReadAnswerBytes, "read-answer-bytes", "bytes a read answer holds when the request gives no maxBytes")
	b.Int(&c.MaxAnswerBytes, "max-answer-bytes", "largest maxBytes a request may ask for")
	b.Int(&c.GrepMatchesPerFile, "grep-matches-per-file", "matches of one file on grep's first pass over the files, when maxMatchesPerFile is not given")
	b.Int(&c.DiffPairFiles, "diff-pair-files", "files (both listings, summed over version pairs) whose diff changes and printed/unprinted state are kept between requests; 0 keeps none")
	b.Bytes(&c.DiffRenderBytes, "diff-render-bytes", "memory for the diff text of files a diff page ended inside, kept so that the next page goes on without diffing the file again; 0 keeps none (every page re-renders the file it starts in)")
	b.Dur(&c.GrepCountTime, "grep-count-time", "longest the first page of a cut grep spends counting all matching lines; past it the page says \"at least N\" (0: count to the end)")
	b.Int(&c.GrepCountsBeside, "grep-counts-beside", "first grep pages whose count of the matching lines in the tiers the page does not reach may run at once beside the page, on another core (default: one fewer than the cores); past it, or with 0, a page counts them after it is filled")
	b.Int(&c.GrepScopeFiles, "grep-scope-files", "files (summed over versions) whose grep ranking and same-bytes tables are kept between requests; 0 keeps none")
	b.Int(&c.FileTreeFiles, "file-tree-files", "files (summed over versions) whose file and folder trees (for list, glob and a read of a folder) are kept between requests; 0 keeps none")
	b.Int(&c.DeprecationNoteBytes, "deprecation-note-bytes", "bytes of a version's deprecation message an answer about it quotes in its notes")

	b.Int(&c.MaxGlobPatterns, "max-glob-patterns", "most glob patterns per request")
	b.Int(&c.MaxGlobPatternBytes, "max-glob-pattern-bytes", "longest glob pattern")
	b.Int(&c.MaxGlobBraceGroups, "max-glob-brace-groups", "most {…} groups in one glob")
	b.Int(&c.MaxGlobAlternatives, "max-glob-alternatives", "most alternatives a glob's braces may expand to")
	b.Int(&c.MaxGlobExpandedBytes, "max-glob-expanded-bytes", "most bytes of one request's globs once their brace groups next to stars or slashes are written out")
	b.Int(&c.MaxGlobWildcards, "max-glob-wildcards", "most wildcards (*, **, ?, [...]) in one request's globs, braces written out")

	b.Group("Grep and search indexes")
	b.Str(&c.IndexDir, "index-dir", "local cache of search indexes (default: data-dir/indexes)")
	b.Int(&c.MaxIndexBuilds, "max-index-builds", "search index builds run at once (each holds a version's text in memory)")
	b.Int(&c.MaxOpenIndexes, "max-open-indexes", "search indexes kept mapped at once")
	b.Bytes(&c.MaxOpenIndexBytes, "max-open-index-bytes", "bytes of index files kept mapped at once (least recently used closed past it)")
	b.Bytes(&c.IndexSpoolBytes, "index-spool-bytes", "disk in the index cache that fresh ingests' bodies take until their index is built from them; a cold version's first answers come from there once its download is verified (0: builds read the store, cold answers wait for the commit)")
	b.Bytes(&c.MaxIndexBytes, "max-index-bytes", "largest search index of one version (over it, grep of that version is refused; list and read still work)")
	b.Bytes(&c.IndexCacheBytes, "index-cache-bytes", "local search index cache size; least recently used indexes are removed past it, and an index larger than it is served from the store's copy instead (0: no bound)")
	b.Bytes(&c.IndexSpoolWriteBytes, "index-spool-write-bytes", "memory for spooled bodies being written to the store, all fills together; a body larger than it is written alone")
	b.Bytes(&c.IndexTextCacheBytes, "index-text-cache-bytes", "memory for the file text read by greps of indexes served from the store's copy (0: read the store every time)")
	b.Int(&c.MaxGrepPatternBytes, "max-grep-pattern-bytes", "longest grep pattern")
	b.Int(&c.DefaultMaxMatches, "default-max-matches", "matching lines one index search returns when its caller sets no cap; a grep page always sets one (maxMatches, else what its byte budget holds), so this does not size pages")
	b.Int(&c.MaxMatches, "max-matches", "largest maxMatches a grep may ask for")
	b.Int(&c.MaxContextLines, "max-context-lines", "largest contextLines a grep may ask for")
	b.Int(&c.MaxGrepOutputBytes, "max-grep-output-bytes", "most text bytes one grep returns")
	b.Int(&c.GrepLineWindow, "grep-line-window", "bytes of a long line shown around a match")
	b.Int(&c.GrepWindowsPerLine, "grep-windows-per-line", "windows one long line shows, one per match; its later matches are counted")
	b.Int(&c.GrepLineMatchesCounted, "grep-line-matches-counted", "most matches of one long line counted after its last window")
	b.Dur(&c.GrepTimeout, "grep-timeout", "time one grep may take before answering with what it found")

	b.Group("Answers: read, diff, glob and budgets")
	b.Boolean(&c.MCPStructured, "mcp-structured", "/mcp answers carry structuredContent and tools/list the output schema, for clients that read JSON (per connection: /mcp?structured=1)")

	b.Group("jsDelivr fallback")
	b.Boolean(&c.JSDelivrFallback, "jsdelivr-fallback", "answer from jsDelivr when the registry cannot serve a version (sends package names to jsDelivr)")
	b.Str(&c.JSDelivrDataURL, "jsdelivr-data-url", "base URL of jsDelivr's Data API (empty: no fallback)")
	b.Str(&c.JSDelivrCDNURL, "jsdelivr-cdn-url", "base URL of jsDelivr's CDN (empty: no fallback)")
	b.Dur(&c.JSDelivrTimeout, "jsdelivr-timeout", "time for one jsDelivr request")
	b.Bytes(&c.JSDelivrMaxListingBytes, "jsdelivr-max-listing-bytes", "largest jsDelivr Data API answer")
	b.Bytes(&c.JSDelivrMaxFileBytes, "jsdelivr-max-file-bytes", "largest file fetched from jsDelivr's CDN")
	b.Int(&c.JSDelivrGrepMaxFiles, "jsdelivr-grep-max-files", "most files one grep fetches from jsDelivr's CDN")
	b.Bytes(&c.JSDelivrGrepMaxBytes, "jsdelivr-grep-max-bytes", "most bytes one grep fetches from jsDelivr's CDN")
	b.Dur(&c.JSDelivrGrepTimeout, "jsdelivr-grep-timeout", "time one grep may spend fetching from jsDelivr's CDN")
	b.Dur(&c.ColdBudget, "cold-budget", "how long a request waits for a cold fill before jsDelivr answers it (0: wait; needs jsdelivr-fallback)")

	b.Group("Redis, cache and rate limits")
	b.Secret(&c.RedisURL, "redis-url", "Redis URL (also REDIS_URL) for the shared cache, fill lock and rate limits; empty runs without Redis")
	if v := getenv("REDIS_URL"); v != "" && getenv(EnvPrefix+"REDIS_URL") == "" {
		c.RedisURL = v
	}
	b.Str(&c.RedisPrefix, "redis-prefix", "prefix of every Redis key")
	b.Dur(&c.RedisDialTimeout, "redis-dial-timeout", "time to connect to Redis")
	b.Dur(&c.RedisTimeout, "redis-timeout", "time for one Redis command's write and read")
	b.Dur(&c.RedisCooldown, "redis-cooldown", "how long Redis is skipped after a failure")
	b.Dur(&c.RedisLockTTL, "redis-lock-ttl", "lifetime of a fill lock (0: fill-timeout + 30s)")
	b.Bytes(&c.CacheLocalBytes, "cache-local-bytes", "budget of the in-process cache (0 disables it)")
	b.Bytes(&c.CacheMaxBodyBytes, "cache-max-body-bytes", "largest file body cached")
	b.Bytes(&c.CacheMaxListBytes, "cache-max-list-bytes", "largest file list cached")
	b.Bytes(&c.RawAnswerBytes, "raw-answer-bytes", "memory for raw reads of exact versions' files (GET /v1/npm/{name}@{version}/{path}) kept ready to answer again, bodies and headers, besides the in-process cache; one answer takes at most a sixteenth of it (0: none)")
	b.Dur(&c.CacheResolveTTL, "cache-resolve-ttl", "how long a range or dist-tag resolution is reused (0: not cached)")
	b.Dur(&c.CacheRedisTTL, "cache-redis-ttl", "how long immutable entries live in Redis")
	b.Int(&c.RateLimitPerMinute, "rate-limit-per-minute", "requests per minute per caller (0: no limit; needs redis-url)")
	b.Int(&c.RateLimitBurst, "rate-limit-burst", "requests a caller may send at once (0: the per-minute figure)")
	b.Int(&c.RateLimitWarmItems, "rate-limit-warm-items", "packages of a warm request or project registration that count as one request against the rate limit (a request may carry at most rate-limit-burst times this)")

	b.Group("Auth: tokens, allowed hosts and origins, side listeners")
	b.Str(&c.TokensFile, "tokens-file", "file of bearer tokens required on every route but health checks, one per line: TOKEN, TOKEN:@scope,... or sha256:HEX (more in $PKGSCOPE_TOKENS, comma-separated)")
	c.Tokens = Secret(getenv(EnvPrefix + "TOKENS"))
	b.Dur(&c.SessionIdleTimeout, "session-idle-timeout", "a web page login not used for this long ends (the cookie holds a session id, never the token)")
	b.Dur(&c.SessionLifetime, "session-lifetime", "a web page login ends this long after it began, used or not")
	b.Str(&c.MetricsAddr, "metrics-addr", "serve /metrics on this address, without tokens, instead of on addr")
	b.Str(&c.PprofAddr, "pprof-addr", "serve net/http/pprof on this address (empty: off)")
	b.Group("Server and limits")
	b.Dur(&c.LogFlushInterval, "log-flush-interval", "longest a log line waits before it is written (warnings and errors are written at once; 0: every line at once)")
	b.Bytes(&c.LogBufferBytes, "log-buffer-bytes", "most log lines held before they are written (log-flush-interval)")
	b.Boolean(&c.AccessLog, "access-log", "log a line for every request: id, method, path, status, latency (errors and refusals are logged either way)")

	b.Group("Web-docs: explore_web_docs and MDN")
	b.Str(&c.WebDocsBCDVersion, "webdocs-bcd-version", "version of @mdn/browser-compat-data explore_web_docs reads")
	b.Str(&c.WebDocsInventoryVersion, "webdocs-inventory-version", "version of @ddbeck/mdn-content-inventory explore_web_docs reads")
	b.Str(&c.WebDocsIDLVersion, "webdocs-idl-version", "version of @webref/idl explore_web_docs reads")
	b.Str(&c.WebDocsFeaturesVersion, "webdocs-features-version", "version of web-features explore_web_docs reads")
	b.Str(&c.MDNBaseURL, "mdn-base-url", `MDN's site, read for article text ("off": the data packages alone)`)
	b.Dur(&c.MDNTimeout, "mdn-timeout", "time for one MDN request")
	b.Bytes(&c.MDNCacheBytes, "mdn-cache-bytes", "memory for MDN pages kept")
	b.Int(&c.WebDocsMaxQueryBytes, "webdocs-max-query-bytes", "longest web-docs query, path or key")
	b.Int(&c.WebDocsMaxResults, "webdocs-max-results", "most documents one web-docs search returns")
	b.Int(&c.WebDocsMaxDocBytes, "webdocs-max-doc-bytes", "bytes of a web doc's content shown before it is cut")
	return &c, b, fs
}

// Validate checks the settings together, naming the one to fix.
func (c Config) Validate() error {
	var errs []error
	positive := func(name string, v int64) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", name, v))
		}
	}
	notNegative := func(name string, v int64) {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %d", name, v))
		}
	}
	positive("max-body-bytes", c.MaxBodyBytes)
	positive("max-connections", int64(c.MaxConnections))
	positive("max-header-bytes", int64(c.MaxHeaderBytes))
	positive("max-body-bytes-in-flight", c.MaxBodyBytesInFlight)
	positive("stalled-client-timeout", int64(c.StalledClientTimeout))
	positive("max-warm-body-bytes", c.MaxWarmBodyBytes)
	positive("max-project-packages", int64(c.MaxProjectPackages))
	positive("session-idle-timeout", int64(c.SessionIdleTimeout))
	positive("session-lifetime", int64(c.SessionLifetime))
	positive("max-project-lockfile-bytes", c.MaxProjectLockfileBytes)
	if c.ProjectWait < 0 {
		errs = append(errs, fmt.Errorf("project-wait must not be negative, got %s", c.ProjectWait))
	}
	positive("lockfile-max-bytes", c.LockfileMaxBytes)
	positive("lockfile-max-nodes", int64(c.LockfileMaxNodes))
	positive("max-lockfile-parses", int64(c.MaxLockfileParses))
	positive("max-lockfile-bytes-in-flight", c.MaxLockfileBytesInFlight)
	positive("max-warm-queue", int64(c.MaxWarmQueue))
	positive("max-fill-bytes", c.MaxFillBytes)
	positive("max-request-items", int64(c.MaxRequestItems))
	if c.MaxLockfileBytesInFlight < c.MaxWarmBodyBytes {
		// A body of max-warm-body-bytes could never be read whole.
		errs = append(errs, fmt.Errorf("max-lockfile-bytes-in-flight (%d) must be at least max-warm-body-bytes (%d)", c.MaxLockfileBytesInFlight, c.MaxWarmBodyBytes))
	}
	if c.MaxLockfileBytesPerCaller < c.MaxWarmBodyBytes || c.MaxLockfileBytesPerCaller > c.MaxLockfileBytesInFlight {
		// A body of max-warm-body-bytes could never be read whole; a
		// share over the whole is no share.
		errs = append(errs, fmt.Errorf("max-lockfile-bytes-per-caller (%d) must be at least max-warm-body-bytes (%d) and at most max-lockfile-bytes-in-flight (%d)",
			c.MaxLockfileBytesPerCaller, c.MaxWarmBodyBytes, c.MaxLockfileBytesInFlight))
	}
	positive("max-tarball-bytes", c.MaxTarballBytes)
	positive("max-unpacked-bytes", c.MaxUnpackedBytes)
	positive("max-files", int64(c.MaxFiles))
	positive("max-entries", int64(c.MaxEntries))
	positive("max-file-bytes", c.MaxFileBytes)
	positive("compress-workers", int64(c.CompressWorkers))
	positive("default-read-limit", int64(c.DefaultReadLimit))
	positive("max-read-limit", int64(c.MaxReadLimit))
	positive("max-line-width", int64(c.MaxLineWidth))
	positive("max-read-bytes", int64(c.MaxReadBytes))
	positive("max-diff-work", int64(c.MaxDiffWork))
	positive("max-diff-page-work", int64(c.MaxDiffPageWork))
	positive("grep-matches-per-file", int64(c.GrepMatchesPerFile))
	positive("deprecation-note-bytes", int64(c.DeprecationNoteBytes))
	for _, b := range []struct {
		name string
		n    int
	}{{"answer-bytes", c.AnswerBytes}, {"read-answer-bytes", c.ReadAnswerBytes}} {
		if b.n < 4096 || b.n > c.MaxAnswerBytes {
			errs = append(errs, fmt.Errorf("%s must be between 4096 and max-answer-bytes (%d), got %d", b.name, c.MaxAnswerBytes, b.n))
		}
	}
	positive("max-glob-patterns", int64(c.MaxGlobPatterns))
	positive("max-glob-pattern-bytes", int64(c.MaxGlobPatternBytes))
	positive("max-glob-alternatives", int64(c.MaxGlobAlternatives))
	positive("max-glob-expanded-bytes", int64(c.MaxGlobExpandedBytes))
	positive("max-glob-wildcards", int64(c.MaxGlobWildcards))
	positive("max-open-indexes", int64(c.MaxOpenIndexes))
	positive("max-open-index-bytes", c.MaxOpenIndexBytes)
	positive("max-index-builds", int64(c.MaxIndexBuilds))
	positive("max-index-bytes", c.MaxIndexBytes)
	if c.GrepCountTime < 0 {
		errs = append(errs, fmt.Errorf("grep-count-time must not be negative, got %s", c.GrepCountTime))
	}
	notNegative("grep-counts-beside", int64(c.GrepCountsBeside))
	notNegative("grep-scope-files", int64(c.GrepScopeFiles))
	notNegative("file-tree-files", int64(c.FileTreeFiles))
	notNegative("diff-pair-files", int64(c.DiffPairFiles))
	notNegative("diff-render-bytes", c.DiffRenderBytes)
	notNegative("index-spool-bytes", int64(c.IndexSpoolBytes))
	notNegative("index-cache-bytes", int64(c.IndexCacheBytes))
	positive("index-spool-write-bytes", int64(c.IndexSpoolWriteBytes))
	notNegative("index-text-cache-bytes", int64(c.IndexTextCacheBytes))
	positive("max-grep-pattern-bytes", int64(c.MaxGrepPatternBytes))
	positive("default-max-matches", int64(c.DefaultMaxMatches))
	positive("max-grep-output-bytes", int64(c.MaxGrepOutputBytes))
	positive("grep-windows-per-line", int64(c.GrepWindowsPerLine))
	positive("grep-timeout", int64(c.GrepTimeout))
	// The registry client once took a zero or negative value here as its
	// default, silently; config is built from its defaults now, so a value
	// that is not positive is a mistake to name.
	positive("fill-timeout", int64(c.FillTimeout))
	positive("failed-retry-after", int64(c.FailedRetryAfter))
	positive("max-fills", int64(c.MaxFills))
	positive("packument-ttl", int64(c.PackumentTTL))
	positive("packument-times-max-bytes", c.PackumentTimesMaxBytes)
	positive("packument-times-timeout", int64(c.PackumentTimesTimeout))
	positive("packument-refetch", int64(c.PackumentRefetch))
	positive("upstream-timeout", int64(c.UpstreamTimeout))
	positive("tarball-timeout", int64(c.TarballTimeout))
	positive("breaker-cooldown", int64(c.BreakerCooldown))
	if c.MaxMatches < c.DefaultMaxMatches {
		errs = append(errs, fmt.Errorf("max-matches (%d) is below default-max-matches (%d)", c.MaxMatches, c.DefaultMaxMatches))
	}
	if c.GrepLineWindow < 16 {
		errs = append(errs, fmt.Errorf("grep-line-window must be at least 16, got %d", c.GrepLineWindow))
	}
	if c.DefaultReadLimit > c.MaxReadLimit {
		errs = append(errs, fmt.Errorf("default-read-limit (%d) is above max-read-limit (%d)", c.DefaultReadLimit, c.MaxReadLimit))
	}
	if err := c.BlobGC().Validate(c.FillTimeout); err != nil {
		errs = append(errs, err)
	}
	if c.WriteTimeout <= c.FillTimeout {
		errs = append(errs, fmt.Errorf("write-timeout (%s) must be longer than fill-timeout (%s): a cold request waits for its fill", c.WriteTimeout, c.FillTimeout))
	}
	notNegative("max-glob-brace-groups", int64(c.MaxGlobBraceGroups))
	notNegative("min-upload-bytes-per-second", c.MinUploadBytesPerSecond)
	notNegative("max-fill-waiters", int64(c.MaxFillWaiters))
	notNegative("max-context-lines", int64(c.MaxContextLines))
	notNegative("grep-line-matches-counted", int64(c.GrepLineMatchesCounted))
	notNegative("project-ready-versions", int64(c.ProjectReadyVersions))
	notNegative("cache-local-bytes", c.CacheLocalBytes)
	notNegative("raw-answer-bytes", c.RawAnswerBytes)
	notNegative("cache-max-body-bytes", c.CacheMaxBodyBytes)
	notNegative("cache-max-list-bytes", c.CacheMaxListBytes)
	notNegative("cache-resolve-ttl", int64(c.CacheResolveTTL))
	notNegative("rate-limit-per-minute", int64(c.RateLimitPerMinute))
	notNegative("log-flush-interval", int64(c.LogFlushInterval))
	if c.LogFlushInterval > 0 {
		positive("log-buffer-bytes", c.LogBufferBytes)
	}
	notNegative("rate-limit-burst", int64(c.RateLimitBurst))
	positive("rate-limit-warm-items", int64(c.RateLimitWarmItems))
	if c.DatabaseURL != "" {
		positive("pg-lock-conns", int64(c.PGLockConns))
		positive("pg-lock-timeout", int64(c.PGLockTimeout))
		if c.MigrationLockTimeout < time.Second {
			errs = append(errs, fmt.Errorf("migration-lock-timeout (%s) must be at least 1s (the migration lock is polled each second)", c.MigrationLockTimeout))
		}
	}
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

// EnvPrefix starts the environment variable of every mirror setting: the
// variable is the flag's name upper-cased with "-" as "_" after it
// (--max-files is PKGSCOPE_MAX_FILES).
const EnvPrefix = "PKGSCOPE_"

// Binder registers flags whose defaults come from a config file and
// environment variables named after them, collecting parse errors that
// name the file's key or the variable: the mirror's settings here and the
// indexer's own (cmd/indexer) use it alike. It records each setting with
// its group (Group) for the help and docs/OPERATIONS.md (Settings).
type Binder struct {
	fs       *flag.FlagSet
	getenv   func(string) string
	prefix   string
	errs     []error
	file     *File
	group    string
	settings []Setting
}

// NewBinder binds flags on fs to environment variables read with getenv:
// flag "max-files" to prefix+"MAX_FILES".
func NewBinder(fs *flag.FlagSet, getenv func(string) string, prefix string) *Binder {
	return &Binder{fs: fs, getenv: getenv, prefix: prefix}
}

// EnvName is the environment variable of flag name.
func (b *Binder) EnvName(flagName string) string {
	return b.prefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Err is every file and environment value that failed to parse, joined.
func (b *Binder) Err() error { return errors.Join(b.errs...) }

// bind records flagName's setting and applies its config file value,
// then its environment variable, if set, with parse; it returns the
// variable's name for the usage text.
func (b *Binder) bind(flagName, usage string, k Kind, def string, parse func(string) error) string {
	name := b.EnvName(flagName)
	b.settings = append(b.settings, Setting{Name: flagName, Env: name, Group: b.group, Usage: usage, Kind: k, Default: def})
	if v, ok, err := b.file.value(flagName, k); err != nil {
		b.errs = append(b.errs, err)
	} else if ok {
		if err := parse(v); err != nil {
			b.errs = append(b.errs, b.file.typeError(flagName, k, v))
		}
	}
	if v := b.getenv(name); v != "" {
		if err := parse(v); err != nil {
			b.errs = append(b.errs, fmt.Errorf("environment variable %s=%q: %v", name, v, err))
		}
	}
	return name
}

// Str binds a string flag.
func (b *Binder) Str(p *string, flagName, usage string) {
	envName := b.bind(flagName, usage, KindString, *p, func(v string) error { *p = v; return nil })
	b.fs.StringVar(p, flagName, *p, usage+" ($"+envName+")")
}

// Secret is Str for a value that may hold a password (a database URL):
// the file's or environment's value is applied but never shown as the
// flag's default, which --help and every flag error print.
func (b *Binder) Secret(p *string, flagName, usage string) {
	envName := b.bind(flagName, usage, KindSecret, "", func(v string) error { *p = v; return nil })
	b.fs.Func(flagName, usage+" ($"+envName+"; its value is not shown)", func(v string) error { *p = v; return nil })
}

// List binds a comma-separated list flag (a list or a comma-separated
// string in the config file).
func (b *Binder) List(p *[]string, flagName, usage string) {
	set := func(v string) error {
		*p = nil
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*p = append(*p, s)
			}
		}
		return nil
	}
	envName := b.bind(flagName, usage, KindList, strings.Join(*p, ","), set)
	b.fs.Func(flagName, usage+" ($"+envName+")", set)
}

// Int binds an integer flag.
func (b *Binder) Int(p *int, flagName, usage string) {
	envName := b.bind(flagName, usage, KindInt, strconv.Itoa(*p), func(v string) error {
		n, err := strconv.Atoi(v)
		*p = n
		return err
	})
	b.fs.IntVar(p, flagName, *p, usage+" ($"+envName+")")
}

// Bytes binds a byte-count flag.
func (b *Binder) Bytes(p *int64, flagName, usage string) {
	envName := b.bind(flagName, usage, KindBytes, strconv.FormatInt(*p, 10), func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		*p = n
		return err
	})
	b.fs.Int64Var(p, flagName, *p, usage+" in bytes ($"+envName+")")
}

// Dur binds a duration flag (Go syntax: 30s, 5m).
func (b *Binder) Dur(p *time.Duration, flagName, usage string) {
	envName := b.bind(flagName, usage, KindDuration, p.String(), func(v string) error {
		d, err := time.ParseDuration(v)
		*p = d
		return err
	})
	b.fs.DurationVar(p, flagName, *p, usage+" ($"+envName+")")
}

// Boolean binds a boolean flag.
func (b *Binder) Boolean(p *bool, flagName, usage string) {
	envName := b.bind(flagName, usage, KindBool, strconv.FormatBool(*p), func(v string) error {
		x, err := strconv.ParseBool(v)
		*p = x
		return err
	})
	b.fs.BoolVar(p, flagName, *p, usage+" ($"+envName+")")
}
