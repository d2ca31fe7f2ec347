package webdocs_test

import (
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/app"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/webdocs"
)

// TestLiveWebDocs warms the real data packages (at their default pinned
// versions) through a mirror against the registry npm is configured
// with, and checks the three headline answers. MDN is whatever
// PKGSCOPE_MDN_BASE_URL says (default MDN's site); the checks hold with
// it unreachable. Opt-in: PKGSCOPE_LIVE=1.
func TestLiveWebDocs(t *testing.T) {
	if os.Getenv("PKGSCOPE_LIVE") != "1" {
		t.Skip("live registry test: set PKGSCOPE_LIVE=1 to run it")
	}
	cfg, err := config.Load("live", nil, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	a, err := app.New(t.Context(), cfg, slog.New(slog.DiscardHandler), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	start := time.Now()
	if err := a.WebDocs.Warm(t.Context()); err != nil {
		t.Fatalf("warming %+v: %v", a.WebDocs.Versions(), err)
	}
	t.Logf("cold warm of %+v: %s", a.WebDocs.Versions(), time.Since(start))

	res, err := a.WebDocs.Search(t.Context(), webdocs.SearchRequest{Query: "ResizeObserver"})
	if err != nil || len(res.Documents) == 0 || res.Documents[0].Path != "/en-US/docs/Web/API/ResizeObserver" {
		t.Errorf("search ResizeObserver: %+v %v", res, err)
	}
	c, err := a.WebDocs.GetCompat(t.Context(), "api.ResizeObserver")
	if err != nil || !strings.Contains(string(c.Data), `"chrome":{"version_added":"64"}`) || c.Baseline == nil || c.Baseline.Status != "high" {
		t.Errorf("get_compat api.ResizeObserver: %+v %v", c, err)
	}
	d, err := a.WebDocs.GetDoc(t.Context(), "/en-US/docs/Web/API/ResizeObserver/ResizeObserver")
	if err != nil || !strings.Contains(d.IDL, "constructor(ResizeObserverCallback callback);") {
		t.Errorf("get_doc ResizeObserver(): %+v %v", d, err)
	}
	t.Logf("get_doc source %s, note %q", d.Source, d.Note)

	// fetch is declared on a mixin Window includes, and MDN keys its page
	// api.fetch.
	f, err := a.WebDocs.GetDoc(t.Context(), "/en-US/docs/Web/API/Window/fetch")
	if err != nil || !strings.Contains(f.IDL, " fetch(RequestInfo input") || !strings.Contains(f.IDL, "Window includes WindowOrWorkerGlobalScope;") {
		t.Errorf("get_doc Window/fetch: IDL %q, %v", f.IDL, err)
	}
	res, err = a.WebDocs.Search(t.Context(), webdocs.SearchRequest{Query: "Window.fetch"})
	if err != nil || len(res.Documents) == 0 || res.Documents[0].Path != "/en-US/docs/Web/API/Window/fetch" {
		t.Errorf("search Window.fetch: %+v %v", res, err)
	}
	w, err := a.WebDocs.GetDoc(t.Context(), "/en-US/docs/Web/API/Window")
	if err != nil || !strings.Contains(w.IDL, "interface mixin WindowOrWorkerGlobalScope {") || !strings.Contains(w.IDL, " fetch(RequestInfo input") {
		t.Errorf("get_doc Window: IDL lacks the mixin's fetch: %v", err)
	}
	t.Logf("Window's IDL: %d bytes; Window.fetch's: %d bytes", len(w.IDL), len(f.IDL))
}
