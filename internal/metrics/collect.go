package metrics

import (
	"context"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pkgscope/pkgscope/internal/cache"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/pglock"
	"github.com/pkgscope/pkgscope/internal/ratelimit"
	"github.com/pkgscope/pkgscope/internal/redislock"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// The scrape-time collectors below read counters their packages keep
// anyway (atomics), so a request pays nothing for them.

// WatchCache exposes stats, the cache's counters, read at each scrape:
// lookups by layer (local, redis) and result (hit, miss), each layer's hit
// ratio since start, Redis errors, loads from the store, the local layer's
// size and the Redis breaker's state. Prometheus computes windowed ratios
// from the counters; the ratio gauge is for a glance.
func (m *Metrics) WatchCache(stats func() cache.Stats) {
	if m != nil {
		m.reg.MustRegister(&cacheCollector{stats: stats})
	}
}

var (
	cacheRequestsDesc = prometheus.NewDesc("pkgscope_cache_requests_total",
		"Cache lookups by layer (local, redis) and result (hit, miss).", []string{"layer", "result"}, nil)
	cacheRatioDesc = prometheus.NewDesc("pkgscope_cache_hit_ratio",
		"Hits over lookups since start, by layer; absent before the layer's first lookup.", []string{"layer"}, nil)
	cacheErrorsDesc = prometheus.NewDesc("pkgscope_cache_errors_total",
		"Cache lookups and writes that failed (Redis unreachable, breaker open, corrupt entry), by layer.", []string{"layer"}, nil)
	cacheLoadsDesc = prometheus.NewDesc("pkgscope_cache_loads_total",
		"Lookups that missed every layer and reached the store or the resolver.", nil, nil)
	cacheBytesDesc = prometheus.NewDesc("pkgscope_cache_local_bytes",
		"Bytes held by the in-process cache layer.", nil, nil)
	cacheEntriesDesc = prometheus.NewDesc("pkgscope_cache_local_entries",
		"Entries held by the in-process cache layer.", nil, nil)
	redisOpenDesc = prometheus.NewDesc("pkgscope_redis_breaker_open",
		"1 while Redis is being skipped after failures, else 0.", nil, nil)
	redisFailuresDesc = prometheus.NewDesc("pkgscope_redis_failures_total",
		"Redis commands that failed for want of Redis.", nil, nil)
	redisRejectedDesc = prometheus.NewDesc("pkgscope_redis_rejected_total",
		"Redis commands skipped while the breaker was open.", nil, nil)
	redisIncidentsDesc = prometheus.NewDesc("pkgscope_redis_incidents_total",
		"Times the Redis breaker opened.", nil, nil)
)

type cacheCollector struct{ stats func() cache.Stats }

func (cc *cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cacheRequestsDesc, cacheRatioDesc, cacheErrorsDesc, cacheLoadsDesc,
		cacheBytesDesc, cacheEntriesDesc, redisOpenDesc, redisFailuresDesc, redisRejectedDesc, redisIncidentsDesc} {
		ch <- d
	}
}

func (cc *cacheCollector) Collect(ch chan<- prometheus.Metric) {
	s := cc.stats()
	for _, l := range []struct {
		name string
		st   cache.LayerStats
	}{{"local", s.Local}, {"redis", s.Redis}} {
		ch <- prometheus.MustNewConstMetric(cacheRequestsDesc, prometheus.CounterValue, float64(l.st.Hits), l.name, "hit")
		ch <- prometheus.MustNewConstMetric(cacheRequestsDesc, prometheus.CounterValue, float64(l.st.Misses), l.name, "miss")
		ch <- prometheus.MustNewConstMetric(cacheErrorsDesc, prometheus.CounterValue, float64(l.st.Errors), l.name)
		if n := l.st.Hits + l.st.Misses; n > 0 {
			ch <- prometheus.MustNewConstMetric(cacheRatioDesc, prometheus.GaugeValue, float64(l.st.Hits)/float64(n), l.name)
		}
	}
	ch <- prometheus.MustNewConstMetric(cacheLoadsDesc, prometheus.CounterValue, float64(s.Loads))
	ch <- prometheus.MustNewConstMetric(cacheBytesDesc, prometheus.GaugeValue, float64(s.LocalBytes))
	ch <- prometheus.MustNewConstMetric(cacheEntriesDesc, prometheus.GaugeValue, float64(s.LocalEntries))
	open := 0.0
	if s.Breaker.Open {
		open = 1
	}
	ch <- prometheus.MustNewConstMetric(redisOpenDesc, prometheus.GaugeValue, open)
	ch <- prometheus.MustNewConstMetric(redisFailuresDesc, prometheus.CounterValue, float64(s.Breaker.Failures))
	ch <- prometheus.MustNewConstMetric(redisRejectedDesc, prometheus.CounterValue, float64(s.Breaker.Rejected))
	ch <- prometheus.MustNewConstMetric(redisIncidentsDesc, prometheus.CounterValue, float64(s.Breaker.Incidents))
}

// WatchRateLimit exposes the rate limiter's counters: requests allowed,
// refused with 429, and let through unchecked because Redis did not
// answer.
func (m *Metrics) WatchRateLimit(stats func() ratelimit.Stats) {
	if m != nil {
		m.reg.MustRegister(&rateCollector{stats: stats})
	}
}

var rateDesc = prometheus.NewDesc("pkgscope_ratelimit_requests_total",
	"Requests seen by the rate limiter, by result (allowed, limited, failed_open).", []string{"result"}, nil)

type rateCollector struct{ stats func() ratelimit.Stats }

func (rc *rateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- rateDesc }

func (rc *rateCollector) Collect(ch chan<- prometheus.Metric) {
	s := rc.stats()
	ch <- prometheus.MustNewConstMetric(rateDesc, prometheus.CounterValue, float64(s.Allowed), "allowed")
	ch <- prometheus.MustNewConstMetric(rateDesc, prometheus.CounterValue, float64(s.Limited), "limited")
	ch <- prometheus.MustNewConstMetric(rateDesc, prometheus.CounterValue, float64(s.FailedOpen), "failed_open")
}

// WatchQueue exposes the warm queue's depth (jobs not yet finished), asked
// of depth at each scrape with a 2s timeout. A failed query leaves the
// gauge out of that scrape (absent, never a 0 that reads as "empty") and
// counts in pkgscope_warm_queue_depth_errors_total; the rest of the scrape
// is served, since failing all of it (as an invalid metric does) blanked
// every series of the replica exactly while its database was down. The mirror
// wires it once its process holds a warm queue (internal/warm); until then
// the gauge is absent.
func (m *Metrics) WatchQueue(depth QueueDepth) {
	if m != nil {
		m.reg.MustRegister(&queueCollector{depth: depth})
	}
}

// QueueDepth returns the number of queued or running jobs.
type QueueDepth func(ctx context.Context) (int, error)

var (
	queueDesc = prometheus.NewDesc("pkgscope_warm_queue_depth",
		"Warm jobs queued or running.", nil, nil)
	queueErrorsDesc = prometheus.NewDesc("pkgscope_warm_queue_depth_errors_total",
		"Scrapes whose warm queue depth query failed (the depth is then absent).", nil, nil)
)

type queueCollector struct {
	depth  QueueDepth
	errors atomic.Int64
}

func (qc *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDesc
	ch <- queueErrorsDesc
}

func (qc *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), queueTimeout)
	defer cancel()
	n, err := qc.depth(ctx)
	if err != nil {
		qc.errors.Add(1)
	} else {
		ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(n))
	}
	ch <- prometheus.MustNewConstMetric(queueErrorsDesc, prometheus.CounterValue, float64(qc.errors.Load()))
}

// WatchFillLocks exposes the cross-replica fill locks' counters, read at
// each scrape, by lock: "redis" (internal/redislock) and "postgres"
// (internal/pglock); either func may be nil when that lock is not wired
// (no --redis-url; the embedded store). A wait that ends in a hand-off is
// the lock doing its job (another replica filled the version); timeouts
// are fills that gave up waiting; busy counts fills past --pg-lock-conns
// that went on with the Redis lock alone (or none); unavailable, tries
// that failed for want of the lock's service.
func (m *Metrics) WatchFillLocks(redis func() redislock.Stats, pg func() pglock.Stats) {
	if m != nil && (redis != nil || pg != nil) {
		m.reg.MustRegister(&lockCollector{redis: redis, pg: pg})
	}
}

var (
	lockAcquiredDesc = prometheus.NewDesc("pkgscope_fill_lock_acquired_total",
		"Fill locks taken, by lock (redis, postgres).", []string{"lock"}, nil)
	lockWaitsDesc = prometheus.NewDesc("pkgscope_fill_lock_waits_total",
		"Fills that found the version's lock held by another fill and waited, by lock.", []string{"lock"}, nil)
	lockHandoffsDesc = prometheus.NewDesc("pkgscope_fill_lock_handoffs_total",
		"Waits that ended with the version filled by the holder (no download), by lock.", []string{"lock"}, nil)
	lockTimeoutsDesc = prometheus.NewDesc("pkgscope_fill_lock_wait_timeouts_total",
		"Waits that ended with the fill's context (fill-timeout) before the lock or a hand-off, by lock.", []string{"lock"}, nil)
	lockUnavailableDesc = prometheus.NewDesc("pkgscope_fill_lock_unavailable_total",
		"Lock tries that failed for want of the lock's service (the fill went on without that lock), by lock.", []string{"lock"}, nil)
	lockBusyDesc = prometheus.NewDesc("pkgscope_fill_lock_busy_total",
		"Fills that found every Postgres lock connection (pg-lock-conns) holding a lock and went on with the Redis lock alone, or none; lock is always postgres.", []string{"lock"}, nil)
)

type lockCollector struct {
	redis func() redislock.Stats
	pg    func() pglock.Stats
}

func (lc *lockCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{lockAcquiredDesc, lockWaitsDesc, lockHandoffsDesc, lockTimeoutsDesc, lockUnavailableDesc, lockBusyDesc} {
		ch <- d
	}
}

func (lc *lockCollector) Collect(ch chan<- prometheus.Metric) {
	counts := func(lock string, acquired, waited, handedOff, timedOut, unavailable uint64) {
		for _, c := range []struct {
			d *prometheus.Desc
			n uint64
		}{{lockAcquiredDesc, acquired}, {lockWaitsDesc, waited}, {lockHandoffsDesc, handedOff}, {lockTimeoutsDesc, timedOut}, {lockUnavailableDesc, unavailable}} {
			ch <- prometheus.MustNewConstMetric(c.d, prometheus.CounterValue, float64(c.n), lock)
		}
	}
	if lc.redis != nil {
		s := lc.redis()
		counts("redis", s.Acquired, s.Waited, s.HandedOff, s.TimedOut, s.Unavailable)
	}
	if lc.pg != nil {
		s := lc.pg()
		counts("postgres", s.Acquired, s.Waited, s.HandedOff, s.TimedOut, s.Unavailable)
		ch <- prometheus.MustNewConstMetric(lockBusyDesc, prometheus.CounterValue, float64(s.Busy), "postgres")
	}
}

// WatchFillSlots exposes the bound on cold fills in flight (fill.Slots:
// max-fills, max-fill-waiters), read at each scrape: the slots, those
// taken, the fills waiting for one, and the misses refused (503) because
// every slot was taken and max-fill-waiters fills were waiting.
func (m *Metrics) WatchFillSlots(stats func() fill.SlotStats) {
	if m != nil && stats != nil {
		m.reg.MustRegister(&slotCollector{stats: stats})
	}
}

var (
	slotsMaxDesc = prometheus.NewDesc("pkgscope_fill_slots",
		"Cold fills this process may run at once (max-fills).", nil, nil)
	slotsInUseDesc = prometheus.NewDesc("pkgscope_fill_slots_in_use",
		"Cold fills fetching and ingesting now.", nil, nil)
	slotsWaitingDesc = prometheus.NewDesc("pkgscope_fill_slot_waiters",
		"Cold fills waiting for a slot now (at most max-fill-waiters).", nil, nil)
	slotsRefusedDesc = prometheus.NewDesc("pkgscope_fill_slot_refusals_total",
		"Misses refused at once (503) because every slot was taken and max-fill-waiters fills were waiting.", nil, nil)
)

type slotCollector struct{ stats func() fill.SlotStats }

func (sc *slotCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{slotsMaxDesc, slotsInUseDesc, slotsWaitingDesc, slotsRefusedDesc} {
		ch <- d
	}
}

func (sc *slotCollector) Collect(ch chan<- prometheus.Metric) {
	s := sc.stats()
	ch <- prometheus.MustNewConstMetric(slotsMaxDesc, prometheus.GaugeValue, float64(s.Max))
	ch <- prometheus.MustNewConstMetric(slotsInUseDesc, prometheus.GaugeValue, float64(s.InUse))
	ch <- prometheus.MustNewConstMetric(slotsWaitingDesc, prometheus.GaugeValue, float64(s.Waiting))
	ch <- prometheus.MustNewConstMetric(slotsRefusedDesc, prometheus.CounterValue, float64(s.Refused))
}

// WatchUpstreamDropped exposes what the registry client dropped from
// its answers as it read them (upstream.Client.Dropped): versions that are
// not semver, dist-tags with a bad name or pointing at such a version,
// search results whose name cannot be a package's.
// A rising count is a registry serving hostile or broken metadata.
func (m *Metrics) WatchUpstreamDropped(dropped func() upstream.Dropped) {
	if m != nil && dropped != nil {
		m.reg.MustRegister(droppedCollector(dropped))
	}
}

var droppedDesc = prometheus.NewDesc("pkgscope_upstream_dropped_total",
	"Entries dropped from registry answers as invalid, by kind (version: not semver; dist_tag: bad name or pointing at such a version; name: a search result that cannot be a package name).",
	[]string{"kind"}, nil)

type droppedCollector func() upstream.Dropped

func (dc droppedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- droppedDesc }

func (dc droppedCollector) Collect(ch chan<- prometheus.Metric) {
	d := dc()
	ch <- prometheus.MustNewConstMetric(droppedDesc, prometheus.CounterValue, float64(d.Versions), "version")
	ch <- prometheus.MustNewConstMetric(droppedDesc, prometheus.CounterValue, float64(d.Tags), "dist_tag")
	ch <- prometheus.MustNewConstMetric(droppedDesc, prometheus.CounterValue, float64(d.Names), "name")
}

// WatchFillBudget exposes the fills' memory budget (fill.Budget,
// max-fill-bytes), read at each scrape: its bytes, those charged now, the
// fills and builds waiting for bytes, and how many times a large charge
// returned memory to the system.
func (m *Metrics) WatchFillBudget(stats func() fill.BudgetStats) {
	if m != nil && stats != nil {
		m.reg.MustRegister(&budgetCollector{stats: stats})
	}
}

var (
	budgetMaxDesc = prometheus.NewDesc("pkgscope_fill_budget_bytes",
		"Bytes the fills and index builds of this process may hold at once (max-fill-bytes).", nil, nil)
	budgetInUseDesc = prometheus.NewDesc("pkgscope_fill_budget_in_use_bytes",
		"Bytes of the fill budget charged now.", nil, nil)
	budgetWaitingDesc = prometheus.NewDesc("pkgscope_fill_budget_waiters",
		"Fills and index builds waiting for bytes of the fill budget now.", nil, nil)
	budgetFreesDesc = prometheus.NewDesc("pkgscope_fill_budget_frees_total",
		"Times a large fill or build gave back its bytes and its memory was returned to the system.", nil, nil)
)

type budgetCollector struct{ stats func() fill.BudgetStats }

func (bc *budgetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{budgetMaxDesc, budgetInUseDesc, budgetWaitingDesc, budgetFreesDesc} {
		ch <- d
	}
}

func (bc *budgetCollector) Collect(ch chan<- prometheus.Metric) {
	s := bc.stats()
	ch <- prometheus.MustNewConstMetric(budgetMaxDesc, prometheus.GaugeValue, float64(s.Max))
	ch <- prometheus.MustNewConstMetric(budgetInUseDesc, prometheus.GaugeValue, float64(s.InUse))
	ch <- prometheus.MustNewConstMetric(budgetWaitingDesc, prometheus.GaugeValue, float64(s.Waiting))
	ch <- prometheus.MustNewConstMetric(budgetFreesDesc, prometheus.CounterValue, float64(s.Freed))
}
