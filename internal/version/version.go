// Package version says which build of pkgscope is running: the release
// version, the commit it was built from, when, and with which Go. The
// --version flag, the version subcommand, GET /healthz, MCP's
// serverInfo.version, the first log line and the web page footer all read
// it from here, so they cannot disagree.
//
// A release (scripts/release.sh) stamps Version, Commit and Date with
// -ldflags "-X github.com/pkgscope/pkgscope/internal/version.Version=...".
// An unstamped build falls back to what the Go toolchain recorded
// (runtime/debug.ReadBuildInfo): the module version for
// `go install .../cmd/mirror@v1.2.3`, the VCS revision and time for a
// build inside a git checkout, else "dev".
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Name is the product and its server binary's name, as releases, the npm
// package and the image ship it. `go install .../cmd/mirror@latest`
// names the binary after its directory, mirror: it is the same program.
const Name = "pkgscope"

// IndexerName is the indexer binary's name in releases and the image
// (built from cmd/indexer).
const IndexerName = "pkgscope-indexer"

// Stamped at link time by release builds; empty otherwise.
var (
	// Version is the release version, e.g. v0.1.0.
	Version string
	// Commit is the full git commit hash the release was built from.
	Commit string
	// Date is the commit's time, RFC 3339 in UTC.
	Date string
)

// Info describes one build.
type Info struct {
	// Version is the release or module version, or "dev".
	Version string `json:"version"`
	// Commit is the git commit hash, or "" when unknown.
	Commit string `json:"commit,omitempty"`
	// Date is the commit time (RFC 3339), or "" when unknown.
	Date string `json:"date,omitempty"`
	// Go is the Go release that built the binary, e.g. go1.26.8.
	Go string `json:"go,omitempty"`
}

// Get returns this binary's build information.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuild(bi, Version, Commit, Date)
}

// fromBuild merges the stamped values with the toolchain's build info:
// a stamped value wins, then the module version, then the VCS settings.
func fromBuild(bi *debug.BuildInfo, version, commit, date string) Info {
	in := Info{Version: version, Commit: commit, Date: date, Go: runtime.Version()}
	if bi == nil {
		if in.Version == "" {
			in.Version = "dev"
		}
		return in
	}
	if bi.GoVersion != "" {
		in.Go = bi.GoVersion
	}
	if in.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		in.Version = bi.Main.Version
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if in.Commit == "" {
				in.Commit = s.Value
			}
		case "vcs.time":
			if in.Date == "" {
				in.Date = s.Value
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if in.Version == "" {
		in.Version = "dev"
	}
	// A build from a checkout with uncommitted changes is not that commit.
	if modified && commit == "" && in.Commit != "" {
		in.Commit += "-dirty"
	}
	return in
}

// Short is the version with a short commit, for a log line or a page
// footer: "v0.1.0 (3f2c9ab)", or "dev" alone.
func (i Info) Short() string {
	if i.Commit == "" {
		return i.Version
	}
	c := i.Commit
	if base, dirty := strings.CutSuffix(c, "-dirty"); len(base) > 7 {
		c = base[:7]
		if dirty {
			c += "-dirty"
		}
	}
	return fmt.Sprintf("%s (%s)", i.Version, c)
}

// Lines is what --version and the version subcommand print for program
// name, three lines:
//
//	pkgscope v0.1.0
//	commit 3f2c9ab0... (2026-12-06T03:00:00Z)
//	go1.26.8 linux/amd64
func (i Info) Lines(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", name, i.Version)
	commit := i.Commit
	if commit == "" {
		commit = "unknown"
	}
	if i.Date != "" {
		fmt.Fprintf(&b, "commit %s (%s)\n", commit, i.Date)
	} else {
		fmt.Fprintf(&b, "commit %s\n", commit)
	}
	fmt.Fprintf(&b, "%s %s/%s\n", i.Go, runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// IsRequest reports whether args (os.Args[1:]) ask for the version:
// `--version` or `-version` alone, or the `version` subcommand.
func IsRequest(args []string) bool {
	if len(args) != 1 {
		return false
	}
	switch args[0] {
	case "version", "--version", "-version":
		return true
	}
	return false
}
