// Package explore is the explore_npm service: list, glob, read (and grep)
// over one published npm package version. The JSON API and the MCP tool are
// both thin transports over this package, so they never drift apart.
//
// The actions (list and glob here, read.go, grep.go) validate the request,
// then reach the version through Versions, a chain of small links each
// wrapping the next (as internal/fill's miss path does), composed in one
// place, New:
//
//	checked → access → fallback (jsDelivr) → core: resolve → store → fill on a miss
//
// checked refuses a name that cannot be an npm package name; access refuses a package the caller's token may not read, before
// anything else is asked of anyone; fallback (fallback.go, only with a
// Fallback) answers from jsDelivr's CDN when the registry cannot serve a
// version or a cold fill outlasts its budget; core (chain.go) resolves
// with the registry, reads the store and asks the Filler (internal/fill)
// to bring a missing version in. Answers that must be the store's own
// (the jsDelivr-compatible endpoints, web docs' datasets, diff) use
// StoreOnly, the same chain without the fallback link:
//
//	checked → access → core
//
// Service is small wrappers over the chain: the actions (Explorer), Open
// and FileOf for a Target and a path as a caller writes them, and
// Versions for everything else a route asks of a package.
package explore

import (
	"context"
	"fmt"
	"sort"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/pathglob"
	"github.com/pkgscope/pkgscope/internal/pkgpath"
	"github.com/pkgscope/pkgscope/internal/store"
)

// Resolver turns a version spec into the exact version npm would install.
type Resolver interface {
	// Resolve returns an exact version, or an error wrapping
	// upstream.ErrNotFound (no such package), semver.ErrNoMatch (no such
	// version) or *unavailable.Error.
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
	// DiffMaxWork is the most work one file's line diff may take
	// (diff.Options.MaxWork); DiffPageWork the work after which a diff
	// page ends at the next file boundary, so one request costs at most
	// DiffPageWork + DiffMaxWork (a page re-renders the file it starts
	// inside when DiffRenderBytes no longer holds it: also bounded by
	// DiffMaxWork).
	DiffMaxWork, DiffPageWork int
	// Answer budgets (page.go): AnswerBytes for list, glob and grep,
	// ReadAnswerBytes for read, MaxAnswerBytes the most maxBytes may ask.
	AnswerBytes, ReadAnswerBytes, MaxAnswerBytes int
	// MatchesPerFile is grep's default per-file cap on the first pass
	// over the files in content mode (the rest comes on later pages).
	MatchesPerFile int
	// GrepScopeFiles bounds grep's per-version tables (scope.go): the
	// files of the listings whose tiers and same-bytes groups are kept,
	// summed; 0 makes them for every page.
	GrepScopeFiles int
	// FileTreeFiles bounds the file and folder trees list, glob and a
	// read of a folder keep (filetree.go): the files of the listings,
	// summed; 0 makes them for every request.
	FileTreeFiles int
	// GrepCountTime bounds the count behind the first page of a cut
	// grep (grepplace.go): past it the page says "at least N" of what
	// was counted; 0 counts to the end.
	GrepCountTime time.Duration
	// GrepCountsBeside is how many of those counts may run at once
	// beside their pages (on another goroutine, so another core), each
	// counting the tiers its page has not reached (tierCount). Past it,
	// or at 0, a page counts those after it is filled.
	GrepCountsBeside int
	// DiffPairFiles bounds what diffs keep of the version pairs they
	// compared (diffpairs.go): the files of both listings, summed over
	// the pairs; 0 makes it for every page.
	DiffPairFiles int
	// DiffRenderBytes bounds the rendered files diff pages were cut
	// inside, kept for the pages that continue them (diffpairs.go): their
	// text bytes, summed; 0 renders the file again for every page.
	DiffRenderBytes int
	// DeprecationNoteBytes is the most of a version's deprecation message
	// the first page of an answer quotes in its notes; the rest is cut.
	DeprecationNoteBytes int
}

// Options are what New composes the chain from.
type Options struct {
	// Store, Resolver and Filler make the core link: the store answers,
	// the Resolver resolves, the Filler fills a miss.
	Store    store.Reader
	Resolver Resolver
	Filler   Filler
	// Searcher greps stored versions; nil answers grep with
	// ErrGrepUnavailable.
	Searcher Searcher
	// Packuments answers Packument (package metadata); nil answers it
	// with a *NotFoundError.
	Packuments Packumenter
	// Access is the first link; nil lets every caller read every package
	// (an in-process mirror with no tokens).
	Access Access
	// Fallback, when set, adds the fallback link (Stored leaves it out).
	Fallback        Fallback
	FallbackOptions FallbackOptions
	// Suggester names packages close to an unknown one (correct.go);
	// nil leaves the correction to the name alone.
	Suggester Suggester
	Limits    Limits
	// BrowseURL is the web page's base URL ("http://127.0.0.1:7878"):
	// with it every answer names the page showing what it answered
	// (Answer.Browse), so an agent can cite the lines it read. Empty: no
	// links (a mirror whose public address is not known).
	BrowseURL string
	// Streams, when set, serves bodies over WholeBodyBytes as streams
	// (read and the raw routes), at most MaxBodyBytesInFlight of them in
	// memory at once (streams.go). Nil reads every body whole.
	Streams              store.BlobStreamer
	WholeBodyBytes       int64
	MaxBodyBytesInFlight int64
}

// Service answers explore_npm actions over a Versions chain.
type Service struct {
	pkgs     Versions
	stored   *Service // access → core; s itself without a fallback
	searcher Searcher
	suggest  Suggester
	lim      Limits
	browse   string // Options.BrowseURL
	filler   Filler // Options.Filler, for Fill
	scopes   *scopes
	pairs    *diffPairs
	renders  *diffRenders
	counts   *semaphore.Weighted // the counts running beside their pages (nil: none)
	trees    *trees
	access   Access // Options.Access (nil: every caller reads every package)
}

// New composes the read chain from opt (the order is the package
// comment's) and returns the service over it.
func New(opt Options) *Service {
	var base Versions = &core{store: opt.Store, resolver: opt.Resolver, filler: opt.Filler, searcher: opt.Searcher, pkgs: opt.Packuments,
		bodies: newBodies(opt.Streams, opt.WholeBodyBytes, opt.MaxBodyBytesInFlight)}
	full := base
	if opt.Fallback != nil {
		full = newFallback(base, opt.Fallback, opt.FallbackOptions)
	}
	if opt.Access != nil {
		// The caller's check; Service.Allow is the same check alone.
		base = &access{next: base, allow: opt.Access}
		full = &access{next: full, allow: opt.Access}
	}
	base, full = checked{base}, checked{full}
	sc, pairs, trees := newScopes(opt.Limits.GrepScopeFiles), newDiffPairs(opt.Limits.DiffPairFiles), newTrees(opt.Limits.FileTreeFiles)
	renders := newDiffRenders(opt.Limits.DiffRenderBytes)
	var counts *semaphore.Weighted
	if n := opt.Limits.GrepCountsBeside; n > 0 {
		counts = semaphore.NewWeighted(int64(n))
	}
	s := &Service{pkgs: full, searcher: opt.Searcher, suggest: opt.Suggester, lim: opt.Limits, browse: opt.BrowseURL, filler: opt.Filler, scopes: sc, pairs: pairs, renders: renders, counts: counts, trees: trees, access: opt.Access}
	s.stored = s
	if opt.Fallback != nil {
		// The same service over the chain without the fallback, sharing
		// what s holds.
		stored := *s
		stored.pkgs, stored.stored = base, &stored
		s.stored = &stored
	}
	return s
}

// StoreOnly is s without the fallback link: every answer comes from the
// store, after a fill when needed, however long that takes. The
// jsDelivr-compatible endpoints use it, since their hashes and sizes must
// be the store's, and web docs, whose datasets outlive the request.
func (s *Service) StoreOnly() *Service { return s.stored }

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
	// Deprecated is the registry's deprecation message of the version, ""
	// when it is not deprecated (or the fallback answered, which does not
	// say).
	Deprecated string
	// cause is the registry failure that led to the fallback, nil when
	// the fallback answered within the cold budget.
	cause error
}

// Spec validates t's name and spec and returns the spec parsed: what the
// chain's Resolve and Open take. Errors are *InputErrors naming the field.
func (t Target) Spec() (npmspec.Spec, error) {
	if err := npmspec.ValidateName(t.PackageName); err != nil {
		return npmspec.Spec{}, &InputError{Field: "packageName", Err: err}
	}
	spec, err := npmspec.ParseSpec(t.Version)
	if err != nil {
		return npmspec.Spec{}, &InputError{Field: "version", Err: err}
	}
	return spec, nil
}

// Open validates t, resolves it and returns the version's files, filling
// the store on a miss (Versions.Open). With a Fallback, a version the
// registry cannot serve is answered from it (Opened.Source).
func (s *Service) Open(ctx context.Context, t Target) (*Opened, error) {
	spec, err := t.Spec()
	if err != nil {
		return nil, err
	}
	if c, ok := s.pkgs.(checked); ok {
		// Spec validated the name: the chain's head would again, 1% of
		// a warm raw read's CPU (issue 27).
		return c.Versions.Open(ctx, t.PackageName, spec)
	}
	return s.pkgs.Open(ctx, t.PackageName, spec)
}

// Allow is the chain's access check alone (Options.Access): whether the
// caller of ctx may read package name, a *ForbiddenError when not. A route
// that answers from what it kept of an earlier read (the raw route's held
// answers) asks it first, as the chain would have. Access is the chain's
// one link that depends on the caller: a check of the caller added to the
// chain must be added here too, or held answers would skip it.
func (s *Service) Allow(ctx context.Context, name string) error {
	if s.access == nil {
		return nil
	}
	return s.access(ctx, name)
}

// Versions is s's read chain (the package comment's order), for routes
// that ask a package for more than the actions do: its packument
// (versions and dist-tags), a resolution, a stored version without a
// fill, a search of an opened version. A name that cannot be an npm
// package name is an *InputError before any link sees it.
func (s *Service) Versions() Versions { return s.pkgs }

// Fill brings t's version into the store and returns it once the store
// has committed it: the web page's Fetch button. Open answers as soon as
// a download is verified, before the commit; the pages that follow the
// button read the store, so they must find the version there. Resolving
// goes through the chain (the access check first); a version already
// stored is answered without a fill.
func (s *Service) Fill(ctx context.Context, t Target) (*Opened, error) {
	spec, err := t.Spec()
	if err != nil {
		return nil, err
	}
	version, err := s.pkgs.Resolve(ctx, t.PackageName, spec)
	if err != nil {
		return nil, err
	}
	if s.filler == nil {
		return s.pkgs.Open(ctx, t.PackageName, exact(version))
	}
	if err := s.filler.Fill(ctx, t.PackageName, version); err != nil {
		return nil, fmt.Errorf("fetching %s@%s: %w", t.PackageName, version, err)
	}
	return s.pkgs.Stored(ctx, t.PackageName, version)
}

// FileOf returns one file of a version Open opened: its entry, body, and
// the version it was read from (o, or the stored version when a cold
// fallback answer gave way to the fill).
func (s *Service) FileOf(ctx context.Context, o *Opened, rawPath string) (store.File, []byte, *Opened, error) {
	path, err := pkgpath.CleanQuery(rawPath)
	if err != nil {
		return store.File{}, nil, nil, &InputError{Field: "path", Err: err}
	}
	return s.fileOf(ctx, o, path)
}

// fileOf finds path in o's files and reads its body through the chain.
func (s *Service) fileOf(ctx context.Context, o *Opened, path string) (store.File, []byte, *Opened, error) {
	f, err := find(o, path)
	if err != nil {
		return store.File{}, nil, nil, err
	}
	f, body, o2, err := s.pkgs.Body(ctx, o, f)
	if err != nil {
		return store.File{}, nil, nil, fmt.Errorf("reading %s from %s@%s: %w", path, o.Name, o.Version, err)
	}
	return f, body, o2, nil
}

// find returns o's file at path, a *NotFoundError when there is none.
func find(o *Opened, path string) (store.File, error) {
	i := sort.Search(len(o.Files), func(i int) bool { return o.Files[i].Path >= path })
	if i == len(o.Files) || o.Files[i].Path != path {
		return store.File{}, &NotFoundError{What: fmt.Sprintf("file %q in %s@%s (list or glob the package to see its files)", path, o.Name, o.Version)}
	}
	return o.Files[i], nil
}

// InputError is a request the caller must fix: the API answers 400.
type InputError struct {
	Field string
	Err   error
}

func (e *InputError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }
