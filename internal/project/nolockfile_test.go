package project_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// TestPackageJSONWithoutLockfile: a project registered from a package.json
// alone installs nothing a lockfile pins, so every project-wide answer
// says so, with what to do, and none claims to be complete; a read gets
// the same advice instead of a bare not-found.
func TestPackageJSONWithoutLockfile(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lim := project.DefaultLimits()
	lim.Wait = 0
	svc := project.New(st, noWarm{}, nil, lim, warm.NewParseSlots(1))
	exLim := explore.DefaultLimits()
	ex := project.NewExplorer(svc, explore.New(explore.Options{Store: st, Limits: exLim}), project.ExplorerLimits{Glob: exLim.Glob})
	reg, err := svc.Register(ctx, project.Upload{Lockfile: project.File{Name: "package.json",
		Content: `{"name":"app","dependencies":{"react":"^19.0.0"},"devDependencies":{"typescript":"~5.8.0"}}`}})
	if err != nil {
		t.Fatal(err)
	}
	advises := func(s string) bool {
		return strings.Contains(s, "package.json but no lockfile") && strings.Contains(s, "npm install --package-lock-only") && strings.Contains(s, "packageName")
	}
	for _, r := range []explore.Request{
		{Action: "list"},
		{Action: "glob", Patterns: []string{"**/*.d.ts"}},
		{Action: "grep", Pattern: "useState"},
	} {
		r.Project = reg.ID
		ans, err := ex.ExploreProject(ctx, r)
		if err != nil {
			t.Fatalf("%s: %v", r.Action, err)
		}
		var notes []string
		var complete bool
		switch a := ans.(type) {
		case *project.ListAnswer:
			notes, complete = a.Notes, a.Complete
		case *project.GrepAnswer:
			notes, complete = a.Notes, a.Complete
		default:
			t.Fatalf("%s answered a %T", r.Action, ans)
		}
		if complete || !advises(strings.Join(notes, "\n")) {
			t.Errorf("%s over a package.json-only project: complete %v, notes %q; want complete false and a note saying what to do", r.Action, complete, notes)
		}
	}
	_, err = ex.ExploreProject(ctx, explore.Request{Action: "read", Project: reg.ID, Path: "node_modules/react/package.json"})
	var nf *explore.NotFoundError
	if !errors.As(err, &nf) || !advises(err.Error()) {
		t.Errorf("read in a package.json-only project: %v; want a not-found saying what to do", err)
	}
}
