// Package metrics is the mirror's Prometheus instrumentation: one registry
// per App (no global state, so tests can run several mirrors in one
// process), served at /metrics, and the decorators that feed it. Every
// series is named pkgscope_*:
//
//	pkgscope_http_request_duration_seconds{route,action,status}  histogram  Middleware
//	pkgscope_upstream_requests_total{source,outcome}             counter    Transport, CountUpstream
//	pkgscope_upstream_request_duration_seconds{source}           histogram  Transport
//	pkgscope_fill_duration_seconds{outcome}                      histogram  Filler (ingest: fetch, verify, unpack, commit)
//	pkgscope_index_build_duration_seconds{outcome}               histogram  ObserveIndexBuild
//	pkgscope_cache_requests_total{layer,result}                  counter    WatchCache (read at scrape time)
//	pkgscope_cache_hit_ratio{layer}                              gauge      WatchCache (since start)
//	pkgscope_ratelimit_requests_total{result}                    counter    WatchRateLimit
//	pkgscope_warm_queue_depth                                    gauge      WatchQueue
//	pkgscope_fill_lock_{acquired,waits,handoffs}_total{lock}     counter    WatchFillLocks (redis, postgres)
//	pkgscope_fill_lock_{wait_timeouts,unavailable}_total{lock}   counter    WatchFillLocks
//	pkgscope_fill_lock_busy_total{lock="postgres"}               counter    WatchFillLocks (past pg-lock-conns)
//	pkgscope_fill_slots, pkgscope_fill_slots_in_use              gauge      WatchFillSlots (max-fills)
//	pkgscope_fill_slot_waiters                                   gauge      WatchFillSlots (max-fill-waiters)
//	pkgscope_fill_slot_refusals_total                            counter    WatchFillSlots (503 past both)
//	pkgscope_upstream_dropped_total{kind}                        counter    WatchUpstreamDropped (not semver)
//	pkgscope_fill_budget_bytes, pkgscope_fill_budget_in_use_bytes gauge     WatchFillBudget (max-fill-bytes)
//	pkgscope_fill_budget_waiters                                 gauge      WatchFillBudget
//	pkgscope_fill_budget_frees_total                             counter    WatchFillBudget (memory returned after large fills)
//
// plus the Go runtime's and the process's standard series. Labels are
// bounded: routes are Echo's route patterns, actions a fixed set, statuses
// the handful the API answers, sources the names the wiring passes.
package metrics

import (
	"maps"
	"net/http"
	"net/http/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ActionKey is the echo.Context key a handler sets to the request's action
// (c.Set(metrics.ActionKey, "read")), so that one route serving several
// actions (POST /v1/explore) is split by action. Values outside list,
// glob, read and grep are recorded as "invalid".
const ActionKey = "action"

// Buckets, in seconds. A warm read answers in about a millisecond and a
// cold one waits for its fill (fill-timeout, 5 minutes by default), so
// request latency spans 0.5ms to 5 minutes; upstream requests and fills
// start at tens of milliseconds; index builds of typical packages take
// 10ms-2s and the largest (hundreds of MB of text) over a minute.
var (
	requestBuckets  = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	upstreamBuckets = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 240}
	fillBuckets     = []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	indexBuckets    = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}
)

// Metrics holds one registry and the series the mirror records. A nil
// *Metrics records nothing, so optional wiring needs no branches.
type Metrics struct {
	reg *prometheus.Registry

	requests *prometheus.HistogramVec
	// observers holds requests' child per requestLabels, found once:
	// WithLabelValues hashes the three labels and formats the status on
	// every call, a measurable part of a warm read (issue 27). The
	// labels are bounded (see the package comment), and so is the map.
	// A map no one writes, replaced whole (under observersMu) when a new
	// series appears: reading it takes no lock, whose count both cores
	// of a loaded mirror wrote on every request; a sync.Map boxes its
	// key on every Load.
	observersMu      sync.Mutex
	observers        atomic.Pointer[map[requestLabels]prometheus.Observer]
	upstream         *prometheus.CounterVec
	upstreamDuration *prometheus.HistogramVec
	fills            *prometheus.HistogramVec
	indexBuilds      *prometheus.HistogramVec
}

// New returns Metrics on a fresh registry holding the Go runtime and
// process collectors and the mirror's own series.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pkgscope_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern, explore action and status.",
			Buckets: requestBuckets,
		}, []string{"route", "action", "status"}),
		upstream: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pkgscope_upstream_requests_total",
			Help: "Requests to upstream sources (registry, jsdelivr), by outcome: ok, not_found, rate_limited, client_error, server_error, error (no answer).",
		}, []string{"source", "outcome"}),
		upstreamDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pkgscope_upstream_request_duration_seconds",
			Help:    "Time to an upstream response's headers, by source.",
			Buckets: upstreamBuckets,
		}, []string{"source"}),
		fills: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pkgscope_fill_duration_seconds",
			Help:    "Time a request waited for a miss to be ingested (packument, tarball, verify, unpack, commit), by outcome.",
			Buckets: fillBuckets,
		}, []string{"outcome"}),
		indexBuilds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pkgscope_index_build_duration_seconds",
			Help:    "Time to build one version's search index from its stored files, by outcome.",
			Buckets: indexBuckets,
		}, []string{"outcome"}),
	}
	m.observers.Store(&map[requestLabels]prometheus.Observer{})
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.upstream, m.upstreamDuration, m.fills, m.indexBuilds,
	)
	return m
}

// Registry is the registry /metrics serves, for packages that bring their
// own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// maxScrapesInFlight bounds concurrent scrapes: two Prometheus servers
// scraping each replica is the expected worst case, and a scrape reads
// every collector.
const maxScrapesInFlight = 4

// Handler serves the registry in the Prometheus text (or OpenMetrics)
// format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{MaxRequestsInFlight: maxScrapesInFlight})
}

// Middleware records each request's latency by route pattern, action and
// status. It renders a handler's error itself (c.Error, which runs the
// API's error handler once) so that the recorded status is the one sent;
// put it first among the API's middleware so that refusals by auth and
// rate limits are recorded too.
func (m *Metrics) Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if m == nil {
			return next
		}
		return func(c echo.Context) error {
			start := time.Now()
			if err := next(c); err != nil {
				c.Error(err)
			}
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			m.observer(requestLabels{route, action(c), c.Response().Status}).Observe(time.Since(start).Seconds())
			return nil
		}
	}
}

// requestLabels are one series of pkgscope_http_request_duration_seconds.
type requestLabels struct {
	route, action string
	status        int
}

// observer returns the requests histogram's child for l.
func (m *Metrics) observer(l requestLabels) prometheus.Observer {
	if o, ok := (*m.observers.Load())[l]; ok {
		return o
	}
	m.observersMu.Lock()
	defer m.observersMu.Unlock()
	held := *m.observers.Load()
	if o, ok := held[l]; ok {
		return o // added while this one waited
	}
	o := m.requests.WithLabelValues(l.route, l.action, strconv.Itoa(l.status))
	next := maps.Clone(held)
	next[l] = o
	m.observers.Store(&next)
	return o
}

// action bounds the action label to the explore actions.
func action(c echo.Context) string {
	a, _ := c.Get(ActionKey).(string)
	switch a {
	case "", "list", "glob", "read", "grep":
		return a
	}
	return "invalid"
}

// CountUpstream counts one request to source ("registry", "jsdelivr") that
// ended in outcome (see Outcome). Sources whose HTTP client is wired with
// Transport are counted already.
func (m *Metrics) CountUpstream(source, outcome string) {
	if m != nil {
		m.upstream.WithLabelValues(source, outcome).Inc()
	}
}

// ObserveIndexBuild records one index build; search.Options.Observe calls
// it.
func (m *Metrics) ObserveIndexBuild(d time.Duration, err error) {
	if m != nil {
		m.indexBuilds.WithLabelValues(outcomeOf(err)).Observe(d.Seconds())
	}
}

func outcomeOf(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// Pprof returns net/http/pprof's handlers under /debug/pprof/, for a
// listener of its own: profiles expose internals and cost CPU, so they are
// never served on the API's address.
func Pprof() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// queueTimeout bounds the queue-depth query a scrape runs: a slow database
// must not hold the scrape past Prometheus' default 10s timeout.
const queueTimeout = 2 * time.Second
