package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/api"
	"github.com/pkgscope/pkgscope/internal/explore"
)

// TestPanicIsA500: a handler that panics (here a middleware after the
// recovery, as every route's handler is) answers its request with the
// error handler's 500, hiding the panic, instead of dropping the
// connection with no answer; the next request is served.
func TestPanicIsA500(t *testing.T) {
	bug := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if c.QueryParam("bug") != "" {
				var s []int
				_ = s[3] // index out of range
			}
			return next(c)
		}
	}
	e := api.New(explore.New(explore.Options{}), nil, api.Options{Middleware: []echo.MiddlewareFunc{bug}})
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz?bug=1", nil))
	var body struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusInternalServerError ||
		!strings.HasPrefix(body.Error.Message, "internal error (request id ") || strings.Contains(rec.Body.String(), "out of range") {
		t.Errorf("a panicking request answered %d %s (%v), want a 500 whose message hides the panic", rec.Code, rec.Body, err)
	}
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("the request after the panic answered %d", rec.Code)
	}
}

// TestClientGoneIsNot500: a request whose client went away (its context
// canceled) while the handler waited is recorded as 499 and gets no
// error body, instead of the 500 "internal error" that logged an ERROR
// for every request a load generator cut when it stopped.
func TestClientGoneIsNot500(t *testing.T) {
	waits := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			<-c.Request().Context().Done()
			return c.Request().Context().Err()
		}
	}
	var status int
	seen := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := next(c)
			c.Error(err)
			status = c.Response().Status
			return nil
		}
	}
	e := api.New(explore.New(explore.Options{}), nil, api.Options{Middleware: []echo.MiddlewareFunc{seen, waits}})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil).WithContext(ctx))
	if status != api.StatusClientClosedRequest || rec.Body.Len() != 0 {
		t.Errorf("a request whose client went away: status %d, body %q; want %d and no body", status, rec.Body, api.StatusClientClosedRequest)
	}
}
