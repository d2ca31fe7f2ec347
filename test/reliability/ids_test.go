package reliability

import (
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/pgtest"
)

// hostileIDs are the ids an attacker puts where a route takes one: a NUL
// byte (invalid text for Postgres), invalid UTF-8, an overlong id, one of
// the right length with non-hex digits, and percent-encoded separators
// and dots.
var hostileIDs = []string{
	"abc%00def",
	"%00",
	"%ff%fe",
	"%c0%af",
	strings.Repeat("a", 5000),
	strings.Repeat("g", 32),
	strings.Repeat("z", 64),
	"%2e%2e%2f%2e%2e%2fetc",
	"0123456789abcdef0123456789ABCDEF",
	"%250",
	"abc%0d%0aSet-Cookie:%20x=1",
}

// TestHostileIDsOnEveryRoute sends each hostile id in the parameter of
// every route that has one (":id" and "*"), on both stores, with a token
// that may read everything: the route checks the id's format before it
// reaches a query, and answers 4xx, never 5xx (before: GET
// /v1/warm/abc%00def and /warm/abc%00def answered 500 on Postgres, as
// the NUL byte reached the query).
func TestHostileIDsOnEveryRoute(t *testing.T) {
	for _, store := range []string{"embedded", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			m, _ := privateMirror(t, func(c *config.Config) {
				if store == "postgres" {
					c.DatabaseURL = pgtest.URL(t)
				}
			})
			e := m.app.Handler().(*echo.Echo)
			walked := 0
			for _, r := range e.Routes() {
				i := strings.IndexAny(r.Path, ":*")
				if r.Method == echo.RouteNotFound || i < 0 {
					continue
				}
				walked++
				prefix := r.Path[:i]
				for _, id := range hostileIDs {
					path := prefix + id
					for _, tok := range []string{allToken, privToken} {
						rec := send(e, r.Method, path, "", tok)
						if rec.Code >= 500 {
							t.Errorf("%s %.120s: %d %.300s, want a 4xx", r.Method, path, rec.Code, rec.Body)
						}
						if r.Path == "/v1/warm/:id" || r.Path == "/warm/:id" || strings.HasSuffix(r.Path, "projects/:id") {
							if r.Method == http.MethodGet && rec.Code != 404 {
								t.Errorf("%s %.120s: %d %.300s, want 404 (an id of the wrong format)", r.Method, path, rec.Code, rec.Body)
							}
						}
					}
				}
			}
			if walked < 4 {
				t.Errorf("only %d routes with a parameter: the walk found none of the id routes", walked)
			}
			t.Logf("%d routes with a parameter × %d hostile ids × 2 tokens walked", walked, len(hostileIDs))
		})
	}
}
