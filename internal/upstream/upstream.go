// Package upstream talks to the npm registry: abbreviated packuments and
// integrity-verified tarballs. Its configuration (registry URL, per-scope
// registries, auth tokens) comes from npm's own configuration, never from a
// host name written in this repository.
package upstream

import (
	"errors"
	"math"
)

// ErrNotFound is a genuine "no such package" answer from the registry (404).
// Only this error may become a 404 for the caller; every other failure is
// an *unavailable.Error.
var ErrNotFound = errors.New("not found in the registry")

// ErrIntegrity means the tarball bytes did not match dist.integrity (or
// dist.shasum). Such bytes are never stored.
var ErrIntegrity = errors.New("tarball integrity mismatch")

// Packument is the abbreviated package document
// (Accept: application/vnd.npm.install-v1+json).
type Packument struct {
	Name     string                      `json:"name"`
	DistTags map[string]string           `json:"dist-tags"`
	Versions map[string]PackumentVersion `json:"versions"`
}

// PackumentVersion is one version's entry in a packument.
type PackumentVersion struct {
	Version string `json:"version"`
	Dist    Dist   `json:"dist"`
	// Deprecated is the manifest's "deprecated": a message when the
	// version is deprecated (`npm deprecate`); read it with Deprecation.
	Deprecated any `json:"deprecated,omitempty"`
}

// Deprecation returns the version's deprecation message, "" when it is
// not deprecated. npm treats any truthy "deprecated" as deprecated
// (npm-pick-manifest's !mani.deprecated): a value that is not a string
// yet truthy (true, 1, an object) gives "deprecated", and false, 0, ""
// and null give "". Control characters become spaces (Printable): the
// message is quoted in text answers.
func (v PackumentVersion) Deprecation() string {
	switch d := v.Deprecated.(type) {
	case nil:
		return ""
	case string:
		return Printable(d)
	case bool:
		if !d {
			return ""
		}
	case float64:
		if d == 0 || math.IsNaN(d) {
			return ""
		}
	}
	return "deprecated"
}

// Dist locates and authenticates a version's tarball.
type Dist struct {
	Tarball      string `json:"tarball"`
	Integrity    string `json:"integrity,omitempty"`
	Shasum       string `json:"shasum,omitempty"`
	UnpackedSize int64  `json:"unpackedSize,omitempty"`
	FileCount    int    `json:"fileCount,omitempty"`
}
