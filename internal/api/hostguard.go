package api

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/auth"
)

// HostGuard protects a mirror that runs without tokens (a developer's
// laptop) from web pages: a page the developer visits can make the browser
// post to 127.0.0.1:7878 (a form needs no CORS preflight), by DNS
// rebinding can even read the answers, and with <script src> can run a
// package file (private ones included, fetched with the developer's npm
// tokens) in its own origin. So, without tokens:
//
//   - a request must name an allowed Host: the loopback names and hosts
//     ("*" turns this check and the next off, for a deployment behind its
//     own access control; health checks are exempt);
//   - a browser request carrying Origin must come from the mirror's own
//     origin or one of origins ("*": any). A page on another port of
//     localhost is another origin: it is not trusted unless listed;
//   - a request the browser marks Sec-Fetch-Site: cross-site (a
//     <script src>, <img>, form or fetch from another site; these carry no
//     Origin for GETs) is refused on every route, unless its Origin is
//     listed in origins.
//
// SecurityHeaders (always on) tell browsers not to let other origins load
// or sniff the answers that get through.
func HostGuard(hosts, origins []string) echo.MiddlewareFunc {
	anyHost := slices.Contains(hosts, "*")
	allowed := []string{"localhost", "127.0.0.1", "::1"}
	for _, h := range hosts {
		allowed = append(allowed, strings.ToLower(strings.Trim(h, "[]")))
	}
	hostOK := func(hostport string) bool {
		h := hostport
		if host, _, err := net.SplitHostPort(hostport); err == nil {
			h = host
		}
		return anyHost || slices.Contains(allowed, strings.ToLower(strings.Trim(h, "[]")))
	}
	anyOrigin := slices.Contains(origins, "*")
	listed := func(origin string) bool {
		return origin != "" && (anyOrigin || slices.ContainsFunc(origins, func(o string) bool {
			return strings.EqualFold(strings.TrimSuffix(o, "/"), origin)
		}))
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			origin := r.Header.Get("Origin")
			if r.Header.Get("Sec-Fetch-Site") == "cross-site" && !listed(origin) {
				return echo.NewHTTPError(http.StatusForbidden, "cross-site requests from web pages are refused: this mirror runs without tokens (add the page's origin to --allowed-origins if it is yours)")
			}
			switch c.Path() {
			case "/healthz", "/readyz":
				return next(c)
			}
			if !hostOK(r.Host) {
				return echo.NewHTTPError(http.StatusForbidden, "host "+r.Host+" is not allowed: this mirror runs without tokens, so it answers only requests to localhost or to a name in --allowed-hosts")
			}
			if origin != "" && !anyHost && !listed(origin) && !sameOrigin(origin, r.Host) {
				return echo.NewHTTPError(http.StatusForbidden, "requests from web pages of other origins are refused (Origin "+origin+"); add the origin to --allowed-origins if it is yours")
			}
			return next(c)
		}
	}
}

// sameOrigin reports whether origin names the host (and port) the request
// was sent to: a page the mirror itself served. The Host was checked
// first, so a rebound name cannot pass as the mirror's own.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, host)
}

// SecurityHeaders marks every answer as for the mirror's own origin only:
// Cross-Origin-Resource-Policy: same-origin stops a page of another origin
// from loading it with <script src> or <img> (browsers enforce it on
// no-cors loads), and X-Content-Type-Options: nosniff stops a browser from
// running a file served as text/plain as script.
func SecurityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h["Cross-Origin-Resource-Policy"] = sameOriginCORP
		h["X-Content-Type-Options"] = nosniff
		return next(c)
	}
}

// SecurityHeaders' values, shared by every answer like the raw files'
// constant headers (file.go).
var (
	sameOriginCORP = []string{"same-origin"}
	nosniff        = []string{"nosniff"}
)

// PrivateAnswers keeps answers to a verified caller out of shared caches
// and off the disk: once auth has verified a token (the web pages' cookie
// included), an answer whose route did not mark it "private" itself is
// sent with "private, no-store". Before, a page or JSON answer about a
// private package had no Cache-Control, or MCP's "no-cache" (which lets a
// cache store it): read with the login cookie, which unlike the
// Authorization header does not keep a response out of shared caches, a
// proxy between the browser and the mirror could keep it for the next
// visitor, and the browser kept it on disk after logout. Raw files keep
// their own "private, max-age=…, immutable" (cacheControl), and the
// pages' static files, the same for everyone, are left alone.
//
// It goes right after auth.Middleware (app.New places it there when the
// mirror has tokens) and acts only for a caller auth verified: registering
// its hook for every request, the anonymous ones of a mirror without
// tokens included, was two allocations and a call per answer that could
// never find an identity (issue 27). Refusals before it (auth's 401) have
// no verified caller; those after it (a rate limit's 429) get the hook.
func PrivateAnswers(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, ok := auth.FromContext(c); !ok || strings.HasPrefix(c.Request().URL.Path, "/static/") {
			return next(c)
		}
		res := c.Response()
		res.Before(func() {
			if !strings.Contains(res.Header().Get(echo.HeaderCacheControl), "private") {
				res.Header().Set(echo.HeaderCacheControl, "private, no-store")
			}
		})
		return next(c)
	}
}
