package jsdelivr_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/jsdelivr"
	"github.com/pkgscope/pkgscope/internal/jsdelivr/fakejsdelivr"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// grepFixture publishes "big": ten small files holding "needle", one
// large bundle holding it too, and an image.
func grepFixture(t *testing.T) (*fakejsdelivr.Server, []store.File) {
	fj := fakejsdelivr.New(t)
	files := map[string]string{
		"dist/bundle.js": strings.Repeat("x", 5000) + " needle\n",
		"logo.png":       "\x89PNG\x00needle",
	}
	for i := range 10 {
		files[fmt.Sprintf("src/f%d.ts", i)] = fmt.Sprintf("// file %d\nconst needle = %d;\n", i, i)
	}
	fj.Publish("big", "1.0.0", tarballtest.Package(t, files))
	fb := jsdelivr.NewFallback(newClient(t, fj), jsdelivr.FallbackOptions{})
	listed, err := fb.Files(t.Context(), "big", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	return fj, listed
}

func TestFallbackGrepComplete(t *testing.T) {
	fj, files := grepFixture(t)
	fb := jsdelivr.NewFallback(newClient(t, fj), jsdelivr.FallbackOptions{})
	g, err := fb.Grep(t.Context(), "big", "1.0.0", files, index.Query{Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	if !g.Complete || g.Reason != "" || len(g.Result.Matches) != 11 || g.Result.FilesSearched != 11 {
		t.Errorf("grep = complete %v %q, %d matches in %d files", g.Complete, g.Reason, len(g.Result.Matches), g.Result.FilesSearched)
	}
	if g.Result.FilesSkipped != 1 || g.Result.Skipped[0].Path != "logo.png" {
		t.Errorf("skipped = %d %+v, want logo.png", g.Result.FilesSkipped, g.Result.Skipped)
	}
	if n := fj.Requests("file big@1.0.0/logo.png"); n != 0 {
		t.Errorf("the image was fetched %d times: binary files are not worth the budget", n)
	}
}

// TestFallbackGrepBudget: past its budget a grep searches the smallest
// files it could fetch and says what it left out, naming the setting.
func TestFallbackGrepBudget(t *testing.T) {
	fj, files := grepFixture(t)
	cases := []struct {
		opt        jsdelivr.FallbackOptions
		searched   int
		setting    string
		notFetched string // a file that must not have been fetched
	}{
		{jsdelivr.FallbackOptions{GrepMaxFiles: 4}, 4, "jsdelivr-grep-max-files=4", "dist/bundle.js"},
		{jsdelivr.FallbackOptions{GrepMaxBytes: 1000}, 10, "jsdelivr-grep-max-bytes=1000", "dist/bundle.js"},
	}
	for _, tc := range cases {
		before := fj.Requests("file big@1.0.0/" + tc.notFetched)
		fb := jsdelivr.NewFallback(newClient(t, fj), tc.opt)
		g, err := fb.Grep(t.Context(), "big", "1.0.0", files, index.Query{Pattern: "needle"})
		if err != nil {
			t.Fatal(err)
		}
		if g.Complete || g.Result.FilesSearched != tc.searched || g.FilesNotSearched != 11-tc.searched ||
			!strings.Contains(g.Reason, tc.setting) {
			t.Errorf("%+v: complete %v, searched %d, not %d, reason %q", tc.opt, g.Complete, g.Result.FilesSearched, g.FilesNotSearched, g.Reason)
		}
		if fj.Requests("file big@1.0.0/"+tc.notFetched) != before {
			t.Errorf("%+v: %s was fetched", tc.opt, tc.notFetched)
		}
	}
}

func TestFallbackGrepFiltersAndBadPatterns(t *testing.T) {
	fj, files := grepFixture(t)
	fb := jsdelivr.NewFallback(newClient(t, fj), jsdelivr.FallbackOptions{})
	before := fj.TotalRequests()
	if _, err := fb.Grep(t.Context(), "big", "1.0.0", files, index.Query{Pattern: "a("}); !errors.Is(err, index.ErrBadPattern) {
		t.Errorf("bad pattern: %v, want ErrBadPattern", err)
	}
	if n := fj.TotalRequests(); n != before {
		t.Errorf("a bad pattern cost %d requests, want none", n-before)
	}
	g, err := fb.Grep(t.Context(), "big", "1.0.0", files, index.Query{Pattern: "needle", Filter: func(p string) bool { return p == "src/f3.ts" }})
	if err != nil || len(g.Result.Matches) != 1 || g.Result.Matches[0].File != "src/f3.ts" || !g.Complete {
		t.Errorf("filtered grep = %+v, %v", g, err)
	}
	if n := fj.TotalRequests(); n != before+1 {
		t.Errorf("a grep of one file cost %d requests, want 1", n-before)
	}
}

func TestFallbackReadChecksHashes(t *testing.T) {
	fj, files := grepFixture(t)
	fb := jsdelivr.NewFallback(newClient(t, fj), jsdelivr.FallbackOptions{})
	var f store.File
	for _, x := range files {
		if x.Path == "src/f1.ts" {
			f = x
		}
	}
	b, err := fb.Read(t.Context(), "big", "1.0.0", f)
	if err != nil || string(b) != "// file 1\nconst needle = 1;\n" {
		t.Fatalf("read = %q, %v", b, err)
	}
	f.Hash[0] ^= 1
	var ue *unavailable.Error
	if _, err := fb.Read(t.Context(), "big", "1.0.0", f); !errors.As(err, &ue) {
		t.Errorf("bytes not matching the listing: %v, want unavailable", err)
	}
	small := jsdelivr.NewFallback(newClient(t, fj, func(c *jsdelivr.Config) { c.MaxFileBytes = 10 }), jsdelivr.FallbackOptions{})
	var lim *explore.LimitError
	if _, err := small.Read(t.Context(), "big", "1.0.0", f); !errors.As(err, &lim) || lim.Setting != "jsdelivr-max-file-bytes" {
		t.Errorf("file over the cap: %v, want a LimitError naming jsdelivr-max-file-bytes", err)
	}
}

// TestFallbackCachesListings: a list, reads and a grep of one version
// cost one listing request.
func TestFallbackCachesListings(t *testing.T) {
	fj, _ := grepFixture(t)
	fb := jsdelivr.NewFallback(newClient(t, fj), jsdelivr.FallbackOptions{})
	for range 3 {
		if _, err := fb.Files(t.Context(), "big", "1.0.0"); err != nil {
			t.Fatal(err)
		}
	}
	if n := fj.Requests("listing big@1.0.0"); n != 2 { // one by grepFixture's own Fallback
		t.Errorf("%d listing requests, want 2", n)
	}
}

// TestFallbackKeepsPrivateNames: a package Public refuses is never sent.
func TestFallbackKeepsPrivateNames(t *testing.T) {
	fj := fakejsdelivr.New(t)
	publish(t, fj, "@corp/secret")
	fb := jsdelivr.NewFallback(newClient(t, fj), jsdelivr.FallbackOptions{
		Public: func(name string) bool { return !strings.HasPrefix(name, "@corp/") },
	})
	spec, _ := npmspec.ParseSpec("1")
	if _, err := fb.Resolve(t.Context(), "@corp/secret", spec); !errors.Is(err, jsdelivr.ErrPrivate) {
		t.Errorf("resolve: %v, want ErrPrivate", err)
	}
	if _, err := fb.Files(t.Context(), "@corp/secret", "1.0.0"); !errors.Is(err, jsdelivr.ErrPrivate) {
		t.Errorf("files: %v, want ErrPrivate", err)
	}
	if n := fj.TotalRequests(); n != 0 {
		t.Errorf("%d requests to jsDelivr for a private package", n)
	}
	if v, err := fb.Resolve(t.Context(), "public-lib", spec); err == nil {
		t.Errorf("unknown public package resolved to %q", v)
	}
}
