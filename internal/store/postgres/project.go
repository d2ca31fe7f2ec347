package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pkgscope/pkgscope/internal/store"
)

// PutProject implements store.ProjectStore.
func (s *Store) PutProject(ctx context.Context, p store.Project) error {
	tree, err := json.Marshal(p.Packages)
	if err != nil {
		return fmt.Errorf("postgres: put project %s: %w", p.ID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
	defer cancel()
	_, err = s.pool.Exec(ctx, `INSERT INTO projects (id, format, packages, tree)
		VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING`, p.ID, p.Format, len(p.Packages), string(tree))
	if err != nil {
		return fmt.Errorf("postgres: put project %s: %w", p.ID, interpretError(err))
	}
	return nil
}

// Project implements store.ProjectStore.
func (s *Store) Project(ctx context.Context, id string) (store.Project, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	p := store.Project{ID: id}
	var tree string
	err := s.pool.QueryRow(ctx, `SELECT format, tree, created_at FROM projects WHERE id = $1`, id).
		Scan(&p.Format, &tree, &p.CreatedAt)
	if err != nil {
		return store.Project{}, fmt.Errorf("postgres: project %s: %w", id, interpretError(err))
	}
	if err := json.Unmarshal([]byte(tree), &p.Packages); err != nil {
		return store.Project{}, fmt.Errorf("postgres: project %s: stored tree: %w", id, err)
	}
	return p, nil
}

// VersionStates implements store.ProjectStore: one query joining the keys
// (two unnested arrays) to versions' unique (name, version).
func (s *Store) VersionStates(ctx context.Context, keys []store.VersionKey) (map[store.VersionKey]store.Version, error) {
	out := map[store.VersionKey]store.Version{}
	if len(keys) == 0 {
		return out, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	names, versions := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		names[i], versions[i] = k.Name, k.Version
	}
	rows, err := s.pool.Query(ctx, `
		SELECT v.name, v.version, v.state, v.reason
		FROM unnest($1::text[], $2::text[]) AS k(name, version)
		JOIN versions v ON v.name = k.name AND v.version = k.version`, names, versions)
	if err != nil {
		return nil, fmt.Errorf("postgres: version states: %w", interpretError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var v store.Version
		var state string
		if err := rows.Scan(&v.Name, &v.Version, &state, &v.Reason); err != nil {
			return nil, fmt.Errorf("postgres: version states: %w", err)
		}
		v.State = store.VersionState(state)
		out[store.VersionKey{Name: v.Name, Version: v.Version}] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: version states: %w", interpretError(err))
	}
	return out, nil
}
