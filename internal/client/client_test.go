package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/app"
	"github.com/pkgscope/pkgscope/internal/client"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// remote is a real pkgscope (embedded store) against a fake registry.
type remote struct {
	reg *fakeregistry.Registry
	app *app.App
	srv *httptest.Server
}

func newRemote(t *testing.T) *remote {
	t.Helper()
	reg := fakeregistry.New(t)
	cfg := config.Default()
	cfg.DataDir, cfg.ProjectDir = t.TempDir(), t.TempDir()
	env := reg.Env()
	a, err := app.New(t.Context(), cfg, slog.New(slog.DiscardHandler), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		srv.Close()
		a.Close()
	})
	reg.Publish("lib", "1.0.0", tarballtest.Package(t, map[string]string{
		"package.json": `{"name":"lib"}`, "a.txt": "one\ntwo\nthree\n", "dist/index.d.ts": "export {};\n", "x <&> y.js": "a < b && c > d\n",
	}))
	reg.Publish("lib", "1.1.0", tarballtest.Package(t, map[string]string{"a.txt": "new\n"}))
	reg.Publish("down", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x"}))
	reg.Fail("down", http.StatusInternalServerError, "")
	return &remote{reg: reg, app: a, srv: srv}
}

func newClient(t *testing.T, url string, opt client.Options) *client.Client {
	t.Helper()
	c, err := client.New(url, opt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSameAnswersAsLocal: every action through the client answers what
// the service answers in process.
func TestSameAnswersAsLocal(t *testing.T) {
	r := newRemote(t)
	c := newClient(t, r.srv.URL+"/", client.Options{})
	ctx := t.Context()
	svc := r.app.Service
	for _, v := range []string{"", "1.0.0", "^1.0.0 <1.1"} {
		tg := explore.Request{PackageName: "lib", Version: v}
		want, err := svc.List(ctx, tg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.List(ctx, tg)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("list %q = %+v, %v; want %+v", v, got, err, want)
		}
	}
	tg := explore.Request{PackageName: "lib", Version: "1.0.0", Patterns: []string{"**/*.ts", "*.js"}}
	wantL, _ := svc.Glob(ctx, tg)
	gotL, err := c.Glob(ctx, tg)
	if err != nil || !reflect.DeepEqual(gotL, wantL) || len(gotL.Entries) != 2 {
		t.Errorf("glob = %+v, %v; want %+v", gotL, err, wantL)
	}
	for _, rr := range []explore.Request{
		{PackageName: "lib", Version: "1.0.0", Path: "a.txt"},
		{PackageName: "lib", Version: "1.0.0", Path: "a.txt", Offset: 2, Limit: 1},
		{PackageName: "lib", Version: "1.0.0", Path: "x <&> y.js", Offset: 1, Column: 3},
	} {
		want, err := svc.Read(ctx, rr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Read(ctx, rr)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("read %+v = %+v, %v; want %+v", rr, got, err, want)
		}
	}
}

// TestRemoteErrorsKeepTheirClass: the remote's error body comes back with
// its code, message, status and Retry-After.
func TestRemoteErrorsKeepTheirClass(t *testing.T) {
	r := newRemote(t)
	c := newClient(t, r.srv.URL, client.Options{})
	ctx := t.Context()
	cases := []struct {
		name   string
		do     func() error
		status int
		code   string
		msg    string
	}{
		{"no package", func() error { _, err := c.List(ctx, explore.Request{PackageName: "nope"}); return err }, 404, "not_found", "nope"},
		{"no version", func() error { _, err := c.List(ctx, explore.Request{PackageName: "lib", Version: "^9"}); return err }, 404, "no_matching_version", "^9"},
		{"bad name", func() error { _, err := c.List(ctx, explore.Request{PackageName: "../x"}); return err }, 400, "bad_request", "packageName"},
		{"no patterns", func() error { _, err := c.Glob(ctx, explore.Request{PackageName: "lib"}); return err }, 400, "bad_request", "patterns"},
		{"no file", func() error {
			_, err := c.Read(ctx, explore.Request{PackageName: "lib", Path: "b.txt"})
			return err
		}, 404, "not_found", `"b.txt"`},
		{"over limit", func() error {
			_, err := c.Read(ctx, explore.Request{PackageName: "lib", Path: "a.txt", Limit: 1 << 30})
			return err
		}, 422, "limit_exceeded", "max-read-limit"},
		{"upstream down", func() error { _, err := c.List(ctx, explore.Request{PackageName: "down"}); return err }, 503, "upstream_unavailable", "500"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			var e *client.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (%T), want *client.Error", err, err)
			}
			if e.Status != tc.status || e.Code != tc.code || !strings.Contains(e.Message, tc.msg) || e.Error() != e.Message {
				t.Errorf("got %d %s %q, want %d %s containing %q", e.Status, e.Code, e.Message, tc.status, tc.code, tc.msg)
			}
			if cl := e.Class(); cl.Status != tc.status || cl.Code != tc.code {
				t.Errorf("Class() = %+v", cl)
			}
			if (tc.status == 503) != (e.RetryAfter > 0) {
				t.Errorf("RetryAfter = %v for a %d", e.RetryAfter, tc.status)
			}
		})
	}
}

// TestRequestFields: what the client posts uses exactly the API's field
// names, carries the bearer token, and leaves empty fields out.
func TestRequestFields(t *testing.T) {
	bodies := make(chan map[string]any, 1)
	headers := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		json.NewDecoder(r.Body).Decode(&m)
		bodies <- m
		headers <- r.Header
		w.Write([]byte(`{"packageName":"lib","version":"1.0.0","matches":[],"filesSearched":3,"filesSkipped":0,"truncated":false}`))
	}))
	defer srv.Close()
	c := newClient(t, srv.URL+"/base/", client.Options{Token: "t0k"})
	if c.Endpoint() != srv.URL+"/base/v1/explore" {
		t.Errorf("endpoint = %s", c.Endpoint())
	}
	res, err := c.Grep(t.Context(), explore.Request{
		PackageName: "lib", Version: "1", Pattern: "x", CaseInsensitive: true, FixedStrings: true,
		WholeWord: true, Include: []string{"a"}, Exclude: []string{"b"}, ContextLines: new(2), MaxMatches: 3, MaxMatchesPerFile: 4,
	})
	if err != nil || res.FilesSearched != 3 || res.Version != "1.0.0" {
		t.Fatalf("grep = %+v, %v", res, err)
	}
	body, h := <-bodies, <-headers
	var keys []string
	for k := range body {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"action", "caseInsensitive", "contextLines", "exclude", "fixedStrings", "include", "maxMatches", "maxMatchesPerFile", "packageName", "pattern", "version", "wholeWord"}
	if !slices.Equal(keys, want) || body["action"] != "grep" {
		t.Errorf("grep body = %v", body)
	}
	if h.Get("Authorization") != "Bearer t0k" || h.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", h)
	}
	if _, err := c.Read(t.Context(), explore.Request{PackageName: "lib", Path: "a", Offset: 1, Limit: 2, Column: 3}); err != nil {
		t.Fatal(err)
	}
	body, _ = <-bodies, <-headers
	keys = keys[:0]
	for k := range body {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"action", "column", "limit", "offset", "packageName", "path"}) {
		t.Errorf("read body = %v", body)
	}
}

// TestAnswersThatAreNotPkgscope: a proxy's error page, a 200 that is not
// JSON, and an oversized body are reported as such, with what was said.
func TestAnswersThatAreNotPkgscope(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/html/v1/explore", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html><body>502 Bad Gateway</body></html>"+strings.Repeat(" ", 1000))
	})
	mux.HandleFunc("/garbage/v1/explore", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "not json") })
	mux.HandleFunc("/huge/v1/explore", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"files":["`+strings.Repeat("a", 2000)+`"]}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cases := []struct {
		path, msg  string
		status     int
		retryAfter bool
	}{
		{"/html", "502 Bad Gateway", 502, true},
		{"/garbage", "not the expected JSON", 502, false},
		{"/huge", "max-response-bytes", 502, false},
	}
	for _, tc := range cases {
		c := newClient(t, srv.URL+tc.path, client.Options{MaxResponseBytes: 1024})
		_, err := c.List(t.Context(), explore.Request{PackageName: "lib"})
		var e *client.Error
		if !errors.As(err, &e) || e.Code != client.CodeBadAnswer || e.Status != tc.status || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%s: err = %#v", tc.path, err)
			continue
		}
		if len(e.Message) > 500 {
			t.Errorf("%s: message repeats %d bytes of the body", tc.path, len(e.Message))
		}
		if tc.retryAfter != (e.RetryAfter > 0) {
			t.Errorf("%s: RetryAfter = %v", tc.path, e.RetryAfter)
		}
	}
}

func TestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	c := newClient(t, url, client.Options{})
	_, err := c.List(t.Context(), explore.Request{PackageName: "lib"})
	var e *client.Error
	if !errors.As(err, &e) || e.Code != client.CodeUnreachable || !strings.Contains(e.Message, url) || e.Unwrap() == nil {
		t.Fatalf("err = %#v", err)
	}
}

// TestTimeoutIsATimeout: a remote that does not answer within Timeout is
// classified as a timeout (retryable), not an internal failure.
func TestTimeoutIsATimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c := newClient(t, srv.URL, client.Options{Timeout: time.Millisecond})
	_, err := c.List(t.Context(), explore.Request{PackageName: "lib"})
	if !errors.Is(err, context.DeadlineExceeded) || explore.Classify(err).Code != "timeout" {
		t.Fatalf("err = %v, class %+v", err, explore.Classify(err))
	}
}

func TestNewRejects(t *testing.T) {
	for _, u := range []string{"", "pkgscope.internal", "ftp://x", "http://", "https://user:pw@x.internal", "://"} {
		if _, err := client.New(u, client.Options{}); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
}
