package api_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/api"
	"github.com/pkgscope/pkgscope/internal/explore"
)

// TestAccessLog: with --access-log every request leaves one line naming
// its id (the one the answer carries), method, path, status and latency;
// without it, none, while a failure is still logged with its id.
func TestAccessLog(t *testing.T) {
	for _, on := range []bool{true, false} {
		var out bytes.Buffer
		log := slog.New(slog.NewTextHandler(&out, nil))
		e := api.New(explore.New(explore.Options{}), nil, api.Options{Logger: log, AccessLog: on})

		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		id := rec.Header().Get("X-Request-Id")
		if rec.Code != http.StatusOK || id == "" {
			t.Fatalf("/healthz: %d, request id %q", rec.Code, id)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if !on {
			if out.Len() != 0 {
				t.Errorf("access log off: logged %q", out.String())
			}
			// A failure is logged either way, with the request id.
			failing := api.New(explore.New(explore.Options{}), nil, api.Options{Logger: log, Middleware: []echo.MiddlewareFunc{
				func(echo.HandlerFunc) echo.HandlerFunc {
					return func(echo.Context) error { return errors.New("the store broke") }
				},
			}})
			rec := httptest.NewRecorder()
			failing.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			id := rec.Header().Get("X-Request-Id")
			if rec.Code != http.StatusInternalServerError || !strings.Contains(out.String(), "level=ERROR") || !strings.Contains(out.String(), id) {
				t.Errorf("access log off, a failing request (%d, id %q) logged %q; want its error with its id", rec.Code, id, out.String())
			}
			continue
		}
		if len(lines) != 1 {
			t.Fatalf("access log on: %d lines for one request: %q", len(lines), out.String())
		}
		for _, want := range []string{"level=INFO", "msg=request", "id=" + id, "method=GET", "path=/healthz", "status=200", "latency="} {
			if !strings.Contains(lines[0], want) {
				t.Errorf("access line %q lacks %q", lines[0], want)
			}
		}
	}
}
