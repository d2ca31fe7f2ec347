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

// VersionStates implements store.ProjectStore: one query joining the keys
// (a JSON array of [name, version] pairs) to versions' primary key.
func (s *Store) VersionStates(ctx context.Context, keys []store.VersionKey) (map[store.VersionKey]store.Version, error) {
	out := map[store.VersionKey]store.Version{}
	if len(keys) == 0 {
		return out, nil
	}
	pairs := make([][2]string, len(keys))
	for i, k := range keys {
		pairs[i] = [2]string{k.Name, k.Version}
	}
	arg, err := json.Marshal(pairs)
	if err != nil {
		return nil, fmt.Errorf("sqlite: version states: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `
		SELECT v.name, v.version, v.state, v.reason
		FROM json_each(?) AS k
		JOIN versions v ON v.name = json_extract(k.value, '$[0]') AND v.version = json_extract(k.value, '$[1]')`, string(arg))
	if err != nil {
		return nil, fmt.Errorf("sqlite: version states: %w", interpretError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var v store.Version
		var state string
		if err := rows.Scan(&v.Name, &v.Version, &state, &v.Reason); err != nil {
			return nil, fmt.Errorf("sqlite: version states: %w", err)
		}
		v.State = store.VersionState(state)
		out[store.VersionKey{Name: v.Name, Version: v.Version}] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: version states: %w", interpretError(err))
	}
	return out, nil
}
