package config

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pkgscope/pkgscope/internal/cache"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/jsdelivr"
	"github.com/pkgscope/pkgscope/internal/lockfile"
	"github.com/pkgscope/pkgscope/internal/pglock"
	"github.com/pkgscope/pkgscope/internal/redisconn"
	"github.com/pkgscope/pkgscope/internal/search"
	"github.com/pkgscope/pkgscope/internal/upstream"
	"github.com/pkgscope/pkgscope/internal/webdocs"
)

// TestDefaultsAreThePackages: the settings' defaults, mapped to each
// package's options, are that package's own defaults, so a default is
// written once and config cannot drift from it (the tarball timeout once
// was 4 minutes here and 5 in upstream).
func TestDefaultsAreThePackages(t *testing.T) {
	t.Parallel()
	c := Default()
	c.DataDir = "/data"
	up := c.Upstream()
	up.Clock = nil
	wantUp := upstream.DefaultConfig()
	wantUp.Clock = nil
	ex := c.Explore()
	ex.MaxMatches, ex.MaxContextLines = 0, 0 // the searcher's caps, checked in GrepLimits
	jc := c.JSDelivr()
	jc.DataURL, jc.CDNURL = "", ""
	rd := c.Redis()
	rd.URL = ""
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"upstream", up, wantUp},
		{"ingest", c.Ingest(), ingest.DefaultLimits()},
		{"lockfile", c.Lockfile(), lockfile.DefaultLimits()},
		{"fill", c.Fill(), fill.Options{Timeout: c.FillTimeout, FailedRetryAfter: fill.DefaultFailedRetryAfter, Ingest: ingest.DefaultLimits()}},
		{"grep", c.GrepLimits(), index.DefaultSearchLimits()},
		{"search", c.Search(), search.DefaultOptions(filepath.Join("/data", "indexes"))},
		{"explore", ex, explore.DefaultLimits()},
		{"jsdelivr", jc, jsdelivr.DefaultConfig()},
		{"fallback", c.Fallback(), jsdelivr.DefaultFallbackOptions()},
		{"redis", rd, redisconn.DefaultOptions()},
		{"pglock", c.PGLock(), pglock.DefaultOptions()},
		{"cache", c.Cache(), cache.DefaultOptions()},
		{"fill slots", c.FillSlots().Stats(), fill.NewSlots(fill.DefaultMaxFills, fill.DefaultMaxFillWaiters).Stats()},
		{"webdocs", c.WebDocs(), webdocs.Options{Versions: webdocs.DefaultVersions(), Limits: webdocs.DefaultLimits(), MDN: webdocs.DefaultMDNOptions()}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: the settings' defaults map to\n%+v\nnot the package's own\n%+v", tc.name, tc.got, tc.want)
		}
	}
}

// TestEnvNamesFollowFlags: every setting's variable is its flag's name
// upper-cased after PKGSCOPE_.
func TestEnvNamesFollowFlags(t *testing.T) {
	t.Parallel()
	c, err := Load("mirror", nil, envOf(map[string]string{
		"PKGSCOPE_MAX_GLOB_BRACE_GROUPS": "3",
		"PKGSCOPE_JSDELIVR_GREP_TIMEOUT": "7s",
		"PKGSCOPE_WEBDOCS_IDL_VERSION":   "1.2.3",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxGlobBraceGroups != 3 || c.JSDelivrGrepTimeout.String() != "7s" || c.WebDocsIDLVersion != "1.2.3" {
		t.Errorf("env not applied: %d %s %q", c.MaxGlobBraceGroups, c.JSDelivrGrepTimeout, c.WebDocsIDLVersion)
	}
}
