package warm

import (
	"testing"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/store"
)

// TestReindex marks a stored version as stored under an older ingest
// format: reindex finds it, ingests it again (a second download), and
// records the current format, after which nothing is stale.
func TestReindex(t *testing.T) {
	for _, kind := range backends {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			reg := fakeregistry.New(t)
			publish(t, reg, "old", "1.0.0")
			publish(t, reg, "new", "1.0.0")
			w := newWorker(t, reg, newLocation(t, kind).open(t), testConfig(), nil)
			w.start()
			w.warm(specs("old@1.0.0", "new@1.0.0")...)
			if err := w.st.SetIngestFormat(t.Context(), "old", "1.0.0", 0); err != nil {
				t.Fatal(err)
			}
			if _, err := w.q.Stale(t.Context(), IngestFormat+1, 10); err == nil {
				t.Error("Stale accepted a format newer than the binary's")
			}
			stale, err := w.q.Stale(t.Context(), IngestFormat, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(stale) != 1 || stale[0].Name != "old" || stale[0].Spec != "1.0.0" {
				t.Fatalf("stale %+v, want old@1.0.0 alone", stale)
			}
			p := w.warm(stale...)
			if it := p.Items[0]; it.State != Done {
				t.Fatalf("reindex: %+v, want done", it)
			}
			if n := reg.TarballDownloads("old", "1.0.0"); n != 2 {
				t.Errorf("old@1.0.0 downloaded %d times, want 2 (warm, reindex)", n)
			}
			if files, err := w.st.Files(t.Context(), "old", "1.0.0"); err != nil || len(files) != 2 {
				t.Errorf("after reindex: %d files, %v; want 2", len(files), err)
			}
			if stale, err := w.q.Stale(t.Context(), IngestFormat, 10); err != nil || len(stale) != 0 {
				t.Errorf("stale after reindex: %+v, %v; want none", stale, err)
			}
			// A reindex of a version already at the format changes nothing.
			p = w.warm(Want{Name: "new", Spec: "1.0.0", Reformat: IngestFormat})
			if it := p.Items[0]; it.State != Present {
				t.Errorf("reindex of a current version: %+v, want present", it)
			}
			if n := reg.TarballDownloads("new", "1.0.0"); n != 1 {
				t.Errorf("new@1.0.0 downloaded %d times, want 1", n)
			}
		})
	}
}

// TestReindexSearch deletes a warmed version's search index, as a format
// change leaves versions without one of the current format: reindex finds
// it and builds it from the stored files, downloading nothing.
func TestReindexSearch(t *testing.T) {
	for _, kind := range backends {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			reg := fakeregistry.New(t)
			publish(t, reg, "idx", "1.0.0")
			w := newWorker(t, reg, newLocation(t, kind).open(t), testConfig(), nil)
			w.start()
			w.warm(specs("idx@1.0.0")...)
			if _, err := w.st.(store.IndexStore).Index(t.Context(), "idx", "1.0.0", index.FormatVersion); err != nil {
				t.Fatalf("the warm did not index: %v", err)
			}
			if missing, err := w.q.Unindexed(t.Context(), index.FormatVersion, 10); err != nil || len(missing) != 0 {
				t.Fatalf("unindexed after a warm: %+v, %v", missing, err)
			}
			if _, err := w.q.db.exec(t.Context(), `DELETE FROM version_indexes`); err != nil {
				t.Fatal(err)
			}
			if _, err := w.q.Unindexed(t.Context(), index.FormatVersion+1, 10); err == nil {
				t.Error("Unindexed accepted a format this binary cannot build")
			}
			missing, err := w.q.Unindexed(t.Context(), index.FormatVersion, 10)
			if err != nil || len(missing) != 1 || missing[0].Name != "idx" {
				t.Fatalf("unindexed %+v, %v; want idx@1.0.0", missing, err)
			}
			// A new process (the upgraded binary) runs the reindex: this
			// one still has the index open in memory.
			if err := w.q.Stop(t.Context()); err != nil {
				t.Fatal(err)
			}
			b := newWorker(t, reg, w.st, testConfig(), nil)
			b.start()
			if p := b.warm(missing...); p.Items[0].State != Done {
				t.Fatalf("reindex: %+v", p.Items[0])
			}
			if _, err := w.st.(store.IndexStore).Index(t.Context(), "idx", "1.0.0", index.FormatVersion); err != nil {
				t.Errorf("after reindex: %v", err)
			}
			if n := reg.TarballDownloads("idx", "1.0.0"); n != 1 {
				t.Errorf("downloaded %d times, want 1: a search reindex reads the store", n)
			}
		})
	}
}
