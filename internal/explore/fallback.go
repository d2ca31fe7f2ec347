package explore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/unavailable"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// Sources of an answer (the results' Source field). Answers from the
// store omit it.
const (
	SourceRegistry = "registry"
	SourceJSDelivr = "jsdelivr"
)

// Fallback answers for a version the registry cannot serve now, or not
// yet (internal/jsdelivr implements it). Nothing it returns is stored:
// its bytes were never checked against the registry's integrity. Any
// error means "the fallback cannot answer"; the caller then answers with
// the registry's own error, so a fallback's "not found" never becomes a
// 404.
type Fallback interface {
	// Resolve returns the exact version spec resolves to there.
	Resolve(ctx context.Context, name string, spec npmspec.Spec) (string, error)
	// Files returns the files of name@version sorted by Path in byte
	// order, Hash being the sha256 of each body and Binary false (not
	// known until the body is read).
	Files(ctx context.Context, name, version string) ([]store.File, error)
	// Read returns the body of f, one of Files' answer, checked against
	// f.Hash. A file over the fallback's size cap is a *LimitError.
	Read(ctx context.Context, name, version string, f store.File) ([]byte, error)
	// Grep runs q over as many of files (Files' answer, not yet
	// filtered by q.Filter) as its budget lets it fetch. Pattern errors
	// wrap index.ErrBadPattern or index.ErrBadQuery, before anything is
	// fetched.
	Grep(ctx context.Context, name, version string, files []store.File, q index.Query) (*FallbackGrep, error)
}

// FallbackGrep is a grep a Fallback answered.
type FallbackGrep struct {
	Result index.Result
	// Complete is false when files the query selected were not searched
	// (the fetch budget ran out, or a fetch failed); Reason then says
	// why, naming the setting, and FilesNotSearched counts them.
	Complete         bool
	Reason           string
	FilesNotSearched int
}

// FallbackOptions configure when the chain answers from its Fallback.
type FallbackOptions struct {
	// ColdBudget is how long a request waits for a cold fill before the
	// fallback answers it; the fill goes on, and later requests are served
	// from the store. 0 waits for the fill, however long it takes.
	ColdBudget time.Duration
	// Source names the fallback in answers (SourceJSDelivr).
	Source string
	Logger *slog.Logger
}

// fallback is the link that answers from a Fallback when the registry
// cannot serve a version (it is unavailable or timed out) and, with a
// ColdBudget, while a cold fill takes longer than that. Everything else
// it passes to next.
type fallback struct {
	next Versions
	fb   Fallback
	opt  FallbackOptions
}

func newFallback(next Versions, fb Fallback, opt FallbackOptions) *fallback {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Source == "" {
		opt.Source = SourceJSDelivr
	}
	return &fallback{next: next, fb: fb, opt: opt}
}

// registryDown reports a failure the fallback may answer for: the
// registry unavailable (not another upstream: the fallback's own failure
// is no reason to ask it), or the fill's own deadline (not the caller's).
func registryDown(ctx context.Context, err error) bool {
	var unav *unavailable.Error
	return ctx.Err() == nil && (errors.As(err, &unav) && unav.Source == unavailable.Registry || errors.Is(err, context.DeadlineExceeded))
}

func (l *fallback) Packument(ctx context.Context, name string) (*upstream.Packument, error) {
	return l.next.Packument(ctx, name)
}

func (l *fallback) Stored(ctx context.Context, name, version string) (*Opened, error) {
	return l.next.Stored(ctx, name, version)
}

// Resolve asks the fallback when the registry cannot answer.
func (l *fallback) Resolve(ctx context.Context, name string, spec npmspec.Spec) (string, error) {
	v, err := l.next.Resolve(ctx, name, spec)
	if err == nil || !registryDown(ctx, err) {
		return v, err
	}
	fv, ferr := l.fb.Resolve(ctx, name, spec)
	if ferr != nil {
		return "", fmt.Errorf("%w (fallback %s: %v)", err, l.opt.Source, ferr)
	}
	return fv, nil
}

func (l *fallback) Open(ctx context.Context, name string, spec npmspec.Spec) (*Opened, error) {
	version, err := l.next.Resolve(ctx, name, spec)
	if err != nil && registryDown(ctx, err) {
		return l.resolveElsewhere(ctx, name, spec, err)
	}
	if err != nil {
		return nil, err
	}
	o, err := l.next.Stored(ctx, name, version)
	if errors.Is(err, store.ErrNotFound) {
		return l.fillOrFallback(ctx, name, version)
	}
	return o, err
}

// resolveElsewhere answers a spec the registry could not resolve.
func (l *fallback) resolveElsewhere(ctx context.Context, name string, spec npmspec.Spec, cause error) (*Opened, error) {
	version, err := l.fb.Resolve(ctx, name, spec)
	if err != nil {
		return nil, fmt.Errorf("%w (fallback %s: %v)", cause, l.opt.Source, err)
	}
	// The store may hold that version already.
	if o, err := l.next.Stored(ctx, name, version); err == nil {
		return o, nil
	}
	o, err := l.openElsewhere(ctx, name, version, cause)
	if err != nil {
		return nil, fmt.Errorf("resolving %s@%s: %w", name, spec.Raw, err)
	}
	return o, nil
}

// fillOrFallback brings a version missing from the store in (next.Open of
// the exact version), answering from the fallback when the registry
// fails, or when the fill outlasts the cold budget.
func (l *fallback) fillOrFallback(ctx context.Context, name, version string) (*Opened, error) {
	var o *Opened
	var err error
	if l.opt.ColdBudget <= 0 {
		o, err = l.next.Open(ctx, name, exact(version))
	} else {
		type opened struct {
			o   *Opened
			err error
		}
		done := make(chan opened, 1)
		// Detached, so that a cold answer from the fallback leaves the
		// fill running for the next request; the fill chain's own
		// fill-timeout bounds it.
		go func() {
			o, err := l.next.Open(context.WithoutCancel(ctx), name, exact(version))
			done <- opened{o, err}
		}()
		budget := time.NewTimer(l.opt.ColdBudget)
		defer budget.Stop()
		var r opened
		select {
		case r = <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-budget.C:
			o, ferr := l.openElsewhere(ctx, name, version, nil)
			if ferr == nil {
				return o, nil
			}
			l.opt.Logger.Warn("cold fill: the fallback could not answer; waiting for the fill",
				"package", name, "version", version, "source", l.opt.Source, "err", ferr)
			select {
			case r = <-done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		o, err = r.o, r.err
	}
	if err != nil && registryDown(ctx, err) {
		o, ferr := l.openElsewhere(ctx, name, version, err)
		if ferr == nil {
			return o, nil
		}
		return nil, ferr
	}
	return o, err
}

// openElsewhere lists a version from the fallback. cause is the registry's
// failure, nil for a cold answer; a fallback failure returns cause (so the
// caller sees the registry's 503, never a 404) with the fallback's error
// in the message.
func (l *fallback) openElsewhere(ctx context.Context, name, version string, cause error) (*Opened, error) {
	files, err := l.fb.Files(ctx, name, version)
	if err != nil {
		if cause == nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w (fallback %s: %v)", cause, l.opt.Source, err)
	}
	return &Opened{Name: name, Version: version, Files: files, Source: l.opt.Source, cause: cause}, nil
}

// mine reports whether o was answered by this fallback.
func (l *fallback) mine(o *Opened) bool { return o.Source == l.opt.Source }

// waitStored waits for the fill of a version first answered from the
// fallback within the cold budget, and lists it from the store.
func (l *fallback) waitStored(ctx context.Context, o *Opened, err error) (*Opened, error) {
	l.opt.Logger.Warn("cold fill: the fallback could not answer; waiting for the fill",
		"package", o.Name, "version", o.Version, "source", l.opt.Source, "err", err)
	return l.next.Open(ctx, o.Name, exact(o.Version))
}

// Body reads f from the fallback for a version it answered, setting
// f.Binary (its listing cannot say). A failure on a cold answer waits for
// the fill and reads the stored file.
func (l *fallback) Body(ctx context.Context, o *Opened, f store.File) (store.File, []byte, *Opened, error) {
	if !l.mine(o) {
		return l.next.Body(ctx, o, f)
	}
	b, err := l.fb.Read(ctx, o.Name, o.Version, f)
	var lim *LimitError
	switch {
	case err == nil:
		f.Binary = ingest.IsBinary(b)
		return f, b, o, nil
	case errors.As(err, &lim):
		return store.File{}, nil, nil, err
	case o.cause != nil:
		return store.File{}, nil, nil, fmt.Errorf("%w (fallback %s: %v)", o.cause, o.Source, err)
	}
	stored, err := l.waitStored(ctx, o, err)
	if err != nil {
		return store.File{}, nil, nil, err
	}
	sf, err := find(stored, f.Path)
	if err != nil {
		return store.File{}, nil, nil, err
	}
	return l.next.Body(ctx, stored, sf)
}

// BodyStream is Body for a version the fallback answered (its files are
// bounded by jsdelivr-max-file-bytes and fetched whole), the next link's
// stream otherwise.
func (l *fallback) BodyStream(ctx context.Context, o *Opened, f store.File) (store.File, store.BlobStream, *Opened, error) {
	if !l.mine(o) {
		return l.next.BodyStream(ctx, o, f)
	}
	f, b, o, err := l.Body(ctx, o, f)
	if err != nil {
		return store.File{}, nil, nil, err
	}
	return f, wholeStream(b), o, nil
}

// Search greps a version the fallback answered for with the fallback's
// grep; a failure on a cold answer waits for the fill and greps the store.
func (l *fallback) Search(ctx context.Context, o *Opened, q index.Query) (*Searched, error) {
	if !l.mine(o) {
		return l.next.Search(ctx, o, q)
	}
	fg, err := l.fb.Grep(ctx, o.Name, o.Version, o.Files, q)
	switch {
	case err == nil:
		return &Searched{Version: o, Result: fg.Result, Complete: fg.Complete, Reason: fg.Reason, FilesNotSearched: fg.FilesNotSearched}, nil
	case errors.Is(err, index.ErrBadPattern), errors.Is(err, index.ErrBadQuery):
		return nil, err
	case o.cause != nil:
		return nil, fmt.Errorf("%w (fallback %s: %v)", o.cause, o.Source, err)
	}
	stored, err := l.waitStored(ctx, o, err)
	if err != nil {
		return nil, err
	}
	return l.next.Search(ctx, stored, q)
}
