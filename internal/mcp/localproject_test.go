package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/mcp"
)

// TestLocalProjectOverStdio: with LocalProject (how `mirror mcp` runs), a
// call naming no package explores the local project's node_modules tree;
// a call naming one still reads that package.
func TestLocalProjectOverStdio(t *testing.T) {
	m := newMirror(t)
	m.publishFixtures()
	dir := t.TempDir()
	lock := `{"lockfileVersion": 3, "packages": {"": {"dependencies": {"grepme": "1.0.0"}},
	  "node_modules/grepme": {"version": "1.0.0", "dependencies": {"lib": "1.0.0"}},
	  "node_modules/grepme/node_modules/lib": {"version": "1.0.0"}}}`
	if err := os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := m.app.Projects.RegisterDir(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.app.Warm.Wait(t.Context(), reg.WarmRequest, nil); err != nil {
		t.Fatal(err)
	}
	cs := inMemory(t, m.app.Explorer, mcp.Options{LocalProject: func(ctx context.Context) (string, error) {
		r, err := m.app.Projects.RegisterDir(ctx, dir)
		if err != nil {
			return "", err
		}
		return r.ID, nil
	}})
	res := call(t, cs, `{"action":"grep","pattern":"foo","outputMode":"files_with_matches"}`)
	if res.IsError || !strings.Contains(text(res), "node_modules/grepme/many.js") || strings.Contains(text(res), "[incomplete") {
		t.Errorf("project grep over stdio: %s", text(res))
	}
	res = call(t, cs, `{"action":"read","path":"node_modules/grepme/node_modules/lib/a.txt"}`)
	if res.IsError || !strings.Contains(text(res), "two") {
		t.Errorf("project read over stdio: %s", text(res))
	}
	res = call(t, cs, `{"action":"list","packageName":"big"}`)
	if res.IsError || !strings.Contains(text(res), "e.js") {
		t.Errorf("package list beside a project: %s", text(res))
	}
}
