package app

import (
	"slices"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/redistest"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// TestDeprecationNoteFromTheStore: on Postgres with Redis, the first
// answer about a deprecated version says so, cut at
// --deprecation-note-bytes; a second mirror on the same database, whose
// registry has never heard of the package, says so too, from the stored
// record alone (and no registry request).
func TestDeprecationNoteFromTheStore(t *testing.T) {
	url, prefix := pgtest.URL(t), redistest.Prefix(t)
	shared := func(c *config.Config) {
		c.DatabaseURL, c.RedisURL, c.RedisPrefix = url, redistest.URL(t), prefix
		c.DeprecationNoteBytes = 40
	}
	a := newMirror(t, embedded, shared)
	a.reg.Publish("request", "2.88.2", tarballtest.Package(t, map[string]string{"index.js": "module.exports = 1;\n"}),
		fakeregistry.Deprecated("request has been deprecated, see https://example.com/issues/3142"))
	want := "request@2.88.2 is deprecated: request has been deprecated, see https:/… [cut at 40 bytes, setting deprecation-note-bytes]"
	b := newMirror(t, embedded, shared)
	for i, m := range []*mirror{a, b, b} {
		var res struct{ Notes []string }
		if status, body := m.explore(`{"action":"list","packageName":"request","version":"2.88.2"}`, &res); status != 200 {
			t.Fatalf("mirror %d: %d %s", i, status, body)
		}
		if !slices.Contains(res.Notes, want) {
			t.Errorf("mirror %d: notes %q, want %q", i, res.Notes, want)
		}
		// The first answer may come before the store's commit (from the
		// verified download): the second mirror, whose registry knows
		// nothing of the package, reads the committed record.
		if err := m.app.EnsureIndex(t.Context(), "request", "2.88.2"); err != nil {
			t.Fatalf("mirror %d: waiting for the commit: %v", i, err)
		}
	}
	if n := b.reg.PackumentRequests("request") + b.reg.VersionRequests("request", "2.88.2"); n != 0 {
		t.Errorf("the second mirror asked its registry %d times", n)
	}
}
