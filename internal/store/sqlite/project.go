package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pkgscope/pkgscope/internal/store"
)

// PutProject implements store.ProjectStore.
func (s *Store) PutProject(ctx context.Context, p store.Project) error {
	tree, err := json.Marshal(p.Packages)
	if err != nil {
		return fmt.Errorf("sqlite: put project %s: %w", p.ID, err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO projects (id, format, packages, tree, created_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			p.ID, p.Format, len(p.Packages), string(tree), time.Now().UnixMicro())
		return interpretError(err)
	})
	if err != nil {
		return fmt.Errorf("sqlite: put project %s: %w", p.ID, err)
	}
	return nil
}

// Project implements store.ProjectStore.
func (s *Store) Project(ctx context.Context, id string) (store.Project, error) {
	p := store.Project{ID: id}
	var tree string
	var created int64
	err := s.r.QueryRowContext(ctx, `SELECT format, tree, created_at FROM projects WHERE id = ?`, id).
		Scan(&p.Format, &tree, &created)
	if err != nil {
		return store.Project{}, fmt.Errorf("sqlite: project %s: %w", id, interpretError(err))
	}
	if err := json.Unmarshal([]byte(tree), &p.Packages); err != nil {
		return store.Project{}, fmt.Errorf("sqlite: project %s: stored tree: %w", id, err)
	}
	p.CreatedAt = time.UnixMicro(created)
	return p, nil
}
