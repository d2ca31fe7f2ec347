// Package upstream talks to the npm registry: abbreviated packuments and
// integrity-verified tarballs. Its configuration (registry URL, per-scope
// registries, auth tokens) comes from npm's own configuration, never from a
// host name written in this repository.
package upstream

import (
	"errors"
	"fmt"
	"time"
)

// ErrNotFound is a genuine "no such package" answer from the registry (404).
// Only this error may become a 404 for the caller; every other failure is
// an *UnavailableError.
var ErrNotFound = errors.New("not found in the registry")

// ErrIntegrity means the tarball bytes did not match dist.integrity (or
// dist.shasum). Such bytes are never stored.
var ErrIntegrity = errors.New("tarball integrity mismatch")

// UnavailableError is an upstream failure that is not a genuine "not
// found": a timeout, a 5xx, a 429, a refused connection, a garbled answer.
// The API maps it to 502/503 with Retry-After.
type UnavailableError struct {
	// Status is the HTTP status the registry answered, 0 when none.
	Status int
	// RetryAfter is the registry's Retry-After, or a default.
	RetryAfter time.Duration
	Err        error
}

func (e *UnavailableError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("registry unavailable (HTTP %d): %v", e.Status, e.Err)
	}
	return fmt.Sprintf("registry unavailable: %v", e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

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
