package config

import (
	"path/filepath"
	"time"

	"github.com/pkgscope/pkgscope/internal/blobgc"
	"github.com/pkgscope/pkgscope/internal/cache"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/jsdelivr"
	"github.com/pkgscope/pkgscope/internal/lockfile"
	"github.com/pkgscope/pkgscope/internal/pglock"
	"github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/ratelimit"
	"github.com/pkgscope/pkgscope/internal/redisconn"
	"github.com/pkgscope/pkgscope/internal/search"
	"github.com/pkgscope/pkgscope/internal/session"
	"github.com/pkgscope/pkgscope/internal/store/blobcodec"
	"github.com/pkgscope/pkgscope/internal/store/postgres"
	"github.com/pkgscope/pkgscope/internal/upstream"
	"github.com/pkgscope/pkgscope/internal/warm"
	"github.com/pkgscope/pkgscope/internal/webdocs"
)

// Default returns the defaults. The limits of each package come from that
// package's own defaults (upstream.DefaultConfig, ingest.DefaultLimits,
// ...), so they are written once; what is set here is the mirror's own:
// its server, the fill, Redis, tokens and the public services it may ask.
func Default() Config {
	up, ing, ex := upstream.DefaultConfig(), ingest.DefaultLimits(), explore.DefaultLimits()
	so, sl := search.DefaultOptions(""), index.DefaultSearchLimits()
	jc, jf := jsdelivr.DefaultConfig(), jsdelivr.DefaultFallbackOptions()
	rc, co := redisconn.DefaultOptions(), cache.DefaultOptions()
	wv, wl, mdn := webdocs.DefaultVersions(), webdocs.DefaultLimits(), webdocs.DefaultMDNOptions()
	pl := project.DefaultLimits()
	lf := lockfile.DefaultLimits()
	pg := pglock.DefaultOptions()
	gc := blobgc.DefaultOptions()
	return Config{
		Addr:                      "127.0.0.1:7878",
		DataDir:                   defaultDataDir(),
		MaxBodyBytes:              1 << 20,
		MaxWarmBodyBytes:          64 << 20,
		LockfileMaxBytes:          lf.MaxBytes,
		LockfileMaxNodes:          lf.MaxNodes,
		MaxLockfileParses:         warm.DefaultMaxLockfileParses,
		MaxLockfileBytesInFlight:  warm.DefaultLockfileBytesInFlight,
		MaxLockfileBytesPerCaller: warm.DefaultLockfileBytesPerCaller,
		MinUploadBytesPerSecond:   warm.DefaultMinUploadBytesPerSecond,
		MaxWarmQueue:              warm.DefaultMaxWarmQueue,
		MaxFillBytes:              fill.DefaultMaxFillBytes,
		MaxRequestItems:           warm.DefaultConfig().MaxRequestItems,

		RateLimitWarmItems: ratelimit.DefaultItemsPerRequest,
		SessionIdleTimeout: session.DefaultIdleTimeout,
		SessionLifetime:    session.DefaultLifetime,

		MaxProjectPackages:      pl.MaxPackages,
		MaxProjectLockfileBytes: pl.MaxLockfileBytes,
		ProjectWait:             pl.Wait,
		ProjectReadyVersions:    pl.ReadyVersions,
		ReadHeaderTimeout:       10 * time.Second,
		ReadTimeout:             30 * time.Second,
		// 4,096 connections: 8,000 clients each holding 60 KiB of an
		// unfinished header took a mirror from 55 to 883 MiB RSS
		// (docs/RELIABILITY.md); at this cap, 8,000 such clients cost it
		// 527 MiB (4,096 held, ~115 KiB each); nginx in the
		// compose file opens at most its worker_connections, 4,096.
		MaxConnections: 4096,
		// 64 KiB: a REST glob (max-glob-patterns x max-glob-pattern-bytes,
		// 32 KiB) escaped in the URL, beside a token and a cookie.
		MaxHeaderBytes: 64 << 10,
		WriteTimeout:   6 * time.Minute,
		// 30s: a client reading at all takes well under that per 32 KiB.
		StalledClientTimeout: 30 * time.Second,
		// 64 MiB: 7 streams from Postgres (1 MiB chunk + 8 MiB zstd
		// window each) at once; 16 one-line reads of a 128 MiB file peak
		// at 224-288 MiB RSS (docs/RELIABILITY.md).
		MaxBodyBytesInFlight: 64 << 20,
		IdleTimeout:          2 * time.Minute,
		ShutdownTimeout:      30 * time.Second,
		// 100ms: a log line is late by at most a tenth of a second; at
		// 30,000 requests/s (a 2-core mirror's warm reads) that is
		// 3,000 lines, about 400 KiB, so 256 KiB writes about every 60ms.
		LogFlushInterval: 100 * time.Millisecond,
		LogBufferBytes:   256 << 10,
		// Off: a line per request was 10-15% of a warm small read's CPU,
		// with its file or pipe (docs/BENCHMARKS.md, "Load"); errors are
		// logged either way, with their request id, and /metrics counts
		// every request. As Caddy and Traefik, which log access only when
		// asked.
		AccessLog:        false,
		FillTimeout:      5 * time.Minute,
		FailedRetryAfter: fill.DefaultFailedRetryAfter,
		MaxFills:         fill.DefaultMaxFills,
		MaxFillWaiters:   fill.DefaultMaxFillWaiters,
		BlobGCInterval:   gc.Interval,
		BlobGCGrace:      gc.Grace,
		BlobGCBatch:      gc.Batch,

		PackumentTTL: up.PackumentTTL,
		// 2s: a cached answer is instant; a slower fetch goes on in the
		// background (bounded by upstream-timeout) and the next view
		// shows the dates, so the page is never held by a large one.
		PackumentTimesMaxBytes: up.MaxPackumentTimesBytes,
		PackumentTimesTimeout:  2 * time.Second,
		PackumentRefetch:       up.MinRefetchInterval,
		BreakerFailures:        up.BreakerFailures,
		BreakerCooldown:        up.BreakerCooldown,
		UpstreamTimeout:        up.RequestTimeout,
		TarballTimeout:         up.TarballTimeout,
		MaxTarballBytes:        up.MaxTarballBytes,

		MaxUnpackedBytes: ing.MaxUnpackedBytes,
		MaxFiles:         ing.MaxFiles,
		MaxEntries:       ing.MaxEntries,
		MaxFileBytes:     ing.MaxFileBytes,
		CompressWorkers:  blobcodec.DefaultConfig().Workers,

		DefaultReadLimit:     ex.DefaultReadLimit,
		MaxReadLimit:         ex.MaxReadLimit,
		MaxLineWidth:         ex.MaxLineWidth,
		MaxReadBytes:         ex.MaxReadBytes,
		MaxDiffWork:          ex.DiffMaxWork,
		MaxDiffPageWork:      ex.DiffPageWork,
		AnswerBytes:          ex.AnswerBytes,
		ReadAnswerBytes:      ex.ReadAnswerBytes,
		MaxAnswerBytes:       ex.MaxAnswerBytes,
		GrepMatchesPerFile:   ex.MatchesPerFile,
		GrepScopeFiles:       ex.GrepScopeFiles,
		FileTreeFiles:        ex.FileTreeFiles,
		GrepCountTime:        ex.GrepCountTime,
		GrepCountsBeside:     ex.GrepCountsBeside,
		DiffPairFiles:        ex.DiffPairFiles,
		DiffRenderBytes:      int64(ex.DiffRenderBytes),
		DeprecationNoteBytes: ex.DeprecationNoteBytes,
		MaxGlobPatterns:      ex.Glob.MaxPatterns,
		MaxGlobPatternBytes:  ex.Glob.MaxPatternBytes,
		MaxGlobBraceGroups:   ex.Glob.MaxBraceGroups,
		MaxGlobAlternatives:  ex.Glob.MaxAlternatives,
		// 32 KiB and 64 wildcards: the worst request they admit costs
		// 0.08 s of CPU on 20,000 paths (docs/RELIABILITY.md).
		MaxGlobExpandedBytes: ex.Glob.MaxExpandedBytes,
		MaxGlobWildcards:     ex.Glob.MaxWildcards,

		MaxOpenIndexes: so.MaxOpen,
		// 1 GiB maps the midsize app's 406 indexes (226 MB) four times
		// over, or four of npm's largest (next@16.4.6, 232 MB).
		MaxOpenIndexBytes: so.MaxOpenBytes,
		MaxIndexBuilds:    so.MaxBuilds,
		// next@16.4.6, among npm's largest, indexes to 232 MB; 1 GiB keeps
		// room for 4x that and bounds the disk one version can take.
		MaxIndexBytes:          so.Build.MaxIndexBytes,
		IndexCacheBytes:        so.CacheBytes,
		IndexTextCacheBytes:    so.TextCacheBytes,
		IndexSpoolBytes:        so.SpoolBytes,
		IndexSpoolWriteBytes:   so.WriteBackBytes,
		MaxGrepPatternBytes:    sl.MaxPatternBytes,
		DefaultMaxMatches:      sl.DefaultMaxMatches,
		MaxMatches:             sl.MaxMatches,
		MaxContextLines:        sl.MaxContextLines,
		MaxGrepOutputBytes:     sl.MaxOutputBytes,
		GrepLineWindow:         sl.MaxLineWindow,
		GrepWindowsPerLine:     sl.MaxWindowsPerLine,
		GrepLineMatchesCounted: sl.MaxLineMatchesCounted,
		GrepTimeout:            sl.Timeout,

		// jsDelivr's public hosts: a CDN over the public registry, not a
		// registry.
		JSDelivrDataURL:         "https://data.jsdelivr.com",
		JSDelivrCDNURL:          "https://cdn.jsdelivr.net",
		JSDelivrTimeout:         jc.Timeout,
		JSDelivrMaxListingBytes: jc.MaxListingBytes,
		JSDelivrMaxFileBytes:    jc.MaxFileBytes,
		JSDelivrGrepMaxFiles:    jf.GrepMaxFiles,
		JSDelivrGrepMaxBytes:    jf.GrepMaxBytes,
		JSDelivrGrepTimeout:     jf.GrepTimeout,
		// An agent asking for a cold large package gets an answer in 3s
		// instead of the minute an ingest of a 100 MB package can take.
		ColdBudget: 3 * time.Second,

		PGLockConns:          int(pg.Conns),
		PGLockTimeout:        pg.Timeout,
		MigrationLockTimeout: postgres.DefaultOptions().MigrationLockTimeout,

		RedisPrefix:      rc.Prefix,
		RedisDialTimeout: rc.DialTimeout,
		RedisTimeout:     rc.Timeout,
		RedisCooldown:    rc.Cooldown,

		CacheLocalBytes:   co.LocalBytes,
		CacheMaxBodyBytes: co.MaxBodyBytes,
		CacheMaxListBytes: co.MaxListBytes,
		// 32 MiB: ~12,000 answers of the 2.6 KiB file bench/load reads;
		// a raw read answered from them takes ~10% less CPU under load
		// (docs/BENCHMARKS.md, "Load").
		RawAnswerBytes:  32 << 20,
		CacheResolveTTL: co.ResolveTTL,
		CacheRedisTTL:   co.RedisTTL,

		WebDocsBCDVersion:       wv.BCD,
		WebDocsInventoryVersion: wv.Inventory,
		WebDocsIDLVersion:       wv.IDL,
		WebDocsFeaturesVersion:  wv.Features,
		MDNBaseURL:              mdn.BaseURL,
		MDNTimeout:              mdn.Timeout,
		MDNCacheBytes:           mdn.CacheBytes,
		WebDocsMaxQueryBytes:    wl.MaxQueryBytes,
		WebDocsMaxResults:       wl.MaxResults,
		WebDocsMaxDocBytes:      wl.MaxDocBytes,
	}
}

// The one mapping from settings to each package's options: each starts
// from the package's defaults (the settings' defaults came from there, see
// Default) and sets what the mirror makes configurable.

// Project returns the project limits.
func (c Config) Project() project.Limits {
	return project.Limits{MaxPackages: c.MaxProjectPackages, MaxLockfileBytes: c.MaxProjectLockfileBytes, Wait: c.ProjectWait, Lockfile: c.Lockfile(),
		ReadyVersions: c.ProjectReadyVersions}
}

// Upstream is the registry client's configuration; the caller names itself
// in UserAgent.
func (c Config) Upstream() upstream.Config {
	u := upstream.DefaultConfig()
	u.PackumentTTL, u.MinRefetchInterval = c.PackumentTTL, c.PackumentRefetch
	u.MaxPackumentTimesBytes = c.PackumentTimesMaxBytes
	u.BreakerFailures, u.BreakerCooldown = c.BreakerFailures, c.BreakerCooldown
	u.RequestTimeout, u.TarballTimeout = c.UpstreamTimeout, c.TarballTimeout
	u.MaxTarballBytes, u.AllowedTarballHosts = c.MaxTarballBytes, c.AllowedTarballHosts
	return u
}

// Lockfile bounds a lockfile parse of POST /v1/warm.
func (c Config) Lockfile() lockfile.Limits {
	l := lockfile.DefaultLimits()
	l.MaxBytes, l.MaxNodes = c.LockfileMaxBytes, c.LockfileMaxNodes
	return l
}

// Ingest is the ingest caps.
func (c Config) Ingest() ingest.Limits {
	l := ingest.DefaultLimits()
	l.MaxUnpackedBytes, l.MaxFiles, l.MaxEntries, l.MaxFileBytes = c.MaxUnpackedBytes, c.MaxFiles, c.MaxEntries, c.MaxFileBytes
	return l
}

// BlobGC is the blob collector's schedule (without a Logger).
func (c Config) BlobGC() blobgc.Options {
	o := blobgc.DefaultOptions()
	o.Interval, o.Grace, o.Batch = c.BlobGCInterval, c.BlobGCGrace, c.BlobGCBatch
	return o
}

// Fill is the miss path's options without its Lock, Index and Logger,
// which the caller wires.
func (c Config) Fill() fill.Options {
	return fill.Options{Timeout: c.FillTimeout, FailedRetryAfter: c.FailedRetryAfter, Ingest: c.Ingest()}
}

// FillSlots bound the mirror's cold fills in flight (max-fills,
// max-fill-waiters): one set per process, for Options.Slots of the
// chains that share it.
func (c Config) FillSlots() *fill.Slots { return fill.NewSlots(c.MaxFills, c.MaxFillWaiters) }

// GrepLimits bound every grep, of a stored version and of one answered
// from jsDelivr alike, so the two differ only in what was fetched.
func (c Config) GrepLimits() index.SearchLimits {
	l := index.DefaultSearchLimits()
	l.MaxPatternBytes = c.MaxGrepPatternBytes
	l.DefaultMaxMatches, l.MaxMatches = c.DefaultMaxMatches, c.MaxMatches
	l.MaxContextLines, l.MaxOutputBytes = c.MaxContextLines, c.MaxGrepOutputBytes
	l.MaxLineWindow, l.Timeout = c.GrepLineWindow, c.GrepTimeout
	l.MaxWindowsPerLine, l.MaxLineMatchesCounted = c.GrepWindowsPerLine, c.GrepLineMatchesCounted
	return l
}

// Search is the searcher's options: indexes cached under IndexDir, or
// DataDir/indexes.
func (c Config) Search() search.Options {
	dir := c.IndexDir
	if dir == "" {
		dir = filepath.Join(c.DataDir, "indexes")
	}
	o := search.DefaultOptions(dir)
	o.MaxOpen, o.MaxOpenBytes, o.MaxBuilds, o.Search = c.MaxOpenIndexes, c.MaxOpenIndexBytes, c.MaxIndexBuilds, c.GrepLimits()
	o.CacheBytes, o.Build.MaxIndexBytes, o.SpoolBytes = c.IndexCacheBytes, c.MaxIndexBytes, c.IndexSpoolBytes
	o.TextCacheBytes, o.WriteBackBytes = c.IndexTextCacheBytes, c.IndexSpoolWriteBytes
	return o
}

// Explore is the explore service's read, glob and grep request limits.
func (c Config) Explore() explore.Limits {
	l := explore.DefaultLimits()
	l.DefaultReadLimit, l.MaxReadLimit, l.MaxLineWidth, l.MaxReadBytes = c.DefaultReadLimit, c.MaxReadLimit, c.MaxLineWidth, c.MaxReadBytes
	l.MaxMatches, l.MaxContextLines = c.MaxMatches, c.MaxContextLines
	l.DiffMaxWork, l.DiffPageWork = c.MaxDiffWork, c.MaxDiffPageWork
	l.AnswerBytes, l.ReadAnswerBytes, l.MaxAnswerBytes = c.AnswerBytes, c.ReadAnswerBytes, c.MaxAnswerBytes
	l.MatchesPerFile, l.DeprecationNoteBytes = c.GrepMatchesPerFile, c.DeprecationNoteBytes
	l.GrepScopeFiles, l.DiffPairFiles, l.GrepCountTime, l.GrepCountsBeside = c.GrepScopeFiles, c.DiffPairFiles, c.GrepCountTime, c.GrepCountsBeside
	l.FileTreeFiles, l.DiffRenderBytes = c.FileTreeFiles, int(c.DiffRenderBytes)
	l.Glob.MaxPatterns, l.Glob.MaxPatternBytes = c.MaxGlobPatterns, c.MaxGlobPatternBytes
	l.Glob.MaxBraceGroups, l.Glob.MaxAlternatives = c.MaxGlobBraceGroups, c.MaxGlobAlternatives
	l.Glob.MaxExpandedBytes, l.Glob.MaxWildcards = c.MaxGlobExpandedBytes, c.MaxGlobWildcards
	return l
}

// JSDelivr is the jsDelivr client's configuration.
func (c Config) JSDelivr() jsdelivr.Config {
	j := jsdelivr.DefaultConfig()
	j.DataURL, j.CDNURL, j.Timeout = c.JSDelivrDataURL, c.JSDelivrCDNURL, c.JSDelivrTimeout
	j.MaxListingBytes, j.MaxFileBytes = c.JSDelivrMaxListingBytes, c.JSDelivrMaxFileBytes
	return j
}

// Fallback is the jsDelivr fallback's budgets; the caller sets Public.
func (c Config) Fallback() jsdelivr.FallbackOptions {
	f := jsdelivr.DefaultFallbackOptions()
	f.GrepMaxFiles, f.GrepMaxBytes, f.GrepTimeout = c.JSDelivrGrepMaxFiles, c.JSDelivrGrepMaxBytes, c.JSDelivrGrepTimeout
	f.Search = c.GrepLimits()
	return f
}

// PGLock is the Postgres fill lock's options.
func (c Config) PGLock() pglock.Options {
	o := pglock.DefaultOptions()
	o.Conns, o.Timeout = int32(c.PGLockConns), c.PGLockTimeout
	return o
}

// Redis is the Redis connection's options (without a Logger).
func (c Config) Redis() redisconn.Options {
	r := redisconn.DefaultOptions()
	r.URL, r.Prefix = c.RedisURL, c.RedisPrefix
	r.DialTimeout, r.Timeout, r.Cooldown = c.RedisDialTimeout, c.RedisTimeout, c.RedisCooldown
	return r
}

// Cache is the cache's options.
func (c Config) Cache() cache.Options {
	o := cache.DefaultOptions()
	o.LocalBytes, o.MaxBodyBytes, o.MaxListBytes = c.CacheLocalBytes, c.CacheMaxBodyBytes, c.CacheMaxListBytes
	o.ResolveTTL, o.RedisTTL = c.CacheResolveTTL, c.CacheRedisTTL
	return o
}

// WebDocs is explore_web_docs' options (without a Logger or HTTP client).
// Loading its packages may fill them cold, so it gets fill-timeout.
func (c Config) WebDocs() webdocs.Options {
	lim := webdocs.DefaultLimits()
	lim.MaxQueryBytes, lim.MaxResults, lim.MaxDocBytes = c.WebDocsMaxQueryBytes, c.WebDocsMaxResults, c.WebDocsMaxDocBytes
	lim.DefaultResults = min(lim.DefaultResults, lim.MaxResults)
	lim.LoadTimeout = c.FillTimeout
	mdn := webdocs.DefaultMDNOptions()
	mdn.BaseURL, mdn.Timeout, mdn.CacheBytes = c.MDNBaseURL, c.MDNTimeout, c.MDNCacheBytes
	return webdocs.Options{
		Versions: webdocs.Versions{BCD: c.WebDocsBCDVersion, Inventory: c.WebDocsInventoryVersion, IDL: c.WebDocsIDLVersion, Features: c.WebDocsFeaturesVersion},
		Limits:   lim, MDN: mdn,
	}
}
