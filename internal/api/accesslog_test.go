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
// its id (the one the answer carries), method, path, status and latency.
// Without it an answer leaves none, but a refusal (401, 403, 429) leaves
// one with its id, and a failure is logged as ever.
func TestAccessLog(t *testing.T) {
	refuse := func(status int) echo.MiddlewareFunc {
		return func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				switch c.QueryParam("answer") {
				case "refuse":
					return echo.NewHTTPError(status, "no")
				case "fail":
					return errors.New("the store broke")
				}
				return next(c)
			}
		}
	}
	for _, on := range []bool{true, false} {
		for _, c := range []struct {
			query  string
			status int
			// want: the lines logged, each holding every string.
			want [][]string
		}{
			{"", http.StatusOK, nil},
			{"?answer=refuse", http.StatusForbidden, [][]string{{`msg="request refused"`, "method=GET", "path=/healthz", "status=403"}}},
			{"?answer=fail", http.StatusInternalServerError, [][]string{{"level=ERROR", `msg="request failed"`, "status=500"}}},
		} {
			var out bytes.Buffer
			log := slog.New(slog.NewTextHandler(&out, nil))
			e := api.New(explore.New(explore.Options{}), nil, api.Options{Logger: log, AccessLog: on, Middleware: []echo.MiddlewareFunc{refuse(c.status)}})
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz"+c.query, nil))
			id := rec.Header().Get("X-Request-Id")
			if rec.Code != c.status || id == "" {
				t.Fatalf("GET /healthz%s: %d, request id %q; want %d", c.query, rec.Code, id, c.status)
			}
			want := c.want
			if on {
				if c.status != http.StatusInternalServerError {
					want = nil // the access line says it
				}
				want = append(want, []string{"level=INFO", "msg=request", "method=GET", "path=/healthz", "latency="})
			}
			var lines []string
			if s := strings.TrimSpace(out.String()); s != "" {
				lines = strings.Split(s, "\n")
			}
			if len(lines) != len(want) {
				t.Errorf("access log %v, GET /healthz%s: %d lines logged, want %d: %q", on, c.query, len(lines), len(want), lines)
				continue
			}
			for i, line := range lines {
				for _, w := range append(want[i], "id="+id) {
					if !strings.Contains(line, w) {
						t.Errorf("access log %v, GET /healthz%s: line %q lacks %q", on, c.query, line, w)
					}
				}
			}
			if on && !strings.Contains(lines[len(lines)-1], "status="+rec.Result().Status[:3]) {
				t.Errorf("access log on: the access line %q does not give status %d", lines[len(lines)-1], c.status)
			}
		}
	}
}
