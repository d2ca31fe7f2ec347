package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"
)

// TestVersionReadsTheManifestNotThePackument: an exact version's entry
// comes from its manifest, for plain and scoped names (whose slash is
// escaped, as npm escapes it), with no packument request; it is then
// cached like a packument's versions.
func TestVersionReadsTheManifestNotThePackument(t *testing.T) {
	for _, name := range []string{"p", "@s/p"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, Config{})
			var mu sync.Mutex
			var paths []string
			front := proxy(t, e, func(w http.ResponseWriter, r *http.Request) bool {
				mu.Lock()
				paths = append(paths, r.URL.EscapedPath())
				mu.Unlock()
				return false
			})
			data := tgz(t)
			e.reg.Publish(name, "1.0.0", data)
			e.reg.Publish(name, "2.0.0", tgz(t, "two.js"))
			for range 2 {
				v, err := front.c.Version(context.Background(), name, "1.0.0")
				if err != nil {
					t.Fatal(err)
				}
				want := e.version(t, name, "1.0.0")
				if v != want {
					t.Errorf("Version = %+v, want the packument's %+v", v, want)
				}
			}
			if n := e.reg.VersionRequests(name, "1.0.0"); n != 1 {
				t.Errorf("%d manifest requests, want 1 (the second is cached)", n)
			}
			mu.Lock()
			defer mu.Unlock()
			wantPath := "/p/1.0.0"
			if name == "@s/p" {
				wantPath = "/@s%2fp/1.0.0"
			}
			if len(paths) != 1 || paths[0] != wantPath {
				t.Errorf("the registry was asked for %q, want only %q (no packument)", paths, wantPath)
			}
		})
	}
}

// TestVersionFallsBackToThePackument: a registry that does not serve the
// version endpoint (404, 405, a 500 of its own), or answers it with
// something else than the version asked for, is read from the packument.
func TestVersionFallsBackToThePackument(t *testing.T) {
	lie := func(body string) func(http.ResponseWriter, *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != "/@s/p/1.0.0" {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
			return true
		}
	}
	tests := []struct {
		name   string
		status int                                           // RefuseVersions
		front  func(http.ResponseWriter, *http.Request) bool // answers in the registry's place
	}{
		{"404", http.StatusNotFound, nil},
		{"405", http.StatusMethodNotAllowed, nil},
		{"500", http.StatusInternalServerError, nil},
		{"another version", 0, lie(`{"name":"@s/p","version":"2.0.0","dist":{"tarball":"http://x/p.tgz"}}`)},
		{"another package", 0, lie(`{"name":"@s/q","version":"1.0.0","dist":{"tarball":"http://x/p.tgz"}}`)},
		{"no dist", 0, lie(`{"name":"@s/p","version":"1.0.0"}`)},
		{"not JSON", 0, lie(`<html>`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			c := e.c
			if tc.front != nil {
				c = proxy(t, e, tc.front).c
			}
			e.reg.Publish("@s/p", "1.0.0", tgz(t))
			e.reg.RefuseVersions(tc.status)
			v, err := c.Version(context.Background(), "@s/p", "1.0.0")
			if err != nil {
				t.Fatal(err)
			}
			if n := e.reg.PackumentRequests("@s/p"); n != 1 {
				t.Errorf("%d packument requests, want 1", n)
			}
			if want := e.version(t, "@s/p", "1.0.0"); v != want {
				t.Errorf("Version = %+v, want the packument's %+v", v, want)
			}
		})
	}
}

// TestVersionNotPublished: a version the registry does not have is
// ErrNotFound, as the packument (asked after the manifest's 404) says;
// a package it does not have too.
func TestVersionNotPublished(t *testing.T) {
	e := newEnv(t, Config{})
	e.reg.Publish("p", "1.0.0", tgz(t))
	if _, err := e.c.Version(context.Background(), "p", "9.9.9"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Version(p@9.9.9) = %v, want ErrNotFound", err)
	}
	if n := e.reg.PackumentRequests("p"); n != 1 {
		t.Errorf("%d packument requests, want 1", n)
	}
	if _, err := e.c.Version(context.Background(), "nope", "1.0.0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Version(nope@1.0.0) = %v, want ErrNotFound", err)
	}
}

// TestVersionUnansweredIsNotRetriedOnThePackument: a manifest request
// that gets no answer in time is the registry's outage, returned at once
// rather than doubled by a packument request to the same host.
func TestVersionUnansweredIsNotRetriedOnThePackument(t *testing.T) {
	e := newEnv(t, Config{RequestTimeout: 50 * time.Millisecond})
	e.reg.Publish("p", "1.0.0", tgz(t))
	release := e.reg.Hold("p")
	defer release()
	_, err := e.c.Version(context.Background(), "p", "1.0.0")
	isUnavailable(0, 30*time.Second, "timed out")(t, err)
	if n := e.reg.PackumentRequests("p"); n != 0 {
		t.Errorf("%d packument requests after the manifest timed out, want 0", n)
	}
}

// proxy puts a server in front of e's registry: front answers a request
// in its place when it returns true. The returned env's client talks to
// the front.
func proxy(t *testing.T, e *env, front func(http.ResponseWriter, *http.Request) bool) *env {
	t.Helper()
	target, err := url.Parse(e.reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !front(w, r) {
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return newEnvFor(t, e.reg, srv.URL+"/", Config{})
}

// TestDeprecation reads "deprecated" as npm does: any truthy value marks
// the version deprecated (npm-pick-manifest's !mani.deprecated).
func TestDeprecation(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`{}`, ""},
		{`{"deprecated":null}`, ""},
		{`{"deprecated":""}`, ""},
		{`{"deprecated":false}`, ""},
		{`{"deprecated":0}`, ""},
		{`{"deprecated":"use y"}`, "use y"},
		{`{"deprecated":true}`, "deprecated"},
		{`{"deprecated":1}`, "deprecated"},
		{`{"deprecated":{"why":"x"}}`, "deprecated"},
	} {
		var pv PackumentVersion
		if err := json.Unmarshal([]byte(tc.json), &pv); err != nil {
			t.Fatal(err)
		}
		if got := pv.Deprecation(); got != tc.want {
			t.Errorf("%s: Deprecation() = %q, want %q", tc.json, got, tc.want)
		}
	}
}
