// Package session keeps the web page's logins. A login used to store the
// API token itself in the browser's cookie for 30 days: copying the cookie
// gave a 30-day API token, and logging out only cleared the browser's copy
// (issue 25 §5). Now a login draws a random id (256 bits), gives it to the
// browser in an HttpOnly, SameSite=Strict cookie (Secure whenever the
// mirror's public URL is https), and records only its SHA-256 in the store
// with the token's public id (auth.Token.ID), so:
//
//   - the cookie is not a token: sent as a bearer token it is refused (the
//     API never reads the cookie);
//   - a session acts with the token's identity and scopes, and only while
//     the mirror still accepts the token;
//   - it ends after an idle time and after an absolute lifetime (settings
//     session-idle-timeout and session-lifetime), and at logout, on every
//     replica at once, since they share the store.
package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/pkgscope/pkgscope/internal/auth"
	"github.com/pkgscope/pkgscope/internal/store"
)

// CookieName is the cookie holding a session id.
const CookieName = "pkgscope_session"

// Defaults of the settings: a working day of inactivity ends a session,
// and none lasts more than a week, after which the token is asked again.
const (
	DefaultIdleTimeout = 12 * time.Hour
	DefaultLifetime    = 7 * 24 * time.Hour
)

// touchEvery is how stale a session's last-seen time may get before a
// request records it again: one write a minute at most per session, not
// one per page view, at the cost of idle expiry being a minute early.
const touchEvery = time.Minute

// idPrefix starts every session id, so that one found in a log or a
// header reads as a session, not a token.
const idPrefix = "pks_"

// Options configure a Manager.
type Options struct {
	// IdleTimeout ends a session not used for this long.
	IdleTimeout time.Duration
	// Lifetime ends a session this long after its login.
	Lifetime time.Duration
	// Secure marks the cookie Secure: set when the public URL is https
	// (a request that arrived over TLS gets it too).
	Secure bool
	// Clock returns the time; nil is time.Now.
	Clock func() time.Time
}

// Manager starts, checks and ends sessions.
type Manager struct {
	st     store.SessionStore
	tokens *auth.Set
	opt    Options
}

// New returns a Manager keeping sessions in st for the tokens of tokens.
func New(st store.SessionStore, tokens *auth.Set, opt Options) *Manager {
	if opt.IdleTimeout <= 0 {
		opt.IdleTimeout = DefaultIdleTimeout
	}
	if opt.Lifetime <= 0 {
		opt.Lifetime = DefaultLifetime
	}
	if opt.Clock == nil {
		opt.Clock = time.Now
	}
	return &Manager{st: st, tokens: tokens, opt: opt}
}

// Login checks token and starts a session for it, returning the cookie's
// value; ok is false when the mirror does not accept the token. Sessions
// past their bounds are pruned first, so the table holds only live ones.
func (m *Manager) Login(ctx context.Context, token string) (value string, ok bool, err error) {
	id, ok := m.tokens.Verify(token)
	if !ok {
		return "", false, nil
	}
	now := m.opt.Clock()
	if _, err := m.st.PruneSessions(ctx, now.Add(-m.opt.Lifetime), now.Add(-m.opt.IdleTimeout)); err != nil {
		return "", false, fmt.Errorf("session: login: %w", err)
	}
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	value = idPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	err = m.st.PutSession(ctx, store.Session{Hash: hash(value), TokenID: id.ID, CreatedAt: now, SeenAt: now})
	if err != nil {
		return "", false, fmt.Errorf("session: login: %w", err)
	}
	return value, true, nil
}

// Identity returns the identity session value acts with; false when it is
// not a live session (never was, logged out, idle or too old) or its
// token is no longer accepted. An error is the store failing.
func (m *Manager) Identity(ctx context.Context, value string) (auth.Identity, bool, error) {
	if !wellFormed(value) {
		return auth.Identity{}, false, nil
	}
	h := hash(value)
	s, err := m.st.Session(ctx, h)
	if errors.Is(err, store.ErrNotFound) {
		return auth.Identity{}, false, nil
	}
	if err != nil {
		return auth.Identity{}, false, fmt.Errorf("session: %w", err)
	}
	now := m.opt.Clock()
	if now.Sub(s.CreatedAt) >= m.opt.Lifetime || now.Sub(s.SeenAt) >= m.opt.IdleTimeout {
		return auth.Identity{}, false, nil
	}
	id, ok := m.tokens.ByID(s.TokenID)
	if !ok {
		return auth.Identity{}, false, nil
	}
	if now.Sub(s.SeenAt) >= touchEvery {
		if err := m.st.TouchSession(ctx, h, now); err != nil {
			return auth.Identity{}, false, fmt.Errorf("session: %w", err)
		}
	}
	return id, true, nil
}

// Logout ends session value on every replica; an unknown value is not an
// error.
func (m *Manager) Logout(ctx context.Context, value string) error {
	if !wellFormed(value) {
		return nil
	}
	if err := m.st.DeleteSession(ctx, hash(value)); err != nil {
		return fmt.Errorf("session: logout: %w", err)
	}
	return nil
}

// Cookie returns the cookie carrying value: HttpOnly (no script reads
// it), SameSite=Strict (no other site's page makes the browser send it),
// Secure when Options.Secure or the request came over TLS, and kept by
// the browser for the session's lifetime. An empty value gives the cookie
// that clears it.
func (m *Manager) Cookie(r *http.Request, value string) *http.Cookie {
	c := &http.Cookie{
		Name: CookieName, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: m.opt.Secure || r.TLS != nil, MaxAge: int(m.opt.Lifetime.Seconds()),
	}
	if value == "" {
		c.MaxAge = -1
	}
	return c
}

// wellFormed reports whether value can be a session id, so that garbage
// (or a token pasted into the cookie) costs no query.
func wellFormed(value string) bool {
	rest, ok := strings.CutPrefix(value, idPrefix)
	return ok && len(rest) == base64.RawURLEncoding.EncodedLen(32) && !strings.ContainsFunc(rest, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	})
}

func hash(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:])
}
