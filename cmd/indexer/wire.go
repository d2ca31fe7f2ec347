package main

import (
	"context"
	"log/slog"

	"github.com/pkgscope/pkgscope/internal/app"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/resolve"
	"github.com/pkgscope/pkgscope/internal/search"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// indexer is the wired warm queue: the mirror's core (store, registry
// client, Redis fill lock, searcher: app.OpenCore, so both binaries share
// one configuration of the miss path) and fill.New, with the registry,
// store and indexer wrapped to time each job's stages.
type indexer struct {
	core     *app.Core
	st       store.Store
	q        *warm.Queue
	searcher *search.Searcher
}

// open wires the indexer on app.OpenCore.
func open(ctx context.Context, s settings, getenv func(string) string, log *slog.Logger) (*indexer, error) {
	cfg := s.mirror
	// A Postgres pool with room for every worker plus River's own
	// connections (a listener, the producer, the completer and the leader
	// elector hold up to four).
	core, err := app.OpenCore(ctx, cfg, log, getenv, app.CoreOptions{
		UserAgent: "pkgscope-indexer", MinStoreConns: int32(s.warm.Workers) + 4,
		// One cold fill per worker at most: each gets the Postgres lock.
		MinLockConns: int32(s.warm.Workers),
	})
	if err != nil {
		return nil, err
	}
	ix := &indexer{core: core, st: core.Store, searcher: core.Searcher}
	// The searcher reads and writes the unwrapped store, so its time is
	// counted as indexing; it indexes synchronously, so a warmed version is
	// indexed when its job ends.
	reg := warm.TimeRegistry(core.Registry)
	timedIndex := warm.TimeIndexer(core.Searcher)
	fillOpt := core.FillOptions(cfg, log)
	fillOpt.Index = timedIndex
	filler := fill.New(warm.TimeStore(core.Store), reg, fillOpt)
	deps := warm.Deps{Store: core.Store, Fill: filler, Resolve: resolve.New(reg, core.Store), Index: timedIndex, Logger: log}
	if ix.q, err = warm.Open(ctx, core.Store, deps, s.warm); err != nil {
		ix.close()
		return nil, err
	}
	return ix, nil
}

func (ix *indexer) close() {
	if ix.q != nil {
		ix.q.Close()
	}
	ix.core.Close()
}
