package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/pkgscope/pkgscope/internal/store"
)

// testMaintenance checks what `indexer reindex` relies on: versions under
// an older ingest format or without an index of a format are listed in
// order and bounded; a reset leaves a failed record with no files and no
// index, which CommitVersion then replaces; and only ready versions under
// an older format are reset.
func testMaintenance(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, b, c := small("1.0.0"), small("2.0.0"), newFixture("zed", "1.0.0", map[string][]byte{"z.js": []byte("z")})
	for _, fx := range []fixture{c, b, a} {
		commit(t, s, fx)
	}
	if err := s.MarkFailed(ctx, "broken", "1.0.0", "integrity"); err != nil {
		t.Fatal(err)
	}
	refs := func(what string, got []store.VersionRef, err error, want ...string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var names []string
		for _, r := range got {
			names = append(names, r.Name+"@"+r.Version)
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s = %q, want %q", what, names, want)
		}
	}

	// Every version starts at ingest format 1 (the column's default).
	got, err := s.OlderIngest(ctx, 1, 10)
	refs("OlderIngest(1)", got, err)
	got, err = s.OlderIngest(ctx, 2, 10)
	refs("OlderIngest(2)", got, err, "left-pad@1.0.0", "left-pad@2.0.0", "zed@1.0.0")
	got, err = s.OlderIngest(ctx, 2, 2)
	refs("OlderIngest(2) limit 2", got, err, "left-pad@1.0.0", "left-pad@2.0.0")
	if err := s.SetIngestFormat(ctx, "zed", "1.0.0", 2); err != nil {
		t.Fatalf("SetIngestFormat: %v", err)
	}
	got, err = s.OlderIngest(ctx, 2, 10)
	refs("OlderIngest(2) after SetIngestFormat", got, err, "left-pad@1.0.0", "left-pad@2.0.0")
	for _, v := range [][2]string{{"broken", "1.0.0"}, {"absent", "1.0.0"}} {
		if err := s.SetIngestFormat(ctx, v[0], v[1], 2); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SetIngestFormat(%s@%s) = %v, want ErrNotFound", v[0], v[1], err)
		}
	}

	// Indexes: one of format 1 on a and b, of format 2 on b only.
	chunk := store.Blob{Hash: store.HashOf([]byte("chunk")), Data: []byte("chunk")}
	if err := s.PutBlobs(ctx, []store.Blob{chunk}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		version string
		format  int
	}{{"1.0.0", 1}, {"2.0.0", 1}, {"2.0.0", 2}} {
		rec := store.IndexRecord{Format: p.format, Size: 5, Chunks: []store.Hash{chunk.Hash}}
		if err := s.PutIndex(ctx, "left-pad", p.version, rec); err != nil {
			t.Fatal(err)
		}
	}
	got, err = s.Unindexed(ctx, 1, 10)
	refs("Unindexed(1)", got, err, "zed@1.0.0")
	got, err = s.Unindexed(ctx, 2, 10)
	refs("Unindexed(2)", got, err, "left-pad@1.0.0", "zed@1.0.0")
	got, err = s.Unindexed(ctx, 2, 1)
	refs("Unindexed(2) limit 1", got, err, "left-pad@1.0.0")

	// Reset: only a ready version under an older format.
	for _, v := range []struct {
		name, version string
		format        int
	}{{"zed", "1.0.0", 2}, {"broken", "1.0.0", 2}, {"absent", "1.0.0", 2}, {"left-pad", "1.0.0", 1}} {
		if did, err := s.ResetForReingest(ctx, v.name, v.version, v.format, "why"); err != nil || did {
			t.Errorf("ResetForReingest(%s@%s, %d) = %v, %v; want false, nil", v.name, v.version, v.format, did, err)
		}
	}
	checkReady(t, s, c)
	did, err := s.ResetForReingest(ctx, "left-pad", "1.0.0", 2, "re-ingesting under ingest format 2")
	if err != nil || !did {
		t.Fatalf("ResetForReingest = %v, %v; want true", did, err)
	}
	v, err := s.Version(ctx, "left-pad", "1.0.0")
	if err != nil || v.State != store.StateFailed || v.Reason != "re-ingesting under ingest format 2" {
		t.Errorf("after the reset: %+v, %v; want a failed record with the reason", v, err)
	}
	if _, err := s.Files(ctx, "left-pad", "1.0.0"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Files after the reset: %v, want ErrNotFound", err)
	}
	got, err = s.OlderIngest(ctx, 2, 10)
	refs("OlderIngest(2) after the reset", got, err, "left-pad@2.0.0")
	commit(t, s, a)
	checkReady(t, s, a)
	// The old index was built from the old files: the reset dropped it.
	if _, err := s.Index(ctx, "left-pad", "1.0.0", 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Index after the reset and a new commit: %v, want ErrNotFound", err)
	}
	checkReady(t, s, b)
	if err := s.SetIngestFormat(ctx, "left-pad", "1.0.0", 2); err != nil {
		t.Fatal(err)
	}
	got, err = s.OlderIngest(ctx, 2, 10)
	refs("OlderIngest(2) after the new commit", got, err, "left-pad@2.0.0")
}

// testCommitRecordsIngestFormat: CommitVersion records the format it is
// given (0 records 1), so reindex finds what an older binary stored.
func testCommitRecordsIngestFormat(t *testing.T, s store.Store) {
	ctx := t.Context()
	old, cur := newFixture("old", "1.0.0", map[string][]byte{"o.js": []byte("o")}), newFixture("cur", "1.0.0", map[string][]byte{"c.js": []byte("c")})
	cur.v.IngestFormat = 3
	commit(t, s, old)
	commit(t, s, cur)
	for _, tt := range []struct {
		format int
		want   []string
	}{{1, nil}, {2, []string{"old@1.0.0"}}, {3, []string{"old@1.0.0"}}, {4, []string{"cur@1.0.0", "old@1.0.0"}}} {
		got, err := s.OlderIngest(ctx, tt.format, 10)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range got {
			names = append(names, r.Name+"@"+r.Version)
		}
		if !slices.Equal(names, tt.want) {
			t.Errorf("OlderIngest(%d) = %q, want %q", tt.format, names, tt.want)
		}
	}
}
