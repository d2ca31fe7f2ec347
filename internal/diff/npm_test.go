package diff_test

import (
	"github.com/pkgscope/pkgscope/internal/pathglob"

	"context"
	"flag"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/pkgscope/pkgscope/internal/diff"
	"github.com/pkgscope/pkgscope/internal/diff/difftest"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
)

var update = flag.Bool("update", false, "rewrite difftest's golden npm diff outputs from npm")

// TestMatchesNpmDiff ingests the fixture versions into a store, renders
// every difftest case from the stored file lists and bodies, and compares
// the text with the real `npm diff` run against a fake registry serving
// the same tarballs. It is the one test that runs npm diff: it also checks
// that npm still prints difftest's golden files, which the other diff
// tests (internal/app) compare with.
func TestMatchesNpmDiff(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	reg := fakeregistry.New(t)
	difftest.Publish(t, reg)
	st, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for v, tgz := range difftest.Tarballs(t) {
		if _, err := ingest.Ingest(ctx, st, difftest.Package, v, "sha512-x", tgz, ingest.DefaultLimits()); err != nil {
			t.Fatal(err)
		}
	}
	cache := t.TempDir()
	var warm sync.Once
	for _, c := range difftest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			// The first npm run fills the shared cache; the others then
			// run in parallel without racing to write it.
			warm.Do(func() { difftest.NpmDiff(t, reg.URL(), cache, difftest.Cases()[0]) })
			t.Parallel()
			want := difftest.NpmDiff(t, reg.URL(), cache, c)
			if *update {
				if err := os.WriteFile(difftest.GoldenFile(c), []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if golden := difftest.Want(t, c); golden != want {
				t.Errorf("npm diff no longer prints %s (the oracle of internal/app's diff tests); if npm changed, rerun with -update:\n--- npm diff:\n%s\n--- golden:\n%s",
					difftest.GoldenFile(c), want, golden)
			}
			got := render(t, ctx, st, c)
			if got != want {
				i := firstDifference(got, want)
				t.Errorf("diff differs from npm diff at byte %d: got %q, npm diff %q\n--- got:\n%s\n--- npm diff:\n%s",
					i, excerpt(got, i), excerpt(want, i), got, want)
			}
		})
	}
}

func render(t *testing.T, ctx context.Context, st store.Reader, c difftest.Case) string {
	t.Helper()
	oldFiles, err := st.Files(ctx, difftest.Package, c.From)
	if err != nil {
		t.Fatal(err)
	}
	newFiles, err := st.Files(ctx, difftest.Package, c.To)
	if err != nil {
		t.Fatal(err)
	}
	flt, err := diff.NewFilter(c.Paths, pathglob.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	o := diff.Options{NameOnly: c.NameOnly, Context: 3, IgnoreAllSpace: c.IgnoreAllSpace,
		NoPrefix: c.NoPrefix, SrcPrefix: c.SrcPrefix, DstPrefix: c.DstPrefix}
	if c.Context != nil {
		o.Context = *c.Context
	}
	var b strings.Builder
	for _, ch := range diff.Changes(oldFiles, newFiles, flt.Match) {
		var ob, nb []byte
		if ch.Old != nil {
			if ob, err = st.Blob(ctx, ch.Old.Hash); err != nil {
				t.Fatal(err)
			}
		}
		if ch.New != nil {
			if nb, err = st.Blob(ctx, ch.New.Hash); err != nil {
				t.Fatal(err)
			}
		}
		b.WriteString(diff.Render(ch, ob, nb, c.From, c.To, o).Text)
	}
	return diff.Finish(b.String())
}

func firstDifference(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func excerpt(s string, i int) string {
	return s[max(0, i-40):min(len(s), i+40)]
}
