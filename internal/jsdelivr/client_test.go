package jsdelivr_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/jsdelivr"
	"github.com/pkgscope/pkgscope/internal/jsdelivr/fakejsdelivr"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/unavailable"
)

func newClient(t *testing.T, fj *fakejsdelivr.Server, tweak ...func(*jsdelivr.Config)) *jsdelivr.Client {
	t.Helper()
	cfg := jsdelivr.Config{DataURL: fj.DataURL(), CDNURL: fj.CDNURL()}
	for _, f := range tweak {
		f(&cfg)
	}
	c, err := jsdelivr.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// publish puts one small package in the fake: three versions, latest 1.2.0.
func publish(t *testing.T, fj *fakejsdelivr.Server, name string) {
	t.Helper()
	for _, v := range []string{"1.0.0", "1.2.0", "2.0.0-beta.1"} {
		fj.Publish(name, v, tarballtest.Package(t, map[string]string{
			"package.json":       `{"name":"` + name + `","version":"` + v + `","main":"dist/index.js"}`,
			"dist/index.js":      "module.exports = '" + v + "';\n",
			"dist/index.min.js":  "module.exports='" + v + "';",
			"README.md":          "# " + name,
			"src/deep/nested.ts": "export const v = '" + v + "';\n",
		}))
	}
}

func TestResolve(t *testing.T) {
	fj := fakejsdelivr.New(t)
	publish(t, fj, "lib")
	publish(t, fj, "@scope/lib")
	c := newClient(t, fj)
	cases := []struct{ name, spec, want string }{
		{"lib", "", "1.2.0"},
		{"lib", "latest", "1.2.0"},
		{"lib", "1.0.0", "1.0.0"},
		{"lib", "^1.0.0", "1.2.0"},
		{"lib", "~1.0", "1.0.0"},
		{"lib", "2.0.0-beta.1", "2.0.0-beta.1"},
		{"lib", "^9", ""}, // null: known package, no match
		{"@scope/lib", "1", "1.2.0"},
	}
	for _, tc := range cases {
		got, err := c.Resolve(t.Context(), tc.name, tc.spec)
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%s, %q) = %q, %v; want %q", tc.name, tc.spec, got, err, tc.want)
		}
	}
	if _, err := c.Resolve(t.Context(), "nope", "1"); !errors.Is(err, jsdelivr.ErrNotFound) {
		t.Errorf("unknown package: %v, want ErrNotFound", err)
	}
}

func TestListing(t *testing.T) {
	fj := fakejsdelivr.New(t)
	publish(t, fj, "@scope/lib")
	c := newClient(t, fj)
	l, err := c.Listing(t.Context(), "@scope/lib", "1.2.0")
	if err != nil {
		t.Fatal(err)
	}
	if l.Name != "@scope/lib" || l.Version != "1.2.0" || l.Default == nil || *l.Default != "/dist/index.min.js" {
		t.Errorf("listing head = %+v", l)
	}
	var names []string
	for _, f := range l.Files {
		names = append(names, f.Name)
	}
	// jsDelivr's order: directories first at each level.
	if got := strings.Join(names, ","); got != "/dist/index.js,/dist/index.min.js,/src/deep/nested.ts,/README.md,/package.json" {
		t.Errorf("flat order = %s", got)
	}
	files, err := l.StoreFiles()
	if err != nil {
		t.Fatal(err)
	}
	want := "README.md dist/index.js dist/index.min.js package.json src/deep/nested.ts"
	var got []string
	for _, f := range files {
		got = append(got, f.Path)
	}
	if strings.Join(got, " ") != want {
		t.Errorf("store files = %q, want byte order %q", got, want)
	}
	body := "module.exports = '1.2.0';\n"
	if files[1].Hash != store.HashOf([]byte(body)) || files[1].Size != int64(len(body)) {
		t.Errorf("dist/index.js = %+v", files[1])
	}
}

// TestErrorKinds: only a 404 is "not found"; jsDelivr's 403 for an
// oversized package and every failure are unavailable.
func TestErrorKinds(t *testing.T) {
	fj := fakejsdelivr.New(t)
	publish(t, fj, "lib")
	fj.TooLarge("lib", "1.0.0")
	c := newClient(t, fj)
	ctx := t.Context()

	_, err := c.Listing(ctx, "lib", "9.9.9")
	if !errors.Is(err, jsdelivr.ErrNotFound) {
		t.Errorf("unknown version: %v, want ErrNotFound", err)
	}
	_, err = c.File(ctx, "lib", "1.2.0", "nope.js", 0)
	if !errors.Is(err, jsdelivr.ErrNotFound) {
		t.Errorf("unknown file: %v, want ErrNotFound", err)
	}
	var ue *unavailable.Error
	for what, err := range map[string]error{
		"listing": func() error { _, err := c.Listing(ctx, "lib", "1.0.0"); return err }(),
		"file":    func() error { _, err := c.File(ctx, "lib", "1.0.0", "README.md", 0); return err }(),
	} {
		if errors.Is(err, jsdelivr.ErrNotFound) || !errors.As(err, &ue) || ue.Status != 403 || !errors.Is(err, jsdelivr.ErrPackageTooLarge) {
			t.Errorf("oversized package %s: %v, want an unavailable 403 wrapping ErrPackageTooLarge", what, err)
		}
	}
	fj.Fail(http.StatusServiceUnavailable)
	if _, err := c.Resolve(ctx, "lib", "1"); !errors.As(err, &ue) || ue.Status != 503 || errors.Is(err, jsdelivr.ErrNotFound) {
		t.Errorf("jsDelivr down: %v, want an unavailable 503", err)
	}
}

func TestCaps(t *testing.T) {
	fj := fakejsdelivr.New(t)
	publish(t, fj, "lib")
	c := newClient(t, fj, func(c *jsdelivr.Config) { c.MaxListingBytes = 100 })
	if _, err := c.Listing(t.Context(), "lib", "1.2.0"); !errors.Is(err, jsdelivr.ErrTooLarge) {
		t.Errorf("listing over MaxListingBytes: %v, want ErrTooLarge", err)
	}
	if _, err := c.File(t.Context(), "lib", "1.2.0", "README.md", 3); !errors.Is(err, jsdelivr.ErrTooLarge) {
		t.Errorf("file over its cap: %v, want ErrTooLarge", err)
	}
}

// TestTimeout: a jsDelivr that accepts the request and never answers is
// unavailable after Config.Timeout; a caller's own cancellation is
// returned as it is.
func TestTimeout(t *testing.T) {
	stuck := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stuck:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(stuck); srv.Close() })
	c, err := jsdelivr.New(jsdelivr.Config{DataURL: srv.URL, CDNURL: srv.URL, Timeout: 50 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ue *unavailable.Error
	if _, err := c.Resolve(t.Context(), "lib", "1"); !errors.As(err, &ue) {
		t.Errorf("stuck jsDelivr: %v, want unavailable", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.File(ctx, "lib", "1.0.0", "a.js", 0); !errors.Is(err, context.Canceled) || errors.As(err, &ue) {
		t.Errorf("cancelled caller: %v, want context.Canceled", err)
	}
}

func TestNewRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"", "data.example", "ftp://x", "http://"} {
		if _, err := jsdelivr.New(jsdelivr.Config{DataURL: u, CDNURL: "http://x"}, nil); err == nil || !strings.Contains(err.Error(), "jsdelivr-data-url") {
			t.Errorf("DataURL %q: %v, want an error naming the setting", u, err)
		}
	}
}
