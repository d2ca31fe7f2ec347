package store

import (
	"context"
	"time"
)

// Project is a registered project: the node_modules tree its lockfile
// installs (lockfile.Tree), kept so that any replica can serve it. Its ID
// is a hash of what was registered, so registering the same files again
// finds the same row.
type Project struct {
	// ID is 64 lower-case hex digits (a sha256).
	ID string
	// Format is the lockfile's format ("package-lock@3", "pnpm@9", ...).
	Format string
	// Packages are the installed folders, sorted by Path.
	Packages  []ProjectPackage
	CreatedAt time.Time
}

// ProjectPackage is one folder of a project's node_modules tree.
type ProjectPackage struct {
	// Path is the folder, "node_modules/a/node_modules/b".
	Path string `json:"path"`
	// Package and Version are the registry package served at Path (for an
	// alias, the package it aliases); Version is "" when the lockfile
	// records none (git, file:, links).
	Package string `json:"package"`
	Version string `json:"version,omitempty"`
	// Kind is lockfile.Kind's name: only "registry" and "alias" folders
	// have files in the mirror; the others are listed with Reason.
	Kind   string `json:"kind"`
	Reason string `json:"reason,omitempty"`
	Direct bool   `json:"direct,omitempty"`
	Dev    bool   `json:"dev,omitempty"`
}

// ProjectStore keeps registered projects.
type ProjectStore interface {
	// PutProject records p. A project of the same ID is left as it is
	// (IDs are content hashes, so it holds the same tree) and nil is
	// returned: registering twice is cheap and safe to race.
	PutProject(ctx context.Context, p Project) error
	// Project returns project id with its packages. ErrNotFound when no
	// project has that id.
	Project(ctx context.Context, id string) (Project, error)
	// VersionStates looks up many versions in one query (a project's
	// 20,000 folders must not cost 20,000 round trips) and returns those
	// the store has recorded, ready or failed, keyed by name and version;
	// a version never recorded is absent. Only Name, Version, State and
	// Reason are set.
	VersionStates(ctx context.Context, keys []VersionKey) (map[VersionKey]Version, error)
}

// VersionKey names one version.
type VersionKey struct{ Name, Version string }
