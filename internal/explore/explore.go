// Package explore is the explore_npm service: list, glob, read (and grep)
// over one published npm package version. The JSON API and the MCP tool are
// both thin transports over this package, so they never drift apart.
//
// Every action goes the same way: validate the name and spec, resolve the
// spec to an exact version, read the file list from the store, and on a
// miss ask the Filler to bring the version in, then read again.
package explore

import (
	"context"
	"errors"
	"fmt"

	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/pathglob"
	"github.com/pkgscope/pkgscope/internal/store"
)

// Resolver turns a version spec into the exact version npm would install.
type Resolver interface {
	// Resolve returns an exact version, or an error wrapping
	// upstream.ErrNotFound (no such package), semver.ErrNoMatch (no such
	// version) or *upstream.UnavailableError.
	Resolve(ctx context.Context, name string, spec npmspec.Spec) (string, error)
}

// Filler brings a version into the store.
type Filler interface {
	// Fill returns nil once name@version is ready in the store.
	Fill(ctx context.Context, name, version string) error
}

// Limits bound what one request may ask for and get.
type Limits struct {
	DefaultReadLimit int // lines a read returns when none is asked
	MaxReadLimit     int // most lines a read may ask for
	MaxLineWidth     int // bytes of a line shown before it is cut
	MaxReadBytes     int // most content bytes one read returns
	MaxMatches       int // largest maxMatches a grep may ask for (0: the searcher's own cap)
	MaxContextLines  int // largest contextLines a grep may ask for (0: the searcher's own cap)
	Glob             pathglob.Limits
}

// Service answers explore_npm actions.
type Service struct {
	resolver Resolver
	filler   Filler
	store    store.Reader
	searcher Searcher
	access   func(ctx context.Context, name string) error
	lim      Limits
	// fallback answers when the registry cannot (fallback.go); nil
	// without one.
	fallback Fallback
	fbOpt    FallbackOptions
}

// New returns a Service reading from st, resolving with r, filling misses
// with f and grepping with g (nil: grep answers ErrGrepUnavailable).
func New(st store.Reader, r Resolver, f Filler, g Searcher, lim Limits) *Service {
	return &Service{resolver: r, filler: f, store: st, searcher: g, lim: lim}
}

// SetAccess installs the check every action makes before it touches a
// package: it returns a *ForbiddenError when the caller may not read name.
// Call it before serving.
func (s *Service) SetAccess(check func(ctx context.Context, name string) error) { s.access = check }

// ForbiddenError is a package the caller's token may not read: 403.
type ForbiddenError struct{ Name, Why string }

func (e *ForbiddenError) Error() string { return "this token may not read " + e.Name + ": " + e.Why }

// Target names a package version as the caller asked for it.
type Target struct {
	PackageName string `json:"packageName"`
	// Version is an exact version, a range or a dist-tag; empty is latest.
	Version string `json:"version,omitempty"`
}

// Opened is a resolved, stored version with its file list.
type Opened struct {
	Name    string
	Version string
	Files   []store.File
	// Source is "" for a stored version, the fallback's name (jsdelivr)
	// when the fallback answered; its files are then the fallback's.
	Source string
	// cause is the registry failure that led to the fallback, nil when
	// the fallback answered within the cold budget.
	cause error
}

// Open validates t, resolves it and returns the version's files, filling
// the store on a miss. With a Fallback (SetFallback), a version the
// registry cannot serve is answered from the fallback (Opened.Source).
func (s *Service) Open(ctx context.Context, t Target) (*Opened, error) {
	return s.open(ctx, t, false)
}

func (s *Service) open(ctx context.Context, t Target, storedOnly bool) (*Opened, error) {
	fallback := s.fallback != nil && !storedOnly
	if err := npmspec.ValidateName(t.PackageName); err != nil {
		return nil, &InputError{Field: "packageName", Err: err}
	}
	if s.access != nil {
		if err := s.access(ctx, t.PackageName); err != nil {
			return nil, err
		}
	}
	spec, err := npmspec.ParseSpec(t.Version)
	if err != nil {
		return nil, &InputError{Field: "version", Err: err}
	}
	version, err := s.resolver.Resolve(ctx, t.PackageName, spec)
	if err != nil && fallback && registryDown(ctx, err) {
		return s.resolveElsewhere(ctx, t.PackageName, spec, err)
	}
	if err != nil {
		return nil, fmt.Errorf("resolving %s@%s: %w", t.PackageName, spec.Raw, err)
	}
	files, err := s.store.Files(ctx, t.PackageName, version)
	if errors.Is(err, store.ErrNotFound) && fallback {
		return s.fillOrFallback(ctx, t.PackageName, version)
	}
	if errors.Is(err, store.ErrNotFound) {
		if err = s.filler.Fill(ctx, t.PackageName, version); err != nil {
			return nil, fmt.Errorf("fetching %s@%s: %w", t.PackageName, version, err)
		}
		files, err = s.store.Files(ctx, t.PackageName, version)
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s@%s: %w", t.PackageName, version, err)
	}
	return &Opened{Name: t.PackageName, Version: version, Files: files}, nil
}

// ListResult is the answer to list and glob.
type ListResult struct {
	PackageName string   `json:"packageName"`
	Version     string   `json:"version"`
	Files       []string `json:"files"`
	// Source is "jsdelivr" when the registry could not serve the version
	// (or not within the cold budget) and jsDelivr answered; omitted when
	// the mirror's store answered.
	Source string `json:"source,omitempty"`
}

// List returns every file path of the version, in byte order.
func (s *Service) List(ctx context.Context, t Target) (*ListResult, error) {
	return s.match(ctx, t, nil)
}

// Glob returns the paths that patterns select (OR-ed; "!p" excludes).
func (s *Service) Glob(ctx context.Context, t Target, patterns []string) (*ListResult, error) {
	if len(patterns) == 0 {
		return nil, &InputError{Field: "patterns", Err: errors.New(`give at least one glob, e.g. ["dist/**/*.d.ts"]`)}
	}
	return s.match(ctx, t, patterns)
}

func (s *Service) match(ctx context.Context, t Target, patterns []string) (*ListResult, error) {
	m, err := pathglob.Compile(patterns, s.lim.Glob)
	if err != nil {
		return nil, &InputError{Field: "patterns", Err: err}
	}
	o, err := s.Open(ctx, t)
	if err != nil {
		return nil, err
	}
	res := &ListResult{PackageName: o.Name, Version: o.Version, Files: []string{}, Source: o.Source}
	for _, f := range o.Files {
		if m.Match(f.Path) {
			res.Files = append(res.Files, f.Path)
		}
	}
	return res, nil
}

// InputError is a request the caller must fix: the API answers 400.
type InputError struct {
	Field string
	Err   error
}

func (e *InputError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }
