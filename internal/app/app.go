// Package app wires the mirror from its configuration: store, registry
// client, resolver, miss path, explore service and HTTP API. cmd/mirror
// calls Serve; tests call New and mount Handler on an httptest server.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/pkgscope/pkgscope/internal/api"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/pathglob"
	"github.com/pkgscope/pkgscope/internal/resolve"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/postgres"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// App is a wired mirror.
type App struct {
	Store   store.Store
	Service *explore.Service
	handler http.Handler
}

// New wires a mirror. getenv is os.Getenv outside tests; it feeds npm's
// configuration (npm_config_registry and friends).
func New(ctx context.Context, cfg config.Config, log *slog.Logger, getenv func(string) string) (*App, error) {
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	npm, err := npmrc.Load(cfg.ProjectDir, getenv)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("reading npm configuration: %w", err)
	}
	reg := upstream.New(npm, upstream.Config{
		PackumentTTL:        cfg.PackumentTTL,
		RequestTimeout:      cfg.UpstreamTimeout,
		TarballTimeout:      cfg.TarballTimeout,
		MaxPackumentBytes:   upstream.DefaultConfig().MaxPackumentBytes,
		MaxTarballBytes:     cfg.MaxTarballBytes,
		AllowedTarballHosts: cfg.AllowedTarballHosts,
		UserAgent:           "pkgscope",
	}, &http.Client{})
	lim := ingest.DefaultLimits()
	lim.MaxUnpackedBytes, lim.MaxFiles, lim.MaxEntries, lim.MaxFileBytes = cfg.MaxUnpackedBytes, cfg.MaxFiles, cfg.MaxEntries, cfg.MaxFileBytes
	filler := fill.New(st, reg, fill.Options{Timeout: cfg.FillTimeout, Ingest: lim, Logger: log})
	svc := explore.New(st, resolve.New(reg, st), filler, explore.Limits{
		DefaultReadLimit: cfg.DefaultReadLimit,
		MaxReadLimit:     cfg.MaxReadLimit,
		MaxLineWidth:     cfg.MaxLineWidth,
		MaxReadBytes:     cfg.MaxReadBytes,
		Glob: pathglob.Limits{
			MaxPatterns:     cfg.MaxGlobPatterns,
			MaxPatternBytes: cfg.MaxGlobPatternBytes,
			MaxBraceGroups:  cfg.MaxGlobBraceGroups,
			MaxAlternatives: cfg.MaxGlobAlternatives,
		},
	})
	h := api.New(svc, st, api.Options{MaxBodyBytes: cfg.MaxBodyBytes, Logger: log})
	return &App{Store: st, Service: svc, handler: h}, nil
}

func openStore(ctx context.Context, cfg config.Config) (store.Store, error) {
	if cfg.DatabaseURL != "" {
		st, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.Options{})
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

// Handler serves the HTTP API.
func (a *App) Handler() http.Handler { return a.handler }

// Close releases the store.
func (a *App) Close() error { return a.Store.Close() }

// Serve runs the mirror until ctx is done, then shuts down gracefully,
// giving in-flight requests cfg.ShutdownTimeout.
func Serve(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	a, err := New(ctx, cfg, log, os.Getenv)
	if err != nil {
		return err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s (setting addr): %w", cfg.Addr, err)
	}
	srv := &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	storeKind := "embedded (" + cfg.DataDir + ")"
	if cfg.DatabaseURL != "" {
		storeKind = "postgres"
	}
	log.Info("mirror listening", "addr", "http://"+ln.Addr().String(), "store", storeKind)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
