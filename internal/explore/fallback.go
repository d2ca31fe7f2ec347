package explore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/pkgpath"
	"github.com/pkgscope/pkgscope/internal/store"
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

// FallbackOptions configure when a Service answers from its Fallback.
type FallbackOptions struct {
	// ColdBudget is how long a request waits for a cold fill before the
	// fallback answers it; the fill goes on, and later requests are served
	// from the store. 0 waits for the fill, however long it takes.
	ColdBudget time.Duration
	// Source names the fallback in answers (SourceJSDelivr).
	Source string
	Logger *slog.Logger
}

// SetFallback makes s answer from fb when the registry cannot serve a
// version (it is unavailable or timed out) and, with a ColdBudget, while a
// cold fill takes longer than that. Call it before serving.
func (s *Service) SetFallback(fb Fallback, opt FallbackOptions) {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Source == "" {
		opt.Source = SourceJSDelivr
	}
	s.fallback, s.fbOpt = fb, opt
}

// OpenStored is Open without the fallback: the answer always comes from
// the store, after a fill when needed, however long that takes. The
// jsDelivr-compatible endpoints use it, since their hashes and sizes must
// be the store's.
func (s *Service) OpenStored(ctx context.Context, t Target) (*Opened, error) {
	return s.open(ctx, t, true)
}

// StoredFile is File without the fallback (see OpenStored).
func (s *Service) StoredFile(ctx context.Context, t Target, rawPath string) (store.File, []byte, *Opened, error) {
	o, err := s.OpenStored(ctx, t)
	if err != nil {
		return store.File{}, nil, nil, err
	}
	return s.StoredFileOf(ctx, o, rawPath)
}

// StoredFileOf returns one file of a version OpenStored opened.
func (s *Service) StoredFileOf(ctx context.Context, o *Opened, rawPath string) (store.File, []byte, *Opened, error) {
	path, err := pkgpath.CleanQuery(rawPath)
	if err != nil {
		return store.File{}, nil, nil, &InputError{Field: "path", Err: err}
	}
	return s.fileOf(ctx, o, path)
}

// registryDown reports a failure the fallback may answer for: the
// registry unavailable, or the fill's own deadline (not the caller's).
func registryDown(ctx context.Context, err error) bool {
	var unav *upstream.UnavailableError
	return ctx.Err() == nil && (errors.As(err, &unav) || errors.Is(err, context.DeadlineExceeded))
}

// errFillInstead is a fallback failure on a version opened within the cold
// budget: the fill is under way, so the caller waits for it instead.
var errFillInstead = errors.New("fallback failed during a cold fill")

// resolveElsewhere answers a spec the registry could not resolve.
func (s *Service) resolveElsewhere(ctx context.Context, name string, spec npmspec.Spec, cause error) (*Opened, error) {
	version, err := s.fallback.Resolve(ctx, name, spec)
	if err != nil {
		return nil, fmt.Errorf("resolving %s@%s: %w (fallback %s: %v)", name, spec.Raw, cause, s.fbOpt.Source, err)
	}
	// The store may hold that version already.
	if files, err := s.store.Files(ctx, name, version); err == nil {
		return &Opened{Name: name, Version: version, Files: files}, nil
	}
	o, err := s.openElsewhere(ctx, name, version, cause)
	if err != nil {
		return nil, fmt.Errorf("resolving %s@%s: %w", name, spec.Raw, err)
	}
	return o, nil
}

// fillOrFallback brings a version missing from the store in, answering
// from the fallback when the registry fails, or when the fill outlasts the
// cold budget.
func (s *Service) fillOrFallback(ctx context.Context, name, version string) (*Opened, error) {
	var err error
	if s.fbOpt.ColdBudget <= 0 {
		err = s.filler.Fill(ctx, name, version)
	} else {
		done := make(chan error, 1)
		// Detached, so that a cold answer from the fallback leaves the
		// fill running for the next request; the fill chain's own
		// fill-timeout bounds it.
		go func() { done <- s.filler.Fill(context.WithoutCancel(ctx), name, version) }()
		budget := time.NewTimer(s.fbOpt.ColdBudget)
		defer budget.Stop()
		select {
		case err = <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-budget.C:
			o, ferr := s.openElsewhere(ctx, name, version, nil)
			if ferr == nil {
				return o, nil
			}
			s.fbOpt.Logger.Warn("cold fill: the fallback could not answer; waiting for the fill",
				"package", name, "version", version, "source", s.fbOpt.Source, "err", ferr)
			select {
			case err = <-done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	if err != nil && registryDown(ctx, err) {
		o, ferr := s.openElsewhere(ctx, name, version, err)
		if ferr == nil {
			return o, nil
		}
		return nil, fmt.Errorf("fetching %s@%s: %w", name, version, ferr)
	}
	if err != nil {
		return nil, fmt.Errorf("fetching %s@%s: %w", name, version, err)
	}
	return s.stored(ctx, name, version)
}

// openElsewhere lists a version from the fallback. cause is the registry's
// failure, nil for a cold answer; a fallback failure returns cause (so the
// caller sees the registry's 503, never a 404) with the fallback's error
// in the message.
func (s *Service) openElsewhere(ctx context.Context, name, version string, cause error) (*Opened, error) {
	files, err := s.fallback.Files(ctx, name, version)
	if err != nil {
		if cause == nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w (fallback %s: %v)", cause, s.fbOpt.Source, err)
	}
	return &Opened{Name: name, Version: version, Files: files, Source: s.fbOpt.Source, cause: cause}, nil
}

// stored lists a version the store holds.
func (s *Service) stored(ctx context.Context, name, version string) (*Opened, error) {
	files, err := s.store.Files(ctx, name, version)
	if err != nil {
		return nil, fmt.Errorf("listing %s@%s: %w", name, version, err)
	}
	return &Opened{Name: name, Version: version, Files: files}, nil
}

// waitStored waits for the fill of a version first answered from the
// fallback within the cold budget, and lists it from the store.
func (s *Service) waitStored(ctx context.Context, name, version string) (*Opened, error) {
	if err := s.filler.Fill(ctx, name, version); err != nil {
		return nil, fmt.Errorf("fetching %s@%s: %w", name, version, err)
	}
	return s.stored(ctx, name, version)
}

// fromElsewhere reports whether o was answered by the fallback.
func (o *Opened) fromElsewhere() bool { return o.Source != "" && o.Source != SourceRegistry }

// body reads f's bytes from wherever o came from, setting f.Binary for a
// fallback's file (its listing cannot say).
func (s *Service) body(ctx context.Context, o *Opened, f *store.File) ([]byte, error) {
	if !o.fromElsewhere() {
		return s.store.Blob(ctx, f.Hash)
	}
	b, err := s.fallback.Read(ctx, o.Name, o.Version, *f)
	var lim *LimitError
	switch {
	case err == nil:
		f.Binary = ingest.IsBinary(b)
		return b, nil
	case errors.As(err, &lim):
		return nil, err
	case o.cause != nil:
		return nil, fmt.Errorf("%w (fallback %s: %v)", o.cause, o.Source, err)
	}
	return nil, fmt.Errorf("%w: %v", errFillInstead, err)
}

// grepElsewhere greps a version the fallback answered for.
func (s *Service) grepElsewhere(ctx context.Context, o *Opened, q index.Query) (*GrepResult, error) {
	fg, err := s.fallback.Grep(ctx, o.Name, o.Version, o.Files, q)
	switch {
	case err == nil:
	case errors.Is(err, index.ErrBadPattern), errors.Is(err, index.ErrBadQuery):
		return nil, err
	case o.cause != nil:
		return nil, fmt.Errorf("%w (fallback %s: %v)", o.cause, o.Source, err)
	default:
		return nil, fmt.Errorf("%w: %v", errFillInstead, err)
	}
	out := grepResult(o, fg.Result)
	out.Source = o.Source
	complete := fg.Complete
	out.Complete = &complete
	out.IncompleteReason, out.FilesNotSearched = fg.Reason, fg.FilesNotSearched
	return out, nil
}

// fileOf finds path in o's files and reads its body. A fallback failure
// on a cold answer waits for the fill and reads the stored file.
func (s *Service) fileOf(ctx context.Context, o *Opened, path string) (store.File, []byte, *Opened, error) {
	i := sort.Search(len(o.Files), func(i int) bool { return o.Files[i].Path >= path })
	if i == len(o.Files) || o.Files[i].Path != path {
		return store.File{}, nil, nil, &NotFoundError{What: fmt.Sprintf("file %q in %s@%s (list or glob the package to see its files)", path, o.Name, o.Version)}
	}
	f := o.Files[i]
	body, err := s.body(ctx, o, &f)
	if errors.Is(err, errFillInstead) {
		s.fbOpt.Logger.Warn("cold fill: the fallback could not read a file; waiting for the fill",
			"package", o.Name, "version", o.Version, "path", path, "err", err)
		if o, err = s.waitStored(ctx, o.Name, o.Version); err != nil {
			return store.File{}, nil, nil, err
		}
		return s.fileOf(ctx, o, path)
	}
	if err != nil {
		return store.File{}, nil, nil, fmt.Errorf("reading %s from %s@%s: %w", path, o.Name, o.Version, err)
	}
	return f, body, o, nil
}

// Resolve validates t and resolves it with the registry (never the
// fallback): the exact version npm would install. Errors as Open's.
func (s *Service) Resolve(ctx context.Context, t Target) (string, error) {
	if err := npmspec.ValidateName(t.PackageName); err != nil {
		return "", &InputError{Field: "packageName", Err: err}
	}
	spec, err := npmspec.ParseSpec(t.Version)
	if err != nil {
		return "", &InputError{Field: "version", Err: err}
	}
	v, err := s.resolver.Resolve(ctx, t.PackageName, spec)
	if err != nil {
		return "", fmt.Errorf("resolving %s@%s: %w", t.PackageName, spec.Raw, err)
	}
	return v, nil
}
