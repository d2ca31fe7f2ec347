// Package ratelimit limits requests per caller across every replica, on
// Redis (github.com/go-redis/redis_rate: GCRA in one Lua script, so the
// limit is shared exactly by all replicas), as Echo middleware answering
// 429 with Retry-After.
//
// A caller is its bearer token (by sha256, never the token itself) when
// tokens are verified before this middleware runs, else its client IP.
// Keying by unverified tokens would let anyone mint a fresh bucket per
// request by making tokens up.
//
// A request that submits many items (a warm request's packages, a
// project's) costs more than one: the handler charges the rest with
// ChargeItems once it knows the count, one request per ItemsPerRequest
// items (setting rate-limit-warm-items), through the same bucket. GCRA
// cannot charge more than the burst at once, so a request costing more is
// refused outright (413): Burst × ItemsPerRequest is the most items one
// request may carry. Charging such a request the burst instead would let
// a caller queue the burst's worth of items many times over per minute.
//
// Redis down or slow: requests are allowed (fail open). Limits protect the
// mirror from one greedy agent; refusing everyone because a cache is down
// would be worse than the abuse. The outage is logged once by redisconn's
// breaker and counted in Stats.FailedOpen.
package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/auth"
	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/redisconn"
)

// Options configure a Limiter.
type Options struct {
	// PerMinute is the sustained rate a caller may send; 0 turns limits
	// off.
	PerMinute int
	// Burst is how many requests a caller may send at once before the
	// rate applies; 0 means PerMinute.
	Burst int
	// KeyByToken keys callers by their bearer token. Set it only when a
	// middleware before this one rejects unknown tokens.
	KeyByToken bool
	// Skip exempts requests (nil: health checks and metrics).
	Skip func(echo.Context) bool
	// ItemsPerRequest is how many items of a many-item request count as
	// one request (ChargeItems); 0 means DefaultItemsPerRequest.
	ItemsPerRequest int
}

// DefaultItemsPerRequest is the default of the setting
// rate-limit-warm-items: 100 packages of a warm request count as one
// request, so a request of warm's max-request-items (20,000) costs 200,
// the burst the compose file sets: at most one such request per full
// bucket, instead of one unit for 20,000 fetches. A smaller burst lowers
// the most packages one request may carry (burst × this).
const DefaultItemsPerRequest = 100

// Limiter is the rate-limit middleware's state. It is safe for concurrent
// use.
type Limiter struct {
	rc    *redisconn.Conn
	rl    *redis_rate.Limiter
	limit redis_rate.Limit
	opt   Options

	allowed, limited, failedOpen atomic.Uint64
}

// New returns a Limiter on rc; nil when opt.PerMinute is 0 (limits off).
func New(rc *redisconn.Conn, opt Options) *Limiter {
	if opt.PerMinute <= 0 {
		return nil
	}
	burst := opt.Burst
	if burst <= 0 {
		burst = opt.PerMinute
	}
	if opt.Skip == nil {
		opt.Skip = skipProbes
	}
	if opt.ItemsPerRequest <= 0 {
		opt.ItemsPerRequest = DefaultItemsPerRequest
	}
	return &Limiter{
		rc:    rc,
		rl:    redis_rate.NewLimiter(rc.Client),
		limit: redis_rate.Limit{Rate: opt.PerMinute, Burst: burst, Period: time.Minute},
		opt:   opt,
	}
}

func skipProbes(c echo.Context) bool {
	switch c.Request().URL.Path {
	case "/healthz", "/readyz", "/metrics":
		return true
	}
	return false
}

// Middleware returns the Echo middleware. A refused request ends with an
// *echo.HTTPError of status 429, after the Retry-After header (whole
// seconds, at least 1) is set, for the API's error handler to render.
func (l *Limiter) Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if l.opt.Skip(c) {
				return next(c)
			}
			ctx, key := c.Request().Context(), l.key(c)
			// A handler that learns its request's item count charges
			// the rest to the same bucket (ChargeItems).
			c.SetRequest(c.Request().WithContext(context.WithValue(ctx, chargeKey{}, &charger{l: l, c: c, key: key})))
			res, err := l.allow(ctx, key, 1)
			if err != nil {
				l.failedOpen.Add(1)
				return next(c)
			}
			h := c.Response().Header()
			h.Set("RateLimit-Limit", strconv.Itoa(l.limit.Burst))
			h.Set("RateLimit-Remaining", strconv.Itoa(res.Remaining))
			if res.Allowed > 0 {
				l.allowed.Add(1)
				return next(c)
			}
			return l.refuse(h, res.RetryAfter, "")
		}
	}
}

// refuse counts a refusal and answers it: Retry-After (whole seconds, at
// least 1) set, an *echo.HTTPError of status 429 naming the settings,
// after why when given.
func (l *Limiter) refuse(h http.Header, wait time.Duration, why string) error {
	l.limited.Add(1)
	secs := max(1, int(math.Ceil(wait.Seconds())))
	h.Set("Retry-After", strconv.Itoa(secs))
	if why != "" {
		why += "; "
	}
	return &echo.HTTPError{Code: http.StatusTooManyRequests, Message: fmt.Sprintf(
		"rate limit exceeded: %s%s per minute, bursts of %d (settings rate-limit-per-minute, rate-limit-burst); retry after %ds",
		why, english.Count(l.limit.Rate, "request"), l.limit.Burst, secs)}
}

func (l *Limiter) allow(ctx context.Context, key string, n int) (*redis_rate.Result, error) {
	var res *redis_rate.Result
	err := l.rc.Do(ctx, func(ctx context.Context) (err error) {
		res, err = l.rl.AllowN(ctx, key, l.limit, n)
		return err
	})
	return res, err
}

// chargeKey is the request context's key for its *charger.
type chargeKey struct{}

// charger is what ChargeItems needs of the request the middleware let in:
// the limiter, the bucket, and the response whose headers it sets.
type charger struct {
	l   *Limiter
	c   echo.Context
	key string
}

// ChargeItems charges the request ctx belongs to for the items it
// submits (a warm request's packages): one request per ItemsPerRequest
// items (setting rate-limit-warm-items), less the one it paid at the
// door. what names the items for the refusal ("a warm request of 20000
// packages").
//
// It returns nil when the bucket pays, when ctx comes from no request the
// middleware let in (limits off, background work) and when Redis does not
// answer (fail open). A request costing more than the burst, which no
// bucket could ever pay, is an *echo.HTTPError of status 413 saying the
// most items a request may carry (burst × ItemsPerRequest) and to split it; nothing is
// charged for its items. Else a bucket that cannot pay gives the
// refusal the middleware gives, an *echo.HTTPError of status 429, with
// Retry-After set on the response: long enough for the retry to pay both
// its door and its items.
func ChargeItems(ctx context.Context, items int, what string) error {
	ch, _ := ctx.Value(chargeKey{}).(*charger)
	if ch == nil {
		return nil
	}
	l := ch.l
	per := l.opt.ItemsPerRequest
	total := max(1, (items+per-1)/per)
	if total > l.limit.Burst {
		most := l.maxItems()
		return &echo.HTTPError{Code: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf(
			"%s counts as %d requests, more than a caller's burst of %d can pay: a request may carry at most %d packages "+
				"(rate-limit-burst %d × rate-limit-warm-items %d); split it into requests of at most %d packages",
			what, total, l.limit.Burst, most, l.limit.Burst, per, most)}
	}
	if total <= 1 {
		return nil
	}
	res, err := l.allow(ctx, ch.key, total-1)
	if err != nil {
		l.failedOpen.Add(1)
		return nil
	}
	h := ch.c.Response().Header()
	h.Set("RateLimit-Remaining", strconv.Itoa(res.Remaining))
	if res.Allowed > 0 {
		return nil
	}
	door := l.limit.Period / time.Duration(l.limit.Rate) // the retry's own unit
	return l.refuse(h, res.RetryAfter+door, fmt.Sprintf("%s counts as %d requests (one per %d, setting rate-limit-warm-items)", what, total, per))
}

// maxItems is the most items one request may submit under ChargeItems:
// the burst times ItemsPerRequest (settings rate-limit-burst and
// rate-limit-warm-items).
func (l *Limiter) maxItems() int { return l.limit.Burst * l.opt.ItemsPerRequest }

// key names the caller's bucket. redis_rate puts its own "rate:" in
// front. The identity auth verified comes first: a web page's token rides
// in the login cookie, not the Authorization header, and keying those
// requests by address would put every person behind the load balancer
// (whose address they all share without an IPExtractor) in one bucket,
// where one of them spends the others' budget.
func (l *Limiter) key(c echo.Context) string {
	if l.opt.KeyByToken {
		if id, ok := auth.FromContext(c); ok && id.ID != "" {
			return l.rc.Key("ratelimit", "token", id.ID)
		}
		if tok, ok := auth.Bearer(c.Request().Header.Get(echo.HeaderAuthorization)); ok {
			sum := sha256.Sum256([]byte(tok))
			return l.rc.Key("ratelimit", "token", hex.EncodeToString(sum[:8])) // = auth.Token.ID
		}
	}
	return l.rc.Key("ratelimit", "ip", ClientIP(c))
}

// ClientIP is the peer address, unless the Echo instance was told how to
// trust a proxy's headers (Echo.IPExtractor): X-Forwarded-For from an
// untrusted client would let it pick its own bucket (or share of the
// lockfile pool, warm.BodyBudget).
func ClientIP(c echo.Context) string {
	if c.Echo().IPExtractor != nil {
		return c.RealIP()
	}
	host, _, err := net.SplitHostPort(c.Request().RemoteAddr)
	if err != nil {
		return c.Request().RemoteAddr
	}
	return host
}

// Stats are counters since start, for metrics.
type Stats struct {
	// Allowed and Limited count requests let through and refused with
	// 429; FailedOpen counts requests let through unchecked because
	// Redis did not answer.
	Allowed, Limited, FailedOpen uint64
}

// Stats returns the counters.
func (l *Limiter) Stats() Stats {
	return Stats{Allowed: l.allowed.Load(), Limited: l.limited.Load(), FailedOpen: l.failedOpen.Load()}
}
