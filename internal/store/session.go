package store

import (
	"context"
	"time"
)

// Session is a web page login (internal/session): the browser holds a
// random id in a cookie, the store only its hash, so neither a copy of
// the table nor the cookie is an API token. Every replica reads the same
// sessions, so a login on one is honoured by all and a logout on one
// ends it for all.
type Session struct {
	// Hash is the SHA-256 of the session id, 64 lower-case hex digits.
	Hash string
	// TokenID is auth.Token.ID of the token the login presented: the
	// session acts with that token's identity and scopes while the
	// mirror still accepts it.
	TokenID string
	// CreatedAt bounds the session's absolute lifetime, SeenAt (the last
	// use, recorded at most once a minute) its idle expiry.
	CreatedAt, SeenAt time.Time
}

// SessionStore keeps web sessions.
type SessionStore interface {
	// PutSession records s. ErrExists when a session of the same Hash is
	// recorded.
	PutSession(ctx context.Context, s Session) error
	// Session returns the session of hash; ErrNotFound when none is
	// recorded (never was, deleted, or pruned).
	Session(ctx context.Context, hash string) (Session, error)
	// TouchSession sets SeenAt of the session of hash to at; a session
	// that is not recorded is not an error (it was deleted meanwhile).
	TouchSession(ctx context.Context, hash string, at time.Time) error
	// DeleteSession removes the session of hash; one that is not recorded
	// is not an error, so logging out twice is safe.
	DeleteSession(ctx context.Context, hash string) error
	// PruneSessions removes the sessions created before created or last
	// seen before seen, and returns how many it removed.
	PruneSessions(ctx context.Context, created, seen time.Time) (int64, error)
}
