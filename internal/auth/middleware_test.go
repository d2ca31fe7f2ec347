package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

func newEcho(t *testing.T, s *Set) *echo.Echo {
	t.Helper()
	e := echo.New()
	e.Use(Middleware(s, Options{}))
	who := func(c echo.Context) error {
		id, ok := FromContext(c)
		if !ok {
			return c.String(http.StatusOK, "anonymous")
		}
		return c.String(http.StatusOK, id.ID+" "+strings.Join(id.Scopes, ","))
	}
	e.GET("/healthz", who)
	e.GET("/readyz", who)
	e.GET("/v1/x", who)
	e.GET("/metrics", who)
	return e
}

func do(e *echo.Echo, path, authz string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

func TestMiddleware(t *testing.T) {
	ts, err := ParseList("good-token-1,scoped-token-2:@myorg")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSet(ts)
	if err != nil {
		t.Fatal(err)
	}
	e := newEcho(t, s)
	goodID := ts[0].ID()
	for _, tc := range []struct {
		name, path, authz string
		status            int
		body, challenge   string
	}{
		{"no header", "/v1/x", "", 401, "", `Bearer realm="pkgscope"`},
		{"metrics needs a token too", "/metrics", "", 401, "", `Bearer realm="pkgscope"`},
		{"wrong scheme", "/v1/x", "Basic Z29vZC10b2tlbi0xOg==", 401, "", `Bearer realm="pkgscope"`},
		{"unknown token", "/v1/x", "Bearer bad-token-9", 401, "", `Bearer realm="pkgscope", error="invalid_token"`},
		{"good token", "/v1/x", "Bearer good-token-1", 200, goodID + " ", ""},
		{"scheme is case-insensitive", "/v1/x", "bearer good-token-1", 200, goodID + " ", ""},
		{"scoped token", "/v1/x", "Bearer scoped-token-2", 200, ts[1].ID() + " @myorg", ""},
		{"healthz is open", "/healthz", "", 200, "anonymous", ""},
		{"readyz is open, even with a bad token", "/readyz", "Bearer bad-token-9", 200, "anonymous", ""},
		{"unknown route still needs a token", "/nope", "", 401, "", `Bearer realm="pkgscope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(e, tc.path, tc.authz)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d (%s)", rec.Code, tc.status, rec.Body)
			}
			if tc.body != "" && rec.Body.String() != tc.body {
				t.Errorf("body %q, want %q", rec.Body, tc.body)
			}
			if got := rec.Header().Get("WWW-Authenticate"); got != tc.challenge {
				t.Errorf("WWW-Authenticate %q, want %q", got, tc.challenge)
			}
			if strings.Contains(rec.Body.String(), "bad-token-9") || strings.Contains(rec.Body.String(), "good-token-1") {
				t.Errorf("the answer echoes a token: %s", rec.Body)
			}
		})
	}
}

func TestMiddlewareOffWithoutTokens(t *testing.T) {
	for _, s := range []*Set{nil, {}} {
		e := newEcho(t, s)
		if rec := do(e, "/v1/x", ""); rec.Code != http.StatusOK || rec.Body.String() != "anonymous" {
			t.Errorf("no tokens configured: %d %s", rec.Code, rec.Body)
		}
	}
}

func TestRefusalIsAnHTTPError(t *testing.T) {
	s, err := Load("", "good-token-1")
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	var got error
	e.HTTPErrorHandler = func(err error, c echo.Context) { got = err; _ = c.NoContent(599) }
	e.Use(Middleware(s, Options{}))
	e.GET("/v1/x", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	do(e, "/v1/x", "")
	var he *echo.HTTPError
	if !errors.As(got, &he) || he.Code != http.StatusUnauthorized {
		t.Fatalf("error handler got %v, want an *echo.HTTPError with 401", got)
	}
}

func TestBearer(t *testing.T) {
	for _, tc := range []struct {
		h, tok string
		ok     bool
	}{
		{"Bearer abc", "abc", true},
		{"BEARER  abc ", "abc", true},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Token abc", "abc", false},
		{"", "", false},
	} {
		tok, ok := Bearer(tc.h)
		if ok != tc.ok || (ok && tok != tc.tok) {
			t.Errorf("Bearer(%q) = %q, %v", tc.h, tok, ok)
		}
	}
}
