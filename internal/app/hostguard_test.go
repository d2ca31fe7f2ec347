package app

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// TestHostGuardWithoutTokens: a mirror without tokens refuses requests
// naming a foreign Host (DNS rebinding) or coming from a foreign web page
// (Origin), and answers loopback names, --allowed-hosts and health checks.
func TestHostGuardWithoutTokens(t *testing.T) {
	m := newMirror(t, embedded, func(c *config.Config) { c.AllowedHosts = []string{"mirror.internal"} })
	m.reg.Publish("a", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x"}))
	body := `{"action":"list","packageName":"a"}`
	cases := []struct {
		name, host, origin, path string
		status                   int
	}{
		{"loopback", "", "", "/v1/explore", 200},
		{"localhost name", "localhost:7878", "", "/v1/explore", 200},
		{"allowed host", "mirror.internal", "", "/v1/explore", 200},
		{"same-origin page", "localhost:7878", "http://localhost:7878", "/v1/explore", 200},
		{"rebound host", "attacker.example", "", "/v1/explore", 403},
		{"foreign page", "", "https://attacker.example", "/v1/explore", 403},
		{"foreign page, raw file", "", "https://attacker.example", "/v1/npm/a@1.0.0/a.js", 403},
		{"health from anywhere", "attacker.example", "", "/healthz", 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method, rd := http.MethodPost, strings.NewReader(body)
			if tc.path != "/v1/explore" {
				method, rd = http.MethodGet, strings.NewReader("")
			}
			req, _ := http.NewRequestWithContext(t.Context(), method, m.srv.URL+tc.path, rd)
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("got %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
}

// TestHostGuardOffWithTokens: with tokens, a browser cannot attach the
// bearer token by itself, so any Host is answered (behind a load balancer).
func TestHostGuardOffWithTokens(t *testing.T) {
	m := newMirror(t, embedded, func(c *config.Config) { c.Tokens = "t0ken-for-tests" })
	m.reg.Publish("a", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x"}))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, m.srv.URL+"/v1/explore", strings.NewReader(`{"action":"list","packageName":"a"}`))
	req.Host = "pkgscope.example.internal"
	req.Header.Set("Authorization", "Bearer t0ken-for-tests")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("got %d, want 200", resp.StatusCode)
	}
}

// TestAuthenticatedAnswersArePrivate: with tokens, raw files are cached
// "private", so a shared cache in front does not serve them to anyone.
func TestAuthenticatedAnswersArePrivate(t *testing.T) {
	m := newMirror(t, embedded, func(c *config.Config) { c.Tokens = "t0ken-for-tests" })
	m.reg.Publish("a", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x"}))
	for _, path := range []string{"/v1/npm/a@1.0.0/a.js", "/npm/a@1.0.0/a.js"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, m.srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer t0ken-for-tests")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if cc := resp.Header.Get("Cache-Control"); resp.StatusCode != 200 || cc != "private, max-age=31536000, immutable" {
			t.Errorf("%s: %d, Cache-Control %q", path, resp.StatusCode, cc)
		}
	}
}

// TestPrivateScopeNeedsItsToken: a scope with a registry of its own is
// served only to tokens that list it; a scope-limited token reads only its
// scopes.
func TestPrivateScopeNeedsItsToken(t *testing.T) {
	priv := fakeregistry.New(t)
	priv.Publish("@priv/x", "1.0.0", tarballtest.Package(t, map[string]string{"x.js": "secret"}))
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, ".npmrc"), []byte("@priv:registry="+priv.URL()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := newMirror(t, embedded, func(c *config.Config) {
		c.ProjectDir = project
		c.Tokens = "pub-token,priv-token:@priv"
	})
	m.reg.Publish("a", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x"}))
	cases := []struct {
		token, pkg string
		status     int
	}{
		{"pub-token", "a", 200},
		{"pub-token", "@priv/x", 403},
		{"priv-token", "@priv/x", 200},
		{"priv-token", "a", 403},
	}
	for _, tc := range cases {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, m.srv.URL+"/v1/explore",
			strings.NewReader(`{"action":"list","packageName":"`+tc.pkg+`"}`))
		req.Header.Set("Authorization", "Bearer "+tc.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s reading %s: %d %s, want %d", tc.token, tc.pkg, resp.StatusCode, b, tc.status)
		}
	}
	if n := priv.TarballDownloads("@priv/x", "1.0.0"); n != 1 {
		t.Errorf("private package downloaded %d times, want 1 (only for the allowed token)", n)
	}
}
