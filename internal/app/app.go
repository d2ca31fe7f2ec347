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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/net/netutil"

	"github.com/pkgscope/pkgscope/internal/api"
	"github.com/pkgscope/pkgscope/internal/auth"
	"github.com/pkgscope/pkgscope/internal/blobgc"
	"github.com/pkgscope/pkgscope/internal/cache"
	"github.com/pkgscope/pkgscope/internal/closest"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/jsdelivr"
	"github.com/pkgscope/pkgscope/internal/metrics"
	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/popular"
	"github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/ratelimit"
	"github.com/pkgscope/pkgscope/internal/redisconn"
	"github.com/pkgscope/pkgscope/internal/redislock"
	"github.com/pkgscope/pkgscope/internal/resolve"
	"github.com/pkgscope/pkgscope/internal/search"
	"github.com/pkgscope/pkgscope/internal/session"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/upstream"
	"github.com/pkgscope/pkgscope/internal/version"
	"github.com/pkgscope/pkgscope/internal/warm"
	"github.com/pkgscope/pkgscope/internal/webdocs"
)

// App is a wired mirror.
type App struct {
	Store   store.Store
	Service *explore.Service
	// Cache fronts the store and the resolver; its Stats feed metrics.
	Cache *cache.Cache
	// WebDocs is the explore_web_docs service (POST /v1/webdocs and the
	// MCP tool); Warm loads its data packages ahead of the first call.
	WebDocs *webdocs.Service
	// Lock is the cross-replica fill lock, RateLimit the per-caller
	// limiter; nil without Redis (RateLimit also when limits are off).
	Lock      *redislock.Locker
	RateLimit *ratelimit.Limiter
	// Metrics is the Prometheus registry and its recorders; Tokens the
	// accepted bearer tokens (empty: the API is open).
	Metrics *metrics.Metrics
	Tokens  *auth.Set
	// Warm is the durable warm-job queue: POST /v1/warm submits to it and
	// a miss the registry could not serve leaves a job in it. Its workers
	// run in this process with the embedded store (or with
	// --warm-in-process); with Postgres, `indexer worker` runs them.
	Warm        *warm.Queue
	warmStarted bool
	// Projects are registered lockfiles (POST /v1/projects).
	Projects *project.Service
	// Explorer is Service answering project requests too (what /v1/explore
	// and /mcp answer; `mirror mcp` serves it over stdio).
	Explorer explore.Explorer
	grace    time.Duration // cfg.ShutdownTimeout, for Close
	// closeBy, set by Serve when shutdown begins, is when Close must be
	// done: the requests in flight, the warm jobs and the fills share one
	// shutdown-timeout rather than each taking all of it.
	closeBy time.Time
	// stopGC ends the blob collector's schedule (blobgc.Run); Close
	// waits for its pass in flight on gcDone before closing the store.
	stopGC   context.CancelFunc
	gcDone   chan struct{}
	core     *Core
	redis    *redisconn.Conn
	searcher *search.Searcher
	// sessions are the web page's logins (internal/session).
	sessions *session.Manager
	handler  http.Handler
}

// New wires a mirror. getenv is os.Getenv outside tests; it feeds npm's
// configuration (npm_config_registry and friends).
func New(ctx context.Context, cfg config.Config, log *slog.Logger, getenv func(string) string) (*App, error) {
	tokens, err := auth.Load(cfg.TokensFile, string(cfg.Tokens))
	if err != nil {
		return nil, err
	}
	m := metrics.New()
	core, err := OpenCore(ctx, cfg, log, getenv, CoreOptions{
		UserAgent: "pkgscope", RegistryTransport: m.Transport("registry", nil), ObserveIndex: m.ObserveIndexBuild,
	})
	if err != nil {
		return nil, err
	}
	st, reg, npm, searcher := core.Store, core.Registry, core.NPM, core.Searcher
	a := &App{Store: st, Metrics: m, Tokens: tokens, core: core, grace: cfg.ShutdownTimeout, Lock: core.Lock, redis: core.Redis, searcher: searcher}
	fillOpt := core.FillOptions(cfg, log)
	// Metrics (api.Options.Observe) see every request, the body limit's
	// refusals too; auth before rate limits, so these may key callers by
	// verified token.
	a.sessions = session.New(st, tokens, session.Options{
		IdleTimeout: cfg.SessionIdleTimeout, Lifetime: cfg.SessionLifetime, Secure: strings.HasPrefix(cfg.PublicURL, "https://"),
	})
	mw := []echo.MiddlewareFunc{auth.Middleware(tokens, webAuth(a.sessions))}
	if tokens.Len() == 0 {
		mw = append(mw, api.HostGuard(cfg.AllowedHosts, cfg.AllowedOrigins))
	} else {
		// Keeps answers to verified callers out of shared caches; without
		// tokens no caller is verified.
		mw = append(mw, api.PrivateAnswers)
	}
	// Callers are keyed by token only when auth, placed before this
	// middleware, has verified it; else by client IP.
	if a.RateLimit = ratelimit.New(a.redis, ratelimit.Options{PerMinute: cfg.RateLimitPerMinute, Burst: cfg.RateLimitBurst, KeyByToken: tokens.Len() > 0, ItemsPerRequest: cfg.RateLimitWarmItems}); a.RateLimit != nil {
		mw = append(mw, a.RateLimit.Middleware())
		m.WatchRateLimit(a.RateLimit.Stats)
	}
	a.Cache = cache.New(a.redis, cfg.Cache())
	m.WatchCache(a.Cache.Stats)
	m.WatchFillLocks(core.LockStats())
	fillOpt.Index = searcher.Later(cfg.FillTimeout)
	fillOpt.Slots = cfg.FillSlots()
	m.WatchFillSlots(fillOpt.Slots.Stats)
	m.WatchUpstreamDropped(reg.Dropped)
	m.WatchFillBudget(fillOpt.Budget.Stats)
	resolver := resolve.New(reg, st)
	var filler fill.Filler = m.Filler(fill.New(st, reg, fillOpt))
	// Warm jobs share the miss path but wait for the index, so a warmed
	// version is greppable when its job ends. They take no fill slot:
	// their workers (8) bound their count, and sharing the callers'
	// slots would let a stampede of misses starve the queue, or refuse
	// its jobs. Their bytes come from the one budget every fill takes
	// from (fillOpt.Budget, max-fill-bytes): without one (before
	// 2026-12-02) warming a midsize app's 406 packages held nine 90-140
	// MB @next/swc binaries at once, 2.3 GiB RSS (754 MiB with it); with
	// one for warm jobs only, four callers' cold 200 MiB versions took
	// 1.9 GiB (issue 25 §1).
	warmFill := fillOpt
	warmFill.Index = searcher
	warmFill.Slots = nil
	// The mirror's callers queue work anyone with a token may ask for:
	// the queue is bounded (max-warm-queue), and so is one request
	// (max-request-items).
	wc := warm.DefaultConfig()
	wc.MaxQueued, wc.MaxRequestItems = cfg.MaxWarmQueue, cfg.MaxRequestItems
	if a.Warm, err = warm.Open(ctx, st, warm.Deps{
		Fill: fill.New(st, warm.TimeRegistry(reg), warmFill), Resolve: resolver, Index: searcher, Logger: log,
	}, wc); err != nil {
		a.Close()
		return nil, err
	}
	if cfg.DatabaseURL == "" || cfg.WarmInProcess {
		if err := a.Warm.Start(context.WithoutCancel(ctx)); err != nil {
			a.Close()
			return nil, err
		}
		a.warmStarted = true
	}
	m.WatchQueue(a.Warm.Depth)
	// Every replica schedules the blob collector; the store runs one pass
	// per interval between them (store.BlobCollector).
	gcOpt := cfg.BlobGC()
	gcOpt.Logger = log
	gcCtx, stopGC := context.WithCancel(context.WithoutCancel(ctx))
	a.stopGC, a.gcDone = stopGC, make(chan struct{})
	go func() {
		defer close(a.gcDone)
		blobgc.Run(gcCtx, st, gcOpt)
	}()
	// A miss the registry could not serve now leaves a durable job, so
	// the version arrives when the registry recovers.
	filler = warm.OnMiss(filler, a.Warm, log)
	// Outermost, so that Close waits for the wrappers too: OnMiss queues
	// into a.Warm, which Close closes after the fills have ended.
	filler = core.Fills.Track(filler)
	// The miss path (filler) reads the store itself; serving reads go
	// through the cache.
	// The read chain (explore's package comment): access → fallback →
	// core. Access is always the first link: without tokens no caller has
	// an identity and it lets everything through.
	ropt := explore.Options{
		Store: a.Cache.Reader(st), Resolver: a.Cache.Resolver(resolver), Filler: filler, Searcher: searcher,
		Packuments: reg, Access: scopeAccess(npm), Limits: cfg.Explore(),
		Suggester: suggester{reg: reg, st: st, allow: scopeAccess(npm), popular: shippedPopular()},
		BrowseURL: strings.TrimSuffix(cfg.PublicURL, "/"),
		Streams:   st, WholeBodyBytes: cfg.CacheMaxBodyBytes, MaxBodyBytesInFlight: cfg.MaxBodyBytesInFlight,
	}
	if cfg.JSDelivrEnabled() {
		fb, err := newFallback(cfg, npm, &http.Client{Transport: m.Transport("jsdelivr", nil)})
		if err != nil {
			a.Close()
			return nil, err
		}
		ropt.Fallback = fb
		ropt.FallbackOptions = explore.FallbackOptions{ColdBudget: cfg.ColdBudget, Source: explore.SourceJSDelivr, Logger: log}
	}
	svc := explore.New(ropt)
	a.Service = svc
	a.WebDocs = newWebDocs(svc.StoreOnly(), ropt.Access, cfg, log, &http.Client{Transport: m.Transport("mdn", nil)})
	// The project service checks access itself, for every package at once.
	// One set of lockfile parse slots for warm requests and projects.
	parses := warm.NewParseSlots(cfg.MaxLockfileParses)
	a.Projects = project.New(st, a.Warm, ropt.Access, cfg.Project(), parses)
	// explore_npm with "project": the tree's packages read through svc's
	// chain, so each one passes the access check; the API and /mcp hand
	// project requests to it (explore.WithProjects).
	projects := project.NewExplorer(a.Projects, svc, project.ExplorerLimits{
		Glob: cfg.Explore().Glob, DefaultMatches: cfg.DefaultMaxMatches, MaxMatches: cfg.MaxMatches,
	})
	a.Explorer = explore.WithProjects(svc, projects)
	e := api.New(svc, st, api.Options{
		MaxBodyBytes: cfg.MaxBodyBytes, OwnBodyLimit: []string{"/v1/warm", "/v1/projects"},
		Logger: log, AccessLog: cfg.AccessLog, Observe: m.Middleware(), Middleware: mw, WebDocs: a.WebDocs, StallTimeout: cfg.StalledClientTimeout, Projects: projects,
		ReadTimeout:    cfg.ReadTimeout,
		DiffPageBytes:  cfg.MaxAnswerBytes,
		RawAnswerBytes: cfg.RawAnswerBytes,
		MCP:            api.MCPOptions{Projects: a.Projects, Structured: cfg.MCPStructured},
	})
	// Lockfile bodies are received within one byte budget, then parsed
	// within the parse slots: a slow body holds no slot.
	bodies := warm.NewBodyBudget(warm.BodyLimits{
		Total: cfg.MaxLockfileBytesInFlight, PerCaller: cfg.MaxLockfileBytesPerCaller, MaxBody: cfg.MaxWarmBodyBytes,
		Wait: cfg.ReadTimeout, MinRate: cfg.MinUploadBytesPerSecond,
	})
	wh := warm.NewHandlers(checkedWarm{a.Warm, ropt.Access}, cfg.Lockfile(), parses, bodies)
	warmBody := middleware.BodyLimit(strconv.FormatInt(cfg.MaxWarmBodyBytes, 10) + "B")
	wh.Register(e, warmBody)
	project.NewHandlers(a.Projects, bodies).Register(e, warmBody)
	a.mountWeb(e, svc, wh, reg, ropt.Access, cfg.PackumentTimesTimeout)
	if cfg.MetricsAddr == "" {
		// Behind the tokens, like every route; with metrics-addr it is
		// served only there (serveSide).
		e.GET("/metrics", echo.WrapHandler(m.Handler()))
	}
	a.handler = e
	return a, nil
}

// newFallback builds the jsDelivr fallback. Its grep searches with the
// same limits as the stored grep (config.GrepLimits), so answers differ
// only in what was fetched. Packages whose scope has a registry of its own in
// .npmrc are private: they are never sent to jsDelivr.
func newFallback(cfg config.Config, npm *npmrc.Config, hc *http.Client) (*jsdelivr.Fallback, error) {
	c, err := jsdelivr.New(cfg.JSDelivr(), hc)
	if err != nil {
		return nil, fmt.Errorf("setting up the jsDelivr fallback: %w", err)
	}
	opt := cfg.Fallback()
	opt.Public = func(name string) bool { return npm.RegistryFor(name) == npm.Registry() }
	return jsdelivr.NewFallback(c, opt), nil
}

// Handler serves the HTTP API.
func (a *App) Handler() http.Handler { return a.handler }

// Searcher is the mirror's search indexer: explore's benchmarks time its
// index search beside the answer built on it.
func (a *App) Searcher() *search.Searcher { return a.searcher }

// EnsureIndex returns once name@version's full search index is built and
// stored, building it or joining the build under way (the first grep of a
// version is answered from a scan index while it builds behind it).
func (a *App) EnsureIndex(ctx context.Context, name, version string) error {
	_, err := a.searcher.Ensure(ctx, name, version)
	return err
}

// Close stops the blob collector, the warm queue's workers and the fills
// in flight, then closes the warm queue and releases the searcher, Redis
// and the store (Core.Close). Running jobs and fills share one shutdown
// grace, then are cancelled: a fill outlives the request that started it,
// and writes to the store and (warm.OnMiss) to the queue until it ends.
func (a *App) Close() error {
	var errs []error
	if a.stopGC != nil {
		a.stopGC()
		<-a.gcDone
	}
	by := a.closeBy
	if by.IsZero() {
		by = time.Now().Add(a.grace)
	}
	ctx, cancel := context.WithDeadline(context.Background(), by)
	defer cancel()
	if a.Warm != nil && a.warmStarted {
		// Cancelled jobs run again later: a job may take minutes.
		errs = append(errs, a.Warm.Stop(ctx))
	}
	// After the jobs, whose fills it would refuse; a fill cut short
	// leaves its warm job in the queue, still open (warm.OnMiss).
	a.core.Fills.Close(ctx)
	if a.Warm != nil {
		errs = append(errs, a.Warm.Close())
	}
	return errors.Join(append(errs, a.core.Close())...)
}

// Serve runs the mirror until ctx is done, then shuts down gracefully
// within cfg.ShutdownTimeout: the requests in flight, then (Close) the
// warm jobs and the fills still running share it.
func Serve(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	// The first line of every log says which build wrote it.
	build := version.Get()
	log.Info(version.Name+" starting", "version", build.Version, "commit", build.Commit, "go", build.Go)
	if cfg.PublicURL == "" {
		cfg.PublicURL = loopbackURL(cfg.Addr)
	}
	a, err := New(ctx, cfg, log, os.Getenv)
	if err != nil {
		return err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s (setting addr): %w", cfg.Addr, err)
	}
	// Past max-connections the next connection waits to be accepted: a
	// client holding connections open with unfinished headers (no token
	// needed) costs at most that many connections' buffers.
	ln = netutil.LimitListener(ln, cfg.MaxConnections)
	srv := &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
	}
	_, stopSide, err := serveSide(cfg, a.Metrics, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopSide()
	log.Info("pkgscope listening", a.startupAttrs(cfg, ln.Addr().String())...)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", cfg.ShutdownTimeout)
	a.closeBy = time.Now().Add(cfg.ShutdownTimeout)
	sctx, cancel := context.WithDeadline(context.Background(), a.closeBy)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loopbackURL is the web page's address for a mirror listening on a
// loopback address (a laptop), "" for any other: behind a load balancer
// only public-url can say how users reach it.
func loopbackURL(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
		return "http://" + addr
	}
	return ""
}

// scopeAccess lets a verified caller read a package only as its token
// allows: a scope with a registry of its own in npm's configuration is
// private, and served only to tokens that list it (auth.AllowsPackage).
func scopeAccess(npm *npmrc.Config) func(ctx context.Context, name string) error {
	return func(ctx context.Context, name string) error {
		id, ok := auth.IdentityFrom(ctx)
		if !ok {
			return nil // a route without auth (none serves packages) or an in-process caller
		}
		private := npm.RegistryFor(name) != npm.Registry()
		if id.AllowsPackage(name, private) {
			return nil
		}
		why := "its scopes are " + strings.Join(id.Scopes, ", ")
		if private {
			why = "the scope has its own registry, and the token does not list it"
		}
		return &explore.ForbiddenError{Name: name, Why: why}
	}
}

// suggester names the packages closest to one the registry does not know:
// what the registry's search finds and what the store holds with a name
// close to it, leaving out names the caller may not read.
type suggester struct {
	reg   *upstream.Client
	st    store.Catalog
	allow explore.Access
	// popular are the most-used packages, most used first
	// (data/popular.json): a misspelling of one ("lodahs") is its own
	// package on the registry, often an empty placeholder, and the
	// registry's search ranks it above the package meant.
	popular []string
}

// shippedPopular is the shipped popular list's names, nil if it does not
// parse (a build without it still suggests from the registry and store).
func shippedPopular() []string {
	l, err := popular.Shipped()
	if err != nil {
		return nil
	}
	return l.Top(len(l.Packages))
}

func (s suggester) Suggest(ctx context.Context, name string) ([]string, error) {
	// The popular names nearest first: a typo of a much-used package
	// means that package more often than any other at the same distance.
	near := closest.Strings(name, s.popular, 5)
	found, err := s.reg.Search(ctx, name, 20)
	// The store's names sharing the first two thirds of the name: a typo
	// is usually near its end ("lucide-reactt").
	held, _ := s.st.Names(ctx, name[:max(min(3, len(name)), len(name)*2/3)], 50)
	var out []string
	for _, n := range slices.Concat(near, found, held) {
		if s.allow(ctx, n) == nil {
			out = append(out, n)
		}
	}
	if len(out) == 0 && err != nil {
		return nil, err
	}
	return out, nil
}
