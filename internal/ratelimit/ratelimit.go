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
}

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
			res, err := l.allow(c.Request().Context(), l.key(c))
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
			l.limited.Add(1)
			secs := max(1, int(math.Ceil(res.RetryAfter.Seconds())))
			h.Set("Retry-After", strconv.Itoa(secs))
			return &echo.HTTPError{Code: http.StatusTooManyRequests, Message: fmt.Sprintf(
				"rate limit exceeded: %d requests per minute, bursts of %d (settings rate-limit-per-minute, rate-limit-burst); retry after %ds",
				l.limit.Rate, l.limit.Burst, secs)}
		}
	}
}

func (l *Limiter) allow(ctx context.Context, key string) (*redis_rate.Result, error) {
	var res *redis_rate.Result
	err := l.rc.Do(ctx, func(ctx context.Context) (err error) {
		res, err = l.rl.Allow(ctx, key, l.limit)
		return err
	})
	return res, err
}

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
	return l.rc.Key("ratelimit", "ip", clientIP(c))
}

// clientIP is the peer address, unless the Echo instance was told how to
// trust a proxy's headers (Echo.IPExtractor): X-Forwarded-For from an
// untrusted client would let it pick its own bucket.
func clientIP(c echo.Context) string {
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
