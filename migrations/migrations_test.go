package migrations

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDialectsInStep checks both directories hold the same migration
// files, so a schema change cannot land in one store and not the other.
func TestDialectsInStep(t *testing.T) {
	names := func(fsys fs.FS) []string {
		t.Helper()
		m, err := fs.Glob(fsys, "*.sql")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	pg, lite := names(Postgres), names(SQLite)
	if len(pg) == 0 {
		t.Fatal("no Postgres migrations embedded")
	}
	if !slices.Equal(pg, lite) {
		t.Errorf("Postgres migrations %q, SQLite migrations %q: want the same files", pg, lite)
	}
	for _, fsys := range []fs.FS{Postgres, SQLite} {
		for _, name := range names(fsys) {
			b, err := fs.ReadFile(fsys, name)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"-- +goose Up", "-- +goose Down"} {
				if !strings.Contains(string(b), want) {
					t.Errorf("%s lacks %q", name, want)
				}
			}
		}
	}
}
