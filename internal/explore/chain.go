package explore

import (
	"context"
	"errors"
	"fmt"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// Versions reaches package versions: every read of every route (the
// actions, the jsDelivr-compatible endpoints, web docs' data packages)
// goes through one, built by New as a chain of links that each wrap the
// next (see the package comment). Names are validated before a link sees
// them.
type Versions interface {
	// Packument returns name's dist-tags and versions as its registry
	// lists them: an error wrapping upstream.ErrNotFound for no such
	// package, *unavailable.Error when the registry fails, a
	// *NotFoundError when the mirror serves no metadata.
	Packument(ctx context.Context, name string) (*upstream.Packument, error)
	// Resolve returns the exact version spec resolves to; errors as
	// Resolver's.
	Resolve(ctx context.Context, name string, spec npmspec.Spec) (string, error)
	// Stored returns name@version's files when the store holds them, an
	// error wrapping store.ErrNotFound when it does not. It never fills.
	Stored(ctx context.Context, name, version string) (*Opened, error)
	// Open resolves spec and returns that version's files, bringing the
	// version into the store on a miss. Errors as Resolve's, or the
	// fill's (wrapping upstream's and ingest's kinds).
	Open(ctx context.Context, name string, spec npmspec.Spec) (*Opened, error)
	// Body returns the bytes of f, one of o.Files, with f's Binary set.
	// The *Opened returned is the version the bytes came from: o, or the
	// stored version when a cold fallback answer could not read f and the
	// fill was waited for instead (then f may be a *NotFoundError).
	Body(ctx context.Context, o *Opened, f store.File) (store.File, []byte, *Opened, error)
	// BodyStream is Body as a stream the caller closes: a body over
	// Options.WholeBodyBytes is decoded from the store as it is read,
	// within the bytes-in-flight budget, never held whole.
	BodyStream(ctx context.Context, o *Opened, f store.File) (store.File, store.BlobStream, *Opened, error)
	// Search runs q over o's files; ErrGrepUnavailable without a search
	// engine. Pattern errors wrap index.ErrBadPattern or index.ErrBadQuery.
	Search(ctx context.Context, o *Opened, q index.Query) (*Searched, error)
}

// Searched is a grep's outcome.
type Searched struct {
	// Version is what was searched: the Opened given to Search, or the
	// stored version when a cold fallback answer gave way to the fill.
	Version *Opened
	Result  index.Result
	// Complete, Reason and FilesNotSearched are FallbackGrep's, set when
	// the fallback answered (Version.Source names it).
	Complete         bool
	Reason           string
	FilesNotSearched int
}

// Access decides whether the caller of ctx may read package name: nil, or
// a *ForbiddenError naming the package and why. It is the chain's first
// link; routes that do not read through the chain (POST /v1/warm) call it
// themselves.
type Access func(ctx context.Context, name string) error

// ForbiddenError is a package the caller's token may not read: 403.
type ForbiddenError struct{ Name, Why string }

func (e *ForbiddenError) Error() string { return "this token may not read " + e.Name + ": " + e.Why }

// Packumenter reads a package's dist-tags and versions (the registry
// client, which caches them for packument-ttl).
type Packumenter interface {
	// Packument returns the abbreviated packument; errors as
	// Versions.Packument's.
	Packument(ctx context.Context, name string) (*upstream.Packument, error)
}

// checked is the head link: a name that cannot be an npm package name is
// an *InputError before the access check or the registry sees it. A
// version's files and searches take an *Opened, which only the chain
// makes, so they pass through.
type checked struct{ Versions }

func checkName(name string) error {
	if err := npmspec.ValidateName(name); err != nil {
		return &InputError{Field: "packageName", Err: err}
	}
	return nil
}

func (c checked) Packument(ctx context.Context, name string) (*upstream.Packument, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return c.Versions.Packument(ctx, name)
}

func (c checked) Resolve(ctx context.Context, name string, spec npmspec.Spec) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	return c.Versions.Resolve(ctx, name, spec)
}

func (c checked) Stored(ctx context.Context, name, version string) (*Opened, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return c.Versions.Stored(ctx, name, version)
}

func (c checked) Open(ctx context.Context, name string, spec npmspec.Spec) (*Opened, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return c.Versions.Open(ctx, name, spec)
}

// access is the first link after checked: nothing reaches a package the
// caller may not read, whatever the route.
type access struct {
	next  Versions
	allow Access
}

func (a *access) Packument(ctx context.Context, name string) (*upstream.Packument, error) {
	if err := a.allow(ctx, name); err != nil {
		return nil, err
	}
	return a.next.Packument(ctx, name)
}

func (a *access) Resolve(ctx context.Context, name string, spec npmspec.Spec) (string, error) {
	if err := a.allow(ctx, name); err != nil {
		return "", err
	}
	return a.next.Resolve(ctx, name, spec)
}

func (a *access) Stored(ctx context.Context, name, version string) (*Opened, error) {
	if err := a.allow(ctx, name); err != nil {
		return nil, err
	}
	return a.next.Stored(ctx, name, version)
}

func (a *access) Open(ctx context.Context, name string, spec npmspec.Spec) (*Opened, error) {
	if err := a.allow(ctx, name); err != nil {
		return nil, err
	}
	return a.next.Open(ctx, name, spec)
}

func (a *access) Body(ctx context.Context, o *Opened, f store.File) (store.File, []byte, *Opened, error) {
	if err := a.allow(ctx, o.Name); err != nil {
		return store.File{}, nil, nil, err
	}
	return a.next.Body(ctx, o, f)
}

func (a *access) BodyStream(ctx context.Context, o *Opened, f store.File) (store.File, store.BlobStream, *Opened, error) {
	if err := a.allow(ctx, o.Name); err != nil {
		return store.File{}, nil, nil, err
	}
	return a.next.BodyStream(ctx, o, f)
}

func (a *access) Search(ctx context.Context, o *Opened, q index.Query) (*Searched, error) {
	if err := a.allow(ctx, o.Name); err != nil {
		return nil, err
	}
	return a.next.Search(ctx, o, q)
}

// core is the last link: the registry's resolution, the store, and the
// fill chain (internal/fill) on a miss. Everything it answers is the
// store's own, checked against the registry's integrity.
type core struct {
	store    store.Reader
	resolver Resolver
	filler   Filler
	searcher Searcher
	pkgs     Packumenter
	bodies   *bodies // streams.go
}

func (c *core) Packument(ctx context.Context, name string) (*upstream.Packument, error) {
	if c.pkgs == nil {
		return nil, &NotFoundError{What: "package metadata on this mirror"}
	}
	return c.pkgs.Packument(ctx, name)
}

func (c *core) Resolve(ctx context.Context, name string, spec npmspec.Spec) (string, error) {
	v, err := c.resolver.Resolve(ctx, name, spec)
	if err != nil {
		return "", fmt.Errorf("resolving %s@%s: %w", name, spec.Raw, err)
	}
	return v, nil
}

func (c *core) Stored(ctx context.Context, name, version string) (*Opened, error) {
	files, err := c.store.Files(ctx, name, version)
	if err != nil {
		return nil, fmt.Errorf("listing %s@%s: %w", name, version, err)
	}
	return &Opened{Name: name, Version: version, Files: files, Deprecated: c.deprecation(ctx, name, version)}, nil
}

// cachedVersions is the registry client's memory of version entries,
// refreshed by every packument and manifest it reads.
type cachedVersions interface {
	CachedVersion(name, version string) (upstream.PackumentVersion, bool)
}

// deprecation is name@version's deprecation message: what the registry
// said last, when the registry client still holds the version's entry
// from a packument or manifest (so a version deprecated after it was
// stored is seen once a range or tag was resolved again), else what it
// said when the version was stored. Neither asks the registry. A store
// that cannot answer gives "": the note is a hint, never a reason to
// fail the answer.
func (c *core) deprecation(ctx context.Context, name, version string) string {
	if cv, ok := c.pkgs.(cachedVersions); ok {
		if pv, ok := cv.CachedVersion(name, version); ok {
			return pv.Deprecation()
		}
	}
	v, err := c.store.Version(ctx, name, version)
	if err != nil {
		return ""
	}
	return v.Deprecated
}

func (c *core) Open(ctx context.Context, name string, spec npmspec.Spec) (*Opened, error) {
	if spec.Kind == npmspec.Version {
		// An exact version the store lists (Files answers only a ready
		// one) resolves to itself: the resolver would answer it from the
		// store too. One look-up instead of two on every warm read of an
		// exact version (issue 27).
		o, err := c.Stored(ctx, name, spec.Raw)
		if !errors.Is(err, store.ErrNotFound) {
			return o, err // the store's answer, or its failure: the resolver would ask it again
		}
	}
	version, err := c.Resolve(ctx, name, spec)
	if err != nil {
		return nil, err
	}
	o, err := c.Stored(ctx, name, version)
	if !errors.Is(err, store.ErrNotFound) {
		return o, err
	}
	files, err := c.fill(ctx, name, version)
	if err != nil {
		return nil, fmt.Errorf("fetching %s@%s: %w", name, version, err)
	}
	if files != nil {
		return &Opened{Name: name, Version: version, Files: files, Deprecated: c.deprecation(ctx, name, version)}, nil
	}
	return c.Stored(ctx, name, version)
}

// Verifier is a Searcher that can answer for a cold version before the
// store commits it: once its fill has read the tarball whole, checked
// every byte against the registry's integrity and spooled every file
// (search.Searcher.Verified; docs/ARCHITECTURE.md "The miss path").
type Verifier interface {
	// Verified returns name@version's files once they are verified, or
	// false when done closes or ctx ends first.
	Verified(ctx context.Context, name, version string, done <-chan struct{}) ([]store.File, bool)
	// VerifiedBody returns the body with hash h of a version Verified
	// returned, until the version is committed (or its commit failed);
	// false then.
	VerifiedBody(name, version string, h store.Hash) ([]byte, bool)
}

// fill brings name@version into the store. When the searcher can answer
// for it once its download is verified, fill returns its files then: the
// list, greps and reads of bodies up to the whole-body size are answered
// from the verified spool while the store writes and commits (Body); nil
// files when it returned after the commit.
func (c *core) fill(ctx context.Context, name, version string) ([]store.File, error) {
	v, ok := c.searcher.(Verifier)
	if !ok {
		return nil, c.filler.Fill(ctx, name, version)
	}
	// Offered already: answered without joining the fill, whose end (the
	// commit) nobody here waits for.
	if files, ok := v.Verified(ctx, name, version, ended); ok {
		return files, nil
	}
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		// Not cancelled with the request, which may be answered before
		// the fill ends: the wrappers of the filler (warm.OnMiss, which
		// queues a job for a fill its caller gave up on, and the
		// metrics) see how the fill itself ended. The fill chain bounds
		// it (fill-timeout).
		err = c.filler.Fill(context.WithoutCancel(ctx), name, version)
	}()
	if files, ok := v.Verified(ctx, name, version, done); ok {
		return files, nil
	}
	select {
	case <-done:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ended is a channel that is closed: Verified with it only looks.
var ended = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func (c *core) Body(ctx context.Context, o *Opened, f store.File) (store.File, []byte, *Opened, error) {
	b, err := c.store.Blob(ctx, f.Hash)
	if errors.Is(err, store.ErrNotFound) {
		if v, ok := c.searcher.(Verifier); ok {
			if b, ok := v.VerifiedBody(o.Name, o.Version, f.Hash); ok {
				return f, b, o, nil
			}
		}
		if err = c.committed(ctx, o); err == nil {
			b, err = c.store.Blob(ctx, f.Hash)
		}
	}
	if err != nil {
		return store.File{}, nil, nil, err
	}
	return f, b, o, nil
}

// committed waits for the commit of a version Open answered before it
// (fill), so that a body the store does not hold yet is read once it
// does; it returns the fill's error when the store failed meanwhile.
func (c *core) committed(ctx context.Context, o *Opened) error {
	if _, err := c.store.Files(ctx, o.Name, o.Version); !errors.Is(err, store.ErrNotFound) {
		return err // committed (the body is missing for another reason), or the store fails
	}
	if err := c.filler.Fill(ctx, o.Name, o.Version); err != nil {
		return fmt.Errorf("fetching %s@%s: %w", o.Name, o.Version, err)
	}
	return nil
}

func (c *core) BodyStream(ctx context.Context, o *Opened, f store.File) (store.File, store.BlobStream, *Opened, error) {
	if c.bodies == nil || f.Size <= c.bodies.whole {
		f, b, o, err := c.Body(ctx, o, f)
		if err != nil {
			return store.File{}, nil, nil, err
		}
		return f, wholeStream(b), o, nil
	}
	st, err := c.bodies.open(ctx, f.Hash)
	if errors.Is(err, store.ErrNotFound) {
		if err = c.committed(ctx, o); err == nil {
			st, err = c.bodies.open(ctx, f.Hash)
		}
	}
	if err != nil {
		return store.File{}, nil, nil, err
	}
	return f, st, o, nil
}

func (c *core) Search(ctx context.Context, o *Opened, q index.Query) (*Searched, error) {
	if c.searcher == nil {
		return nil, ErrGrepUnavailable
	}
	res, err := c.searcher.Search(ctx, o.Name, o.Version, q)
	if errors.Is(err, store.ErrNotFound) {
		// Opened before its commit (fill), and the store failed since:
		// as Body, wait for a fill, whose error is the answer.
		if err = c.committed(ctx, o); err == nil {
			res, err = c.searcher.Search(ctx, o.Name, o.Version, q)
		}
	}
	if err != nil {
		return nil, err
	}
	return &Searched{Version: o, Result: res, Complete: true}, nil
}

// exact is the spec of an exact version.
func exact(version string) npmspec.Spec {
	return npmspec.Spec{Raw: version, Kind: npmspec.Version}
}
