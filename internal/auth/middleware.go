package auth

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
)

// ContextKey is the echo.Context key under which Middleware stores the
// verified caller's Identity. Later middleware (rate limits) and handlers
// read it with FromContext.
const ContextKey = "pkgscope.auth.identity"

// Realm is the realm of the WWW-Authenticate challenge.
const Realm = "pkgscope"

// maxSessionCookies is how many cookies of the session's name a request
// has looked up: the browser's own and a sibling host's, each a store
// query at most, however many a client sends.
const maxSessionCookies = 3

// Options configure Middleware.
type Options struct {
	// Skip exempts requests from authentication; nil exempts the health
	// checks, /healthz and /readyz, which load balancers and orchestrators
	// call without credentials.
	Skip func(echo.Context) bool
	// Cookie names the web session's cookie, read when the request has no
	// Authorization header and Page says its path is one of the web pages
	// (never on the API: a cookie rides along with requests other sites
	// make, and the pages' cookie is SameSite=Strict). Session resolves
	// its value to the identity the session acts with (false: no live
	// session; an error: the store failed). The value is never taken as a
	// token. On a page, a GET (or HEAD) without a valid token or session
	// is redirected to Login (with ?next=) instead of answered 401.
	Cookie  string
	Session func(ctx context.Context, value string) (Identity, bool, error)
	Page    func(path string) bool
	Login   string
}

// Middleware returns Echo middleware that lets a request through only with
// "Authorization: Bearer TOKEN" for a token in s, and stores the caller's
// Identity in the context under ContextKey. A refused request ends with an
// *echo.HTTPError of status 401, after WWW-Authenticate is set (RFC 6750:
// error="invalid_token" when a token was given but is not known); the
// message never contains the token. With an empty set every request
// passes: authentication is off.
func Middleware(s *Set, opt Options) echo.MiddlewareFunc {
	skip := opt.Skip
	if skip == nil {
		skip = SkipHealth
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if s.Len() == 0 {
			return next
		}
		return func(c echo.Context) error {
			if skip(c) {
				return next(c)
			}
			header := c.Request().Header.Get(echo.HeaderAuthorization)
			tok, ok := Bearer(header)
			page := opt.Page != nil && opt.Page(c.Request().URL.Path)
			var id Identity
			valid := false
			if ok {
				id, valid = s.Verify(tok)
			} else if header == "" && page && opt.Cookie != "" && opt.Session != nil {
				// A sibling host may set a cookie of the same name for the
				// parent domain, sent before the mirror's own: the first
				// live session of the first few wins, so a planted cookie
				// cannot keep the browser at the login form.
				cks := c.Request().CookiesNamed(opt.Cookie)
				for _, ck := range cks[:min(len(cks), maxSessionCookies)] {
					if ck.Value == "" {
						continue
					}
					var err error
					id, valid, err = opt.Session(c.Request().Context(), ck.Value)
					if err != nil {
						return err // the store failed: 503, not a logout
					}
					ok = true
					if valid {
						break
					}
				}
			}
			if !valid && page && opt.Login != "" && (c.Request().Method == http.MethodGet || c.Request().Method == http.MethodHead) {
				return c.Redirect(http.StatusSeeOther, opt.Login+"?next="+url.QueryEscape(c.Request().URL.RequestURI()))
			}
			if !ok {
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="`+Realm+`"`)
				return echo.NewHTTPError(http.StatusUnauthorized,
					"missing bearer token: send the header Authorization: Bearer <token>")
			}
			if !valid {
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="`+Realm+`", error="invalid_token"`)
				return echo.NewHTTPError(http.StatusUnauthorized, "the bearer token is not valid for this mirror")
			}
			c.Set(ContextKey, id)
			// Also on the request's context, for layers that see no echo
			// context (the explore service, the MCP handler).
			c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), identityKey{}, id)))
			return next(c)
		}
	}
}

// SkipHealth exempts the health checks by their route.
func SkipHealth(c echo.Context) bool {
	switch c.Path() {
	case "/healthz", "/readyz":
		return true
	}
	return false
}

// FromContext returns the identity Middleware verified for this request;
// false when authentication is off or the route is exempt.
func FromContext(c echo.Context) (Identity, bool) {
	id, ok := c.Get(ContextKey).(Identity)
	return id, ok
}

type identityKey struct{}

// IdentityFrom returns the verified caller of a request's context; false
// when the mirror runs without tokens.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// WithoutIdentity returns ctx with no verified caller, for work the
// mirror does for itself on a caller's behalf (loading the web-docs data
// packages), which no token's scopes should limit.
func WithoutIdentity(ctx context.Context) context.Context {
	return context.WithValue(ctx, identityKey{}, nil)
}

// Bearer extracts the token of an Authorization header "Bearer TOKEN"
// (scheme case-insensitive, RFC 7235).
func Bearer(header string) (string, bool) {
	scheme, tok, ok := strings.Cut(header, " ")
	tok = strings.TrimSpace(tok)
	return tok, ok && strings.EqualFold(scheme, "Bearer") && tok != ""
}
