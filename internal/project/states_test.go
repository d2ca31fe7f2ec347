package project_test

import (
	"context"
	"slices"
	"testing"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// countingStates is a real store that records which versions each
// VersionStates call asked for.
type countingStates struct {
	*sqlite.Store
	asked [][]string
}

func (s *countingStates) VersionStates(ctx context.Context, keys []store.VersionKey) (map[store.VersionKey]store.Version, error) {
	var names []string
	for _, k := range keys {
		names = append(names, k.Name)
	}
	slices.Sort(names)
	s.asked = append(s.asked, names)
	return s.Store.VersionStates(ctx, keys)
}

// TestProjectReadsOnlyUnknownStates: a project answer reads from the
// store the states of the versions it has not seen ready, and only those:
// a ready one is remembered, a pending or failed one is read every time,
// so one that turns ready (a fill, or a failed ingest done again) is seen
// on the next answer. With project-ready-versions 0 every state is read.
func TestProjectReadsOnlyUnknownStates(t *testing.T) {
	for _, remember := range []int{project.DefaultLimits().ReadyVersions, 0} {
		ctx := t.Context()
		sq, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer sq.Close()
		st := &countingStates{Store: sq}
		commit := func(name string) {
			body := []byte("module.exports = " + name + "\n")
			h := store.HashOf(body)
			if err := st.PutBlobs(ctx, []store.Blob{{Hash: h, Data: body}}); err != nil {
				t.Fatal(err)
			}
			f := store.File{Path: "index.js", Size: int64(len(body)), Hash: h, Mode: store.ModeRegular | 0o644}
			if err := st.CommitVersion(ctx, store.NewVersion{Name: name, Version: "1.0.0", Integrity: "sha512-x", Files: []store.File{f}}); err != nil {
				t.Fatal(err)
			}
		}
		lim := project.DefaultLimits()
		lim.ReadyVersions, lim.Wait = remember, 0
		svc := project.New(st, noWarm{}, nil, lim, warm.NewParseSlots(1))
		ex := project.NewExplorer(svc, explore.New(explore.Options{Store: st, Limits: explore.DefaultLimits()}), project.ExplorerLimits{})
		lock := `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/a": {"version": "1.0.0"},
			"node_modules/b": {"version": "1.0.0"}, "node_modules/c": {"version": "1.0.0"}}}`
		reg, err := svc.Register(ctx, project.Upload{Lockfile: project.File{Name: "package-lock.json", Content: lock}})
		if err != nil {
			t.Fatal(err)
		}
		commit("a")
		if err := st.MarkFailed(ctx, "b", "1.0.0", "tarball integrity mismatch"); err != nil {
			t.Fatal(err)
		}
		list := func(step string, warm, failed, pending int, asked []string) {
			t.Helper()
			st.asked = nil
			got, err := ex.ExploreProject(ctx, explore.Request{Project: reg.ID, Action: "list"})
			if err != nil {
				t.Fatal(err)
			}
			ans := got.(*project.ListAnswer)
			if ans.TotalFiles != warm || ans.FailedCount != failed || ans.PendingCount != pending {
				t.Errorf("remember %d, %s: %d files, %d failed, %d pending; want %d, %d, %d",
					remember, step, ans.TotalFiles, ans.FailedCount, ans.PendingCount, warm, failed, pending)
			}
			if remember == 0 {
				asked = []string{"a", "b", "c"}
			}
			var want [][]string
			if len(asked) > 0 {
				want = [][]string{asked}
			}
			if !slices.EqualFunc(st.asked, want, slices.Equal) {
				t.Errorf("remember %d, %s: the store was asked %v, want %v", remember, step, st.asked, want)
			}
		}
		list("first answer", 1, 1, 1, []string{"a", "b", "c"})
		list("a remembered", 1, 1, 1, []string{"b", "c"})
		commit("c")
		list("c filled", 2, 1, 0, []string{"b", "c"})
		list("c remembered", 2, 1, 0, []string{"b"})
		commit("b") // the failed ingest done again
		list("b ingested again", 3, 0, 0, []string{"b"})
		list("all remembered", 3, 0, 0, nil)
	}
}
