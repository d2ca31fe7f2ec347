package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/pkgscope/pkgscope/internal/store"
)

// PutSession implements store.SessionStore.
func (s *Store) PutSession(ctx context.Context, ss store.Session) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
	defer cancel()
	_, err := s.pool.Exec(ctx, `INSERT INTO web_sessions (hash, token_id, created_at, seen_at) VALUES ($1, $2, $3, $4)`,
		ss.Hash, ss.TokenID, ss.CreatedAt, ss.SeenAt)
	if err != nil {
		return fmt.Errorf("postgres: put session: %w", interpretError(err))
	}
	return nil
}

// Session implements store.SessionStore.
func (s *Store) Session(ctx context.Context, hash string) (store.Session, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	ss := store.Session{Hash: hash}
	err := s.pool.QueryRow(ctx, `SELECT token_id, created_at, seen_at FROM web_sessions WHERE hash = $1`, hash).
		Scan(&ss.TokenID, &ss.CreatedAt, &ss.SeenAt)
	if err != nil {
		return store.Session{}, fmt.Errorf("postgres: session: %w", interpretError(err))
	}
	return ss, nil
}

// TouchSession implements store.SessionStore.
func (s *Store) TouchSession(ctx context.Context, hash string, at time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `UPDATE web_sessions SET seen_at = $2 WHERE hash = $1 AND seen_at < $2`, hash, at); err != nil {
		return fmt.Errorf("postgres: touch session: %w", interpretError(err))
	}
	return nil
}

// DeleteSession implements store.SessionStore.
func (s *Store) DeleteSession(ctx context.Context, hash string) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `DELETE FROM web_sessions WHERE hash = $1`, hash); err != nil {
		return fmt.Errorf("postgres: delete session: %w", interpretError(err))
	}
	return nil
}

// PruneSessions implements store.SessionStore.
func (s *Store) PruneSessions(ctx context.Context, created, seen time.Time) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
	defer cancel()
	tag, err := s.pool.Exec(ctx, `DELETE FROM web_sessions WHERE created_at < $1 OR seen_at < $2`, created, seen)
	if err != nil {
		return 0, fmt.Errorf("postgres: prune sessions: %w", interpretError(err))
	}
	return tag.RowsAffected(), nil
}
