package reliability

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/web"
)

// withCookie serves one request in-process carrying cookie c.
func withCookie(h http.Handler, method, path string, c *http.Cookie) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	req.AddCookie(c)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// login logs in to the web page with token and returns its session
// cookie.
func login(t *testing.T, h http.Handler, token string) *http.Cookie {
	t.Helper()
	rec := send(h, "POST", "/login", "token="+token, "")
	for _, c := range rec.Result().Cookies() {
		if c.Name == web.CookieName {
			return c
		}
	}
	t.Fatalf("login: %d %v, want 303 setting %s", rec.Code, rec.Result().Cookies(), web.CookieName)
	return nil
}

// TestWebLoginIsASession: the web login's cookie holds a session id, not
// the token (before: the token itself, for 30 days): HttpOnly,
// SameSite=Strict, Secure when the public URL is https; sent as a bearer
// token it is refused; a cookie holding a token is not a login; logout
// ends the session on the server, so a copy of the cookie stops working.
// On both stores, which keep the sessions every replica shares.
func TestWebLoginIsASession(t *testing.T) {
	for _, storeKind := range []string{"embedded", "postgres"} {
		t.Run(storeKind, func(t *testing.T) {
			t.Parallel()
			m, _ := privateMirror(t, func(c *config.Config) {
				c.PublicURL = "https://pkgscope.example.internal"
				if storeKind == "postgres" {
					c.DatabaseURL = pgtest.URL(t)
				}
			})
			h := m.app.Handler()
			rec := send(h, "POST", "/login", "token="+allToken, "")
			ck := login(t, h, allToken)
			if strings.Contains(ck.Value, allToken) || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || !ck.Secure {
				t.Errorf("login cookie %+v: want a value that is not the token, HttpOnly, SameSite=Strict, Secure (the public URL is https)", ck)
			}
			if strings.Contains(rec.Header().Get("Set-Cookie"), allToken) {
				t.Errorf("Set-Cookie carries the token: %s", rec.Header().Get("Set-Cookie"))
			}
			if rec := withCookie(h, "GET", "/browse/@pub/y@1.0.0/", ck); rec.Code != http.StatusOK {
				t.Fatalf("a page with the session cookie: %d %.300s", rec.Code, rec.Body)
			}
			// The cookie's value is no API token.
			for _, path := range []string{"/v1/packages/npm/@pub/y", "/metrics"} {
				if rec := send(h, "GET", path, "", ck.Value); rec.Code != http.StatusUnauthorized {
					t.Errorf("GET %s with the session id as a bearer token: %d %.200s, want 401", path, rec.Code, rec.Body)
				}
			}
			// A cookie holding the token itself is no login.
			forged := &http.Cookie{Name: web.CookieName, Value: allToken}
			if rec := withCookie(h, "GET", "/browse/@pub/y@1.0.0/", forged); rec.Code != http.StatusSeeOther {
				t.Errorf("a page with the token as the cookie: %d, want 303 to the login form", rec.Code)
			}
			// Logout ends the session itself: a copy of the cookie no
			// longer opens a page.
			req := httptest.NewRequest("POST", "/logout", nil)
			req.AddCookie(ck)
			out := httptest.NewRecorder()
			h.ServeHTTP(out, req)
			if out.Code != http.StatusSeeOther {
				t.Fatalf("logout: %d %.300s", out.Code, out.Body)
			}
			if rec := withCookie(h, "GET", "/browse/@pub/y@1.0.0/", ck); rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/login") {
				t.Errorf("a copy of the cookie after logout: %d %s, want 303 to the login form", rec.Code, rec.Header().Get("Location"))
			}
		})
	}
}

// TestLoginEndsTheBrowsersEarlierSession: a login from a browser that
// still sends a session cookie ends that session, so a copy of the old
// cookie (stolen, or planted by a sibling host before the login) stops
// working once its browser logs in again; the new cookie works.
func TestLoginEndsTheBrowsersEarlierSession(t *testing.T) {
	m, _ := privateMirror(t)
	h := m.app.Handler()
	old := login(t, h, allToken)
	req := httptest.NewRequest("POST", "/login", strings.NewReader("token="+pubToken))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(old)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var fresh *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == web.CookieName {
			fresh = c
		}
	}
	if rec.Code != http.StatusSeeOther || fresh == nil || fresh.Value == old.Value {
		t.Fatalf("second login: %d %v, want 303 with a new session cookie", rec.Code, rec.Result().Cookies())
	}
	if rec := withCookie(h, "GET", "/browse/@pub/y@1.0.0/", old); rec.Code != http.StatusSeeOther {
		t.Errorf("the earlier session's cookie after a new login: %d, want 303 to the login form", rec.Code)
	}
	if rec := withCookie(h, "GET", "/browse/@pub/y@1.0.0/", fresh); rec.Code != http.StatusOK {
		t.Errorf("the new session's cookie: %d %.200s, want 200", rec.Code, rec.Body)
	}
}

// TestPlantedCookieDoesNotLockOut: a sibling host may set a cookie of the
// same name for the parent domain, which the browser sends before the
// mirror's own; a login must still work (before: the first cookie alone
// was read, so the browser went back to the login form for as long as
// the planted cookie lived).
func TestPlantedCookieDoesNotLockOut(t *testing.T) {
	m, _ := privateMirror(t)
	h := m.app.Handler()
	own := login(t, h, allToken)
	for _, planted := range []string{"pks_" + strings.Repeat("A", 43), "garbage"} {
		req := httptest.NewRequest("GET", "/browse/@pub/y@1.0.0/", nil)
		req.AddCookie(&http.Cookie{Name: web.CookieName, Value: planted})
		req.AddCookie(own)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("a planted cookie %q before the browser's own: %d %s, want 200", planted, rec.Code, rec.Header().Get("Location"))
		}
	}
}
