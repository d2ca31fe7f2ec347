// Package upstream talks to the npm registry: abbreviated packuments and
// integrity-verified tarballs. Its configuration (registry URL, per-scope
// registries, auth tokens) comes from npm's own configuration, never from a
// host name written in this repository.
package upstream

import "errors"

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
	Version    string `json:"version"`
	Dist       Dist   `json:"dist"`
	Deprecated any    `json:"deprecated,omitempty"`
}

// Dist locates and authenticates a version's tarball.
type Dist struct {
	Tarball      string `json:"tarball"`
	Integrity    string `json:"integrity,omitempty"`
	Shasum       string `json:"shasum,omitempty"`
	UnpackedSize int64  `json:"unpackedSize,omitempty"`
	FileCount    int    `json:"fileCount,omitempty"`
}
