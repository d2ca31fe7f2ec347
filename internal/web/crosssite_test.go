package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/warm"
)

// countingWarmer records what reached the warm queue.
type countingWarmer struct{ accepted []warm.PostBody }

func (w *countingWarmer) Accept(_ context.Context, body warm.PostBody) (string, error) {
	w.accepted = append(w.accepted, body)
	return "req1", nil
}

func (w *countingWarmer) Progress(context.Context, string) (warm.Progress, error) {
	return warm.Progress{}, warm.ErrNotFound
}

// TestWarmFormRefusesOtherOrigins: the login cookie is SameSite=Strict,
// which a sibling host of the same site still receives; the warm form
// (which queues up to max-request-items packages on the browser's token),
// the Fetch buttons, login and logout take a POST only from the mirror's
// own pages.
func TestWarmFormRefusesOtherOrigins(t *testing.T) {
	w := &countingWarmer{}
	e := echo.New()
	New(Deps{Warm: w}, DefaultLimits()).Register(e)
	post := func(path string, hdr map[string]string) int {
		form := url.Values{"specs": {"react@19\nlodash"}}
		scheme := "http"
		if hdr["tls"] != "" {
			scheme = "https"
		}
		req := httptest.NewRequest(http.MethodPost, scheme+"://pkgscope.example.com"+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec.Code
	}
	for _, tc := range []struct {
		name string
		hdr  map[string]string
	}{
		{"sibling host by Sec-Fetch-Site", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "https://wiki.example.com"}},
		{"other site by Sec-Fetch-Site", map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"sibling host by Origin (older browser)", map[string]string{"Origin": "https://wiki.example.com"}},
		{"same host, other port", map[string]string{"Origin": "http://pkgscope.example.com:8080"}},
		{"opaque origin (sandboxed frame, data: page)", map[string]string{"Origin": "null"}},
		// A network attacker's page on the plain-http origin of the host,
		// posting to the mirror over TLS (older browsers send the
		// SameSite cookie: the host is the same site).
		{"same host over plain http, to TLS", map[string]string{"Origin": "http://pkgscope.example.com", "tls": "1"}},
	} {
		// The Fetch buttons fill the store on the browser's token, and a
		// login from another site's form is login CSRF.
		for _, path := range []string{"/warm", "/logout", "/login", "/browse/react@19.0.0/", "/diff/react?from=18.0.0&to=19.0.0"} {
			if code := post(path, tc.hdr); code != http.StatusForbidden {
				t.Errorf("%s: POST %s answered %d, want 403", tc.name, path, code)
			}
		}
	}
	if len(w.accepted) != 0 {
		t.Fatalf("a refused form reached the warm queue: %+v", w.accepted)
	}
	// The mirror's own form, and a client that sends neither header.
	for _, hdr := range []map[string]string{
		{"Sec-Fetch-Site": "same-origin", "Origin": "http://pkgscope.example.com"},
		{},
	} {
		if code := post("/warm", hdr); code != http.StatusSeeOther {
			t.Errorf("own form %v: %d, want 303", hdr, code)
		}
		if code := post("/logout", hdr); code != http.StatusSeeOther {
			t.Errorf("own logout %v: %d, want 303", hdr, code)
		}
	}
	if len(w.accepted) != 2 || len(w.accepted[0].Specs) != 2 {
		t.Errorf("own forms queued %+v, want two requests of 2 specs", w.accepted)
	}
}
