package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/resolve"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/postgres"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/upstream"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// indexer is the wired warm queue: the mirror's store, registry client
// and miss path (fill.New, the one ingest implementation), with the
// registry and store wrapped to time each job's stages.
type indexer struct {
	st store.Store
	q  *warm.Queue
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
	filler := fill.New(warm.TimeStore(st), reg, fill.Options{Timeout: cfg.FillTimeout, Ingest: lim, Logger: log})
	q, err := warm.Open(ctx, st, warm.Deps{Store: st, Fill: filler, Resolve: resolve.New(reg, st), Logger: log}, s.warm)
	if err != nil {
		st.Close()
		return nil, err
	}
	return &indexer{st: st, q: q}, nil
}

func (ix *indexer) close() {
	ix.q.Close()
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
