package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuild(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "3f2c9ab0123456789abcdef0123456789abcdef0"},
		{Key: "vcs.time", Value: "2026-12-06T03:00:00Z"},
		{Key: "vcs.modified", Value: "false"},
	}}
	dirty := &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "3f2c9ab0123456789abcdef0123456789abcdef0"},
		{Key: "vcs.modified", Value: "true"},
	}}
	installed := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}}
	for _, tc := range []struct {
		name                  string
		bi                    *debug.BuildInfo
		version, commit, date string
		want                  Info
		short                 string
	}{
		{"release stamp wins", vcs, "v0.1.0", "abc", "2026-01-01T00:00:00Z",
			Info{Version: "v0.1.0", Commit: "abc", Date: "2026-01-01T00:00:00Z", Go: "go1.26.8"}, "v0.1.0 (abc)"},
		{"git checkout", vcs, "", "", "",
			Info{Version: "dev", Commit: "3f2c9ab0123456789abcdef0123456789abcdef0", Date: "2026-12-06T03:00:00Z", Go: "go1.26.8"}, "dev (3f2c9ab)"},
		{"uncommitted changes", dirty, "", "", "",
			Info{Version: "dev", Commit: "3f2c9ab0123456789abcdef0123456789abcdef0-dirty", Go: "go1.26.8"}, "dev (3f2c9ab-dirty)"},
		{"go install at a version", installed, "", "", "",
			Info{Version: "v1.2.3", Go: "go1.26.8"}, "v1.2.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fromBuild(tc.bi, tc.version, tc.commit, tc.date)
			if got != tc.want {
				t.Errorf("fromBuild = %+v, want %+v", got, tc.want)
			}
			if s := got.Short(); s != tc.short {
				t.Errorf("Short = %q, want %q", s, tc.short)
			}
		})
	}
	if got := fromBuild(nil, "", "", ""); got.Version != "dev" || got.Go == "" {
		t.Errorf("no build info: %+v, want version dev and the runtime's Go", got)
	}
}

func TestLines(t *testing.T) {
	got := Info{Version: "v0.1.0", Commit: "abc", Date: "2026-01-01T00:00:00Z", Go: "go1.26.8"}.Lines(IndexerName)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 3 || lines[0] != "pkgscope-indexer v0.1.0" || lines[1] != "commit abc (2026-01-01T00:00:00Z)" || !strings.HasPrefix(lines[2], "go1.26.8 ") {
		t.Errorf("Lines:\n%s", got)
	}
	if got := (Info{Version: "dev", Go: "go1.26.8"}).Lines(Name); !strings.Contains(got, "commit unknown\n") {
		t.Errorf("an unknown commit should say so:\n%s", got)
	}
}

func TestIsRequest(t *testing.T) {
	for args, want := range map[string]bool{"version": true, "--version": true, "-version": true, "": false, "mcp": false, "version extra": false, "--help": false} {
		if got := IsRequest(strings.Fields(args)); got != want {
			t.Errorf("IsRequest(%q) = %v, want %v", args, got, want)
		}
	}
}
