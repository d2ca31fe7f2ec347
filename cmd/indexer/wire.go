package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/redisconn"
	"github.com/pkgscope/pkgscope/internal/redislock"
	"github.com/pkgscope/pkgscope/internal/resolve"
	"github.com/pkgscope/pkgscope/internal/search"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/postgres"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/upstream"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// indexer is the wired warm queue: the mirror's store, registry client
// and miss path (fill.New, the one ingest and index implementation, with
// the Redis fill lock when configured), with the registry, store and
// indexer wrapped to time each job's stages.
type indexer struct {
	st       store.Store
	q        *warm.Queue
	searcher *search.Searcher
	redis    *redisconn.Conn
}

// open wires the indexer as app.New wires the mirror.
func open(ctx context.Context, s settings, getenv func(string) string, log *slog.Logger) (*indexer, error) {
	cfg := s.mirror
	st, err := openStore(ctx, cfg, s.warm.Workers)
	if err != nil {
		return nil, err
	}
	npm, err := npmrc.Load(cfg.ProjectDir, getenv)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("reading npm configuration: %w", err)
	}
	up := upstream.New(npm, upstream.Config{
		PackumentTTL:        cfg.PackumentTTL,
		RequestTimeout:      cfg.UpstreamTimeout,
		TarballTimeout:      cfg.TarballTimeout,
		MaxPackumentBytes:   upstream.DefaultConfig().MaxPackumentBytes,
		MaxTarballBytes:     cfg.MaxTarballBytes,
		AllowedTarballHosts: cfg.AllowedTarballHosts,
		UserAgent:           "pkgscope-indexer",
	}, &http.Client{})
	lim := ingest.DefaultLimits()
	lim.MaxUnpackedBytes, lim.MaxFiles, lim.MaxEntries, lim.MaxFileBytes = cfg.MaxUnpackedBytes, cfg.MaxFiles, cfg.MaxEntries, cfg.MaxFileBytes
	reg := warm.TimeRegistry(up)
	ix := &indexer{st: st}
	fillOpt := fill.Options{Timeout: cfg.FillTimeout, Ingest: lim, Logger: log}
	if cfg.RedisURL != "" {
		// The mirror's cross-replica fill lock, so a warm job and a
		// mirror replica never download one version at once.
		ix.redis, err = redisconn.Open(redisconn.Options{
			URL: cfg.RedisURL, Prefix: cfg.RedisPrefix, Logger: log,
			DialTimeout: cfg.RedisDialTimeout, Timeout: cfg.RedisTimeout, Cooldown: cfg.RedisCooldown,
		})
		if err != nil {
			ix.close()
			return nil, err
		}
		fillOpt.Lock = redislock.New(ix.redis, redislock.Options{TTL: cfg.LockTTL(), PollMin: 50 * time.Millisecond, PollMax: time.Second})
	}
	// The searcher reads and writes the unwrapped store, so its time is
	// counted as indexing; it indexes synchronously, so a warmed version is
	// indexed when its job ends.
	sopt := search.DefaultOptions(cfg.IndexDir)
	if sopt.Dir == "" {
		sopt.Dir = filepath.Join(cfg.DataDir, "indexes")
	}
	sopt.MaxOpen, sopt.Logger = cfg.MaxOpenIndexes, log
	if ix.searcher, err = search.New(st, sopt); err != nil {
		ix.close()
		return nil, fmt.Errorf("setting up search indexing: %w", err)
	}
	timedIndex := warm.TimeIndexer(ix.searcher)
	fillOpt.Index = timedIndex
	filler := fill.New(warm.TimeStore(st), reg, fillOpt)
	deps := warm.Deps{Store: st, Fill: filler, Resolve: resolve.New(reg, st), Index: timedIndex, Logger: log}
	if ix.q, err = warm.Open(ctx, st, deps, s.warm); err != nil {
		ix.close()
		return nil, err
	}
	return ix, nil
}

func (ix *indexer) close() {
	if ix.q != nil {
		ix.q.Close()
	}
	if ix.searcher != nil {
		ix.searcher.Close()
	}
	if ix.redis != nil {
		ix.redis.Close()
	}
	ix.st.Close()
}

// openStore opens the store the mirror's configuration names (as
// internal/app does). A Postgres pool gets room for every worker plus
// River's own connections (a listener, the producer, the completer and
// the leader elector hold up to four).
func openStore(ctx context.Context, cfg config.Config, workers int) (store.Store, error) {
	if cfg.DatabaseURL != "" {
		conns := max(postgres.DefaultOptions().MaxConns, int32(workers)+4)
		st, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.Options{MaxConns: conns})
		if err != nil {
			return nil, fmt.Errorf("opening the Postgres store: %w", err)
		}
		return st, nil
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data-dir: %w", err)
	}
	st, err := sqlite.Open(ctx, cfg.DataDir, sqlite.Options{})
	if err != nil {
		return nil, fmt.Errorf("opening the embedded store in %s: %w", cfg.DataDir, err)
	}
	return st, nil
}
