package session

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/auth"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/postgres"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "session-test-token"

// stores opens a fresh store of each kind.
func stores(t *testing.T) map[string]store.SessionStore {
	lite, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	pg, err := postgres.Open(t.Context(), pgtest.URL(t), postgres.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	return map[string]store.SessionStore{"embedded": lite, "postgres": pg}
}

func tokens(t *testing.T, list string) *auth.Set {
	s, err := auth.Load("", list)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSessionBounds: a session acts with its token's identity until it
// is idle for IdleTimeout, or Lifetime after login however busy, or
// logged out, or its token is no longer accepted; its cookie value is
// not the token and is refused as one.
func TestSessionBounds(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
			set := tokens(t, token+":@org")
			m := New(st, set, Options{IdleTimeout: time.Hour, Lifetime: 10 * time.Hour, Clock: func() time.Time { return now }})
			login := func() string {
				t.Helper()
				v, ok, err := m.Login(t.Context(), token)
				if err != nil || !ok {
					t.Fatalf("Login: %v %v", ok, err)
				}
				return v
			}
			live := func(v string) bool {
				t.Helper()
				id, ok, err := m.Identity(t.Context(), v)
				if err != nil {
					t.Fatal(err)
				}
				if ok && (len(id.Scopes) != 1 || id.Scopes[0] != "@org") {
					t.Errorf("session identity %+v, want the token's scope @org", id)
				}
				return ok
			}
			if _, ok, err := m.Login(t.Context(), "not-a-token"); ok || err != nil {
				t.Errorf("Login with an unknown token: %v %v", ok, err)
			}
			v := login()
			if strings.Contains(v, token) {
				t.Fatalf("the session value %q carries the token", v)
			}
			if _, ok := set.Verify(v); ok {
				t.Fatal("the session value is accepted as a token")
			}
			if !live(v) || live(token) || live(v+"x") {
				t.Fatal("a fresh session is not live, or the token itself or a changed value is")
			}
			// Used every 50 minutes, it lives until its lifetime ends.
			for range 13 {
				now = now.Add(50 * time.Minute)
				if now.Sub(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)) < 10*time.Hour && !live(v) {
					t.Fatalf("a session used every 50 minutes ended at %s", now)
				}
			}
			if live(v) {
				t.Error("a session outlived its lifetime")
			}
			// Idle for an hour, it ends.
			v = login()
			now = now.Add(59 * time.Minute)
			if !live(v) {
				t.Fatal("a session ended before its idle timeout")
			}
			now = now.Add(time.Hour)
			if live(v) {
				t.Error("a session outlived its idle timeout")
			}
			// Logged out, it ends (on every replica: the store forgets it).
			v = login()
			if err := m.Logout(t.Context(), v); err != nil {
				t.Fatal(err)
			}
			if live(v) {
				t.Error("a session outlived its logout")
			}
			// Its token removed from the mirror's tokens, it ends.
			v = login()
			other := New(st, tokens(t, "another-token"), Options{IdleTimeout: time.Hour, Lifetime: 10 * time.Hour, Clock: func() time.Time { return now }})
			if _, ok, err := other.Identity(t.Context(), v); ok || err != nil {
				t.Errorf("a session whose token was removed: %v %v, want refused", ok, err)
			}
		})
	}
}

// TestCookie: HttpOnly, SameSite=Strict, Secure when the public URL is
// https (Options.Secure) or the request came over TLS.
func TestCookie(t *testing.T) {
	for _, tc := range []struct {
		secure, tls, want bool
	}{{false, false, false}, {true, false, true}, {false, true, true}} {
		m := New(nil, nil, Options{Secure: tc.secure})
		r := httptest.NewRequest("GET", "http://mirror/", nil)
		if tc.tls {
			r = httptest.NewRequest("GET", "https://mirror/", nil)
		}
		c := m.Cookie(r, "pks_x")
		if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure != tc.want || c.MaxAge != int(DefaultLifetime.Seconds()) {
			t.Errorf("secure %v, tls %v: cookie %+v", tc.secure, tc.tls, c)
		}
		if c := m.Cookie(r, ""); c.MaxAge >= 0 {
			t.Errorf("the clearing cookie keeps MaxAge %d", c.MaxAge)
		}
	}
}
