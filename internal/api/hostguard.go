package api

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// HostGuard protects a mirror that runs without tokens (a developer's
// laptop) from web pages: a page the developer visits can make the browser
// post to 127.0.0.1:7878 (a form needs no CORS preflight), and by DNS
// rebinding can even read the answers — including private packages the
// mirror fetched with the developer's npm tokens. So, without tokens, a
// request must name an allowed Host, and a browser request (one carrying
// Origin) must come from an allowed origin. Allowed are the loopback names
// and the names in allowed; "*" turns the guard off (a deployment behind
// its own access control). Health checks are exempt.
func HostGuard(allowed []string) echo.MiddlewareFunc {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	for _, h := range allowed {
		if h == "*" {
			return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
		}
		hosts = append(hosts, strings.ToLower(strings.Trim(h, "[]")))
	}
	ok := func(hostport string) bool {
		h := hostport
		if host, _, err := net.SplitHostPort(hostport); err == nil {
			h = host
		}
		return slices.Contains(hosts, strings.ToLower(strings.Trim(h, "[]")))
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			switch c.Path() {
			case "/healthz", "/readyz":
				return next(c)
			}
			r := c.Request()
			if !ok(r.Host) {
				return echo.NewHTTPError(http.StatusForbidden, "host "+r.Host+" is not allowed: this mirror runs without tokens, so it answers only requests to localhost or to a name in --allowed-hosts")
			}
			if o := r.Header.Get("Origin"); o != "" {
				u, err := url.Parse(o)
				if err != nil || !ok(u.Host) {
					return echo.NewHTTPError(http.StatusForbidden, "requests from web pages of other origins are refused (Origin "+o+"); add the origin's host to --allowed-hosts if it is yours")
				}
			}
			return next(c)
		}
	}
}
