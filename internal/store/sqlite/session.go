package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/pkgscope/pkgscope/internal/store"
)

// PutSession implements store.SessionStore.
func (s *Store) PutSession(ctx context.Context, ss store.Session) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO web_sessions (hash, token_id, created_at, seen_at) VALUES (?, ?, ?, ?)`,
			ss.Hash, ss.TokenID, ss.CreatedAt.UnixMicro(), ss.SeenAt.UnixMicro())
		return interpretError(err)
	})
	if err != nil {
		return fmt.Errorf("sqlite: put session: %w", err)
	}
	return nil
}

// Session implements store.SessionStore.
func (s *Store) Session(ctx context.Context, hash string) (store.Session, error) {
	ss := store.Session{Hash: hash}
	var created, seen int64
	err := s.r.QueryRowContext(ctx, `SELECT token_id, created_at, seen_at FROM web_sessions WHERE hash = ?`, hash).
		Scan(&ss.TokenID, &created, &seen)
	if err != nil {
		return store.Session{}, fmt.Errorf("sqlite: session: %w", interpretError(err))
	}
	ss.CreatedAt, ss.SeenAt = time.UnixMicro(created), time.UnixMicro(seen)
	return ss, nil
}

// TouchSession implements store.SessionStore.
func (s *Store) TouchSession(ctx context.Context, hash string, at time.Time) error {
	return s.sessionWrite(ctx, "touch session", `UPDATE web_sessions SET seen_at = ?2 WHERE hash = ?1 AND seen_at < ?2`, hash, at.UnixMicro())
}

// DeleteSession implements store.SessionStore.
func (s *Store) DeleteSession(ctx context.Context, hash string) error {
	return s.sessionWrite(ctx, "delete session", `DELETE FROM web_sessions WHERE hash = ?`, hash)
}

// PruneSessions implements store.SessionStore.
func (s *Store) PruneSessions(ctx context.Context, created, seen time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE created_at < ? OR seen_at < ?`, created.UnixMicro(), seen.UnixMicro())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: prune sessions: %w", err)
	}
	return n, nil
}

// sessionWrite runs one statement on web_sessions in a write transaction.
func (s *Store) sessionWrite(ctx context.Context, what, query string, args ...any) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, query, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", what, err)
	}
	return nil
}
