package app

import (
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
)

// TestLiveRegistry runs the mirror against the registry npm is configured
// with, for a few real packages. Opt-in: PKGSCOPE_LIVE=1.
func TestLiveRegistry(t *testing.T) {
	if os.Getenv("PKGSCOPE_LIVE") != "1" {
		t.Skip("live registry test: set PKGSCOPE_LIVE=1 to run it")
	}
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	a, err := New(t.Context(), cfg, slog.New(slog.DiscardHandler), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); a.Close() })
	m := &mirror{t: t, srv: srv}

	var l listResult
	if status, body := m.explore(`{"action":"glob","packageName":"lucide-react","version":"^1.0.0","patterns":"**","maxBytes":1048576}`, &l); status != 200 {
		t.Fatalf("list lucide-react: %d %s", status, body)
	}
	if !strings.HasPrefix(l.Version, "1.") || !slices.Contains(l.files(), "package.json") || len(l.files()) < 1000 {
		t.Errorf("lucide-react@^1: version %s, %d files", l.Version, len(l.files()))
	}
	// @types/* tarballs use the package's own name as their top folder.
	if status, body := m.explore(`{"action":"list","packageName":"@types/react","version":"19"}`, &l); status != 200 || !slices.Contains(l.files(), "index.d.ts") {
		t.Errorf("list @types/react@19: %d %s", status, body)
	}
	var r readResult
	if status, body := m.explore(`{"action":"read","packageName":"is-number","version":"7.0.0","path":"index.js","limit":3}`, &r); status != 200 || !strings.HasPrefix(r.Content, "     1\t/*!") {
		t.Errorf("read is-number/index.js: %d %s", status, body)
	}
}
