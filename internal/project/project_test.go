package project_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// cancelAfterLookup is a real store whose project lookup ends the
// caller's context once it has answered: the registration then reaches
// its parse with a context that is done.
type cancelAfterLookup struct {
	*sqlite.Store
	cancel context.CancelFunc
}

func (s cancelAfterLookup) Project(ctx context.Context, id string) (store.Project, error) {
	defer s.cancel()
	return s.Store.Project(ctx, id)
}

type noWarm struct{}

func (noWarm) Submit(context.Context, string, []warm.Want) (string, error) { return "w", nil }

// TestRegisterTakesAParseSlot: a project's lockfile is parsed within one
// of the slots POST /v1/warm takes (max-lockfile-parses): with the only
// slot held elsewhere, a registration waits for it, and one whose caller
// gives up meanwhile is a 503 naming the setting, never a parse on top.
func TestRegisterTakesAParseSlot(t *testing.T) {
	st, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	slots := warm.NewParseSlots(1)
	svc := project.New(cancelAfterLookup{st, cancel}, noWarm{}, nil, project.DefaultLimits(), slots)
	if err := slots.Acquire(t.Context()); err != nil { // a warm POST's parse
		t.Fatal(err)
	}
	lock := `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/a": {"version": "1.0.0"}}}`
	_, err = svc.Register(ctx, project.Upload{Lockfile: project.File{Name: "package-lock.json", Content: lock}})
	var he *echo.HTTPError
	if !errors.As(err, &he) || he.Code != http.StatusServiceUnavailable {
		t.Fatalf("register with every parse slot taken: %v, want 503 naming max-lockfile-parses", err)
	}
	slots.Release()
	reg, err := svc.Register(t.Context(), project.Upload{Lockfile: project.File{Name: "package-lock.json", Content: lock}})
	if err != nil || reg.Packages != 1 {
		t.Fatalf("register with a free slot: %+v, %v", reg, err)
	}
	if len(slots) != 0 {
		t.Errorf("the registration kept its parse slot")
	}
}
