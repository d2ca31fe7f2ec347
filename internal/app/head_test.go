package app

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/redistest"
)

// TestHeadAnswersAsGet: HEAD of a route that answers GET (the raw-file
// routes, the JSON ones, the web page) gets GET's status and headers,
// through the same token check and rate limit; a client asking HEAD (curl
// -I, an HTTP cache) is never told 405.
func TestHeadAnswersAsGet(t *testing.T) {
	m := newAuthedMirror(t, func(c *config.Config) {
		c.RedisURL, c.RedisPrefix = redistest.URL(t), redistest.Prefix(t)
		c.RateLimitPerMinute, c.RateLimitBurst = 1, 1000
	})
	srv := httptest.NewServer(m.echo)
	t.Cleanup(srv.Close)
	call := func(method, path, token string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		// A page without a token is redirected: compare the redirect.
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, c := range []struct {
		path, token string
		status      int
	}{
		{"/v1/npm/lib@1.0.0/index.js", goodToken, 200},
		{"/v1/npm/lib@1.0.0/index.js", "", 401},
		{"/v1/npm/lib@1.0.0/index.js", badToken, 401},
		{"/v1/npm/lib@1.0.0/index.js", scopedToken, 403},
		{"/v1/npm/lib@1.0/index.js", goodToken, 200},
		{"/v1/npm/lib@9.9.9/index.js", goodToken, 404},
		{"/v1/npm/lib@1.0.0/-/files", goodToken, 200},
		{"/npm/lib@1.0.0/index.js", goodToken, 200},
		{"/v1/packages/npm/lib@1.0.0", goodToken, 200},
		{"/healthz", "", 200},
		{"/", goodToken, 200},
		{"/", "", 303},
		{"/browse/lib@1.0.0/index.js", goodToken, 200},
		{"/static/app.css", "", 200},
	} {
		get := call(http.MethodGet, c.path, c.token)
		head := call(http.MethodHead, c.path, c.token)
		if get.StatusCode != c.status || head.StatusCode != get.StatusCode {
			t.Errorf("%s (token %q): GET %d, HEAD %d; want %d for both", c.path, c.token, get.StatusCode, head.StatusCode, c.status)
			continue
		}
		for _, k := range headerNames(get.Header, head.Header) {
			switch k {
			case "Date", "X-Request-Id", "Ratelimit-Remaining":
				continue // per request
			case "Content-Length":
				if get.Header.Get(k) == "0" {
					continue // net/http leaves an empty body's length off a HEAD
				}
			}
			if g, h := get.Header.Values(k), head.Header.Values(k); !slices.Equal(g, h) {
				t.Errorf("%s (token %q): header %s is %q on GET, %q on HEAD", c.path, c.token, k, g, h)
			}
		}
	}
	// HEAD counts against the caller's rate limit as GET does: past the
	// burst both are refused alike.
	m2 := newAuthedMirror(t, func(c *config.Config) {
		c.RedisURL, c.RedisPrefix = redistest.URL(t), redistest.Prefix(t)
		c.RateLimitPerMinute, c.RateLimitBurst = 1, 2
	})
	srv = httptest.NewServer(m2.echo)
	t.Cleanup(srv.Close)
	var got []string
	for _, method := range []string{http.MethodHead, http.MethodGet, http.MethodHead, http.MethodGet} {
		resp := call(method, "/v1/npm/lib@1.0.0/index.js", goodToken)
		retry := ""
		if resp.Header.Get("Retry-After") != "" {
			retry = " Retry-After"
		}
		got = append(got, method+" "+http.StatusText(resp.StatusCode)+retry)
	}
	if want := []string{"HEAD OK", "GET OK", "HEAD Too Many Requests Retry-After", "GET Too Many Requests Retry-After"}; !slices.Equal(got, want) {
		t.Errorf("with a burst of 2: %q, want %q", got, want)
	}
}

// headerNames are the names in either header, sorted.
func headerNames(a, b http.Header) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, strings.Compare)
	return out
}
