package jsdelivr

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/lru"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/semver"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// FallbackOptions bound what the fallback fetches. A zero field takes its
// value from DefaultFallbackOptions.
type FallbackOptions struct {
	// GrepMaxFiles and GrepMaxBytes cap the files and bytes one grep
	// fetches from the CDN; the grep then searches what it got and says
	// it is incomplete. Files are fetched smallest first, which searches
	// the most files for the budget: npm packages are mostly small source
	// and type files next to a few large bundles and source maps. 64 MiB
	// is the text of most packages whole (the median npm version unpacks
	// to well under 1 MB) and costs about as much memory again for its
	// index.
	GrepMaxFiles int
	GrepMaxBytes int64
	// GrepTimeout bounds the fetching of one grep; files not arrived by
	// then are not searched. The search itself is bounded by
	// Search.Timeout.
	GrepTimeout time.Duration
	// GrepConcurrency is how many CDN requests one grep has in flight.
	GrepConcurrency int
	// MaxCachedFiles bounds the cache of listings (immutable per exact
	// version), counted in files: at about 100 bytes a file, the default
	// holds 20 MB. A list, then reads and a grep of one version cost one
	// listing request.
	MaxCachedFiles int
	// Build and Search are the index settings of a fallback grep: the
	// fetched files are indexed in memory and searched like a stored
	// version, so the answer has the same semantics.
	Build  index.BuildLimits
	Search index.SearchLimits
	// Public reports whether name may be sent to jsDelivr at all; nil
	// allows every name. The mirror refuses packages whose scope has a
	// registry of its own in .npmrc: they are private, and a public CDN
	// neither has them nor should learn their names.
	Public func(name string) bool
}

// DefaultFallbackOptions returns the defaults.
func DefaultFallbackOptions() FallbackOptions {
	return FallbackOptions{
		GrepMaxFiles:    1000,
		GrepMaxBytes:    64 << 20,
		GrepTimeout:     20 * time.Second,
		GrepConcurrency: 8,
		MaxCachedFiles:  200_000,
		Build:           index.DefaultBuildLimits(),
		Search:          index.DefaultSearchLimits(),
	}
}

// Fallback answers explore actions from jsDelivr (explore.Fallback).
type Fallback struct {
	c   *Client
	opt FallbackOptions

	cache *lru.Cache[string, []store.File]
}

var _ explore.Fallback = (*Fallback)(nil)

// NewFallback returns a Fallback over c.
func NewFallback(c *Client, opt FallbackOptions) *Fallback {
	d := DefaultFallbackOptions()
	opt.GrepMaxFiles = cmp.Or(opt.GrepMaxFiles, d.GrepMaxFiles)
	opt.GrepMaxBytes = cmp.Or(opt.GrepMaxBytes, d.GrepMaxBytes)
	opt.GrepTimeout = cmp.Or(opt.GrepTimeout, d.GrepTimeout)
	opt.GrepConcurrency = cmp.Or(opt.GrepConcurrency, d.GrepConcurrency)
	opt.MaxCachedFiles = cmp.Or(opt.MaxCachedFiles, d.MaxCachedFiles)
	if opt.Build == (index.BuildLimits{}) {
		opt.Build = d.Build
	}
	if opt.Search == (index.SearchLimits{}) {
		opt.Search = d.Search
	}
	return &Fallback{c: c, opt: opt, cache: lru.New[string, []store.File](int64(opt.MaxCachedFiles), lru.Options{})}
}

// ErrPrivate is a package Public refused: it is never sent to jsDelivr.
var ErrPrivate = errors.New("not looked up on jsDelivr: its scope has a registry of its own (private)")

func (f *Fallback) public(name string) error {
	if f.opt.Public != nil && !f.opt.Public(name) {
		return fmt.Errorf("%s: %w", name, ErrPrivate)
	}
	return nil
}

// Resolve returns the version jsDelivr resolves spec to. jsDelivr picks
// the highest version satisfying a range, where npm prefers the latest
// dist-tag when it satisfies it; the two differ only while latest is not
// the highest release in the range.
func (f *Fallback) Resolve(ctx context.Context, name string, spec npmspec.Spec) (string, error) {
	if err := f.public(name); err != nil {
		return "", err
	}
	v, err := f.c.Resolve(ctx, name, spec.Raw)
	if err != nil {
		return "", err
	}
	if v == "" {
		return "", fmt.Errorf("%s@%s: %w", name, spec.Raw, errNoVersion)
	}
	if !semver.Valid(v) {
		return "", &unavailable.Error{Source: unavailable.JSDelivr, Err: fmt.Errorf("resolving %s@%s: jsDelivr answered %q, not a version", name, spec.Raw, v)}
	}
	return v, nil
}

// Files returns the files of name@version from jsDelivr's flat listing.
func (f *Fallback) Files(ctx context.Context, name, version string) ([]store.File, error) {
	if err := f.public(name); err != nil {
		return nil, err
	}
	key := name + "@" + version
	if files, ok := f.cache.Get(key); ok {
		return files, nil
	}
	l, err := f.c.Listing(ctx, name, version)
	if err != nil {
		return nil, err
	}
	if l.Name != name || l.Version != version {
		return nil, &unavailable.Error{Source: unavailable.JSDelivr, Err: fmt.Errorf("listing %s: jsDelivr answered for %s@%s", key, l.Name, l.Version)}
	}
	files, err := l.StoreFiles()
	if err != nil {
		return nil, &unavailable.Error{Source: unavailable.JSDelivr, Err: err}
	}
	f.cache.Add(key, files, int64(len(files)))
	return files, nil
}

// Read returns the body of file from the CDN, checked against the
// listing's sha256 (a mismatch is an *unavailable.Error: jsDelivr's two
// answers disagree).
func (f *Fallback) Read(ctx context.Context, name, version string, file store.File) ([]byte, error) {
	if err := f.public(name); err != nil {
		return nil, err
	}
	if file.Size > f.c.MaxFileBytes() {
		return nil, &explore.LimitError{Setting: "jsdelivr-max-file-bytes",
			Msg: fmt.Sprintf("%s is %d bytes, more than is fetched from jsDelivr for one file (%d) while the registry is unavailable", file.Path, file.Size, f.c.MaxFileBytes())}
	}
	var b []byte
	if file.Size > 0 {
		var err error
		if b, err = f.c.File(ctx, name, version, file.Path, file.Size); err != nil {
			return nil, err
		}
	}
	if sha256.Sum256(b) != file.Hash {
		return nil, &unavailable.Error{Source: unavailable.JSDelivr, Err: fmt.Errorf("%s of %s@%s: the CDN's bytes do not match the listing's sha256", file.Path, name, version)}
	}
	return b, nil
}

// Grep fetches the files q selects, within the budget, indexes them in
// memory and searches them as a stored version would be searched.
func (f *Fallback) Grep(ctx context.Context, name, version string, files []store.File, q index.Query) (*explore.FallbackGrep, error) {
	if err := f.public(name); err != nil {
		return nil, err
	}
	// A bad pattern fails on an empty index, before anything is fetched.
	if _, err := f.search(ctx, nil, q); err != nil {
		return nil, err
	}
	var want []store.File
	var skipped []index.SkippedFile
	for i, file := range files {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch {
		case q.Filter != nil && !q.Filter(file.Path):
		case binaryExt[strings.ToLower(path.Ext(file.Path))]:
			// Not worth the budget: a stored grep skips them as binary too.
			skipped = append(skipped, index.SkippedFile{Path: file.Path, Reason: index.SkipBinary})
		default:
			want = append(want, file)
		}
	}
	slices.SortStableFunc(want, func(a, b store.File) int { return cmp.Compare(a.Size, b.Size) })
	var picked []store.File
	var n notSearched
	var budget int64
	for _, file := range want {
		switch {
		case file.Size > f.c.MaxFileBytes():
			n.tooLarge++
		case len(picked) >= f.opt.GrepMaxFiles:
			n.maxFiles++
		case budget+file.Size > f.opt.GrepMaxBytes:
			n.maxBytes++
		default:
			picked = append(picked, file)
			budget += file.Size
		}
	}
	docs, firstErr := f.fetch(ctx, name, version, picked, &n)
	if len(picked) > 0 && len(docs) == 0 {
		return nil, fmt.Errorf("grep over jsDelivr: no file could be fetched: %w", firstErr)
	}
	res, err := f.search(ctx, docs, q)
	if err != nil {
		return nil, err
	}
	if len(skipped) > 0 {
		res.FilesSkipped += len(skipped)
		res.Skipped = append(skipped, res.Skipped...)
		slices.SortFunc(res.Skipped, func(a, b index.SkippedFile) int { return strings.Compare(a.Path, b.Path) })
		res.Skipped = res.Skipped[:min(len(res.Skipped), f.opt.Search.MaxSkippedListed)]
	}
	out := &explore.FallbackGrep{Result: res, Complete: n.total() == 0, FilesNotSearched: n.total()}
	if !out.Complete {
		out.Reason = n.reason(f, len(docs))
	}
	return out, nil
}

// fetch downloads files concurrently until GrepTimeout, returning those
// that arrived and checked out; the others are counted in n.
func (f *Fallback) fetch(ctx context.Context, name, version string, files []store.File, n *notSearched) ([]index.Doc, error) {
	gctx, cancel := context.WithTimeout(ctx, f.opt.GrepTimeout)
	defer cancel()
	bodies := make([][]byte, len(files))
	errs := make([]error, len(files))
	sem := make(chan struct{}, f.opt.GrepConcurrency)
	var wg sync.WaitGroup
	for i, file := range files {
		select {
		case sem <- struct{}{}:
		case <-gctx.Done():
			errs[i] = gctx.Err()
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			bodies[i], errs[i] = f.Read(gctx, name, version, file)
		})
	}
	wg.Wait()
	var docs []index.Doc
	var first error
	for i, file := range files {
		switch {
		case errs[i] == nil:
			docs = append(docs, index.Doc{Path: file.Path, Data: bodies[i]})
		case gctx.Err() != nil && ctx.Err() == nil:
			n.timeout++
		default:
			n.failed++
			if first == nil {
				first = errs[i]
			}
		}
	}
	if first == nil && len(docs) == 0 && len(files) > 0 {
		first = gctx.Err()
	}
	return docs, first
}

// search indexes docs in memory and runs q on them.
func (f *Fallback) search(ctx context.Context, docs []index.Doc, q index.Query) (index.Result, error) {
	var buf bytes.Buffer
	if _, err := index.Build(&buf, docs, f.opt.Build); err != nil {
		return index.Result{}, fmt.Errorf("indexing files fetched from jsDelivr: %w", err)
	}
	ix, err := index.OpenBytes(buf.Bytes())
	if err != nil {
		return index.Result{}, err
	}
	defer ix.Close()
	return ix.Search(ctx, q, f.opt.Search)
}

// notSearched counts the selected files a fallback grep did not search,
// by cause.
type notSearched struct {
	tooLarge, maxFiles, maxBytes, timeout, failed int
}

func (n notSearched) total() int { return n.tooLarge + n.maxFiles + n.maxBytes + n.timeout + n.failed }

// reason says in one sentence why the grep is incomplete, naming the
// settings to raise.
func (n notSearched) reason(f *Fallback, searched int) string {
	var parts []string
	add := func(k int, why string) {
		if k > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", k, why))
		}
	}
	add(n.maxFiles, fmt.Sprintf("over the file budget (setting jsdelivr-grep-max-files=%d)", f.opt.GrepMaxFiles))
	add(n.maxBytes, fmt.Sprintf("over the byte budget (setting jsdelivr-grep-max-bytes=%d)", f.opt.GrepMaxBytes))
	add(n.tooLarge, fmt.Sprintf("larger than one fetch may be (setting jsdelivr-max-file-bytes=%d)", f.c.MaxFileBytes()))
	add(n.timeout, fmt.Sprintf("not fetched in time (setting jsdelivr-grep-timeout=%s)", f.opt.GrepTimeout))
	add(n.failed, "failed to fetch")
	return fmt.Sprintf("the registry is unavailable and jsDelivr's CDN answered instead: searched %s, %d not searched: %s",
		english.Count(searched, "file"), n.total(), strings.Join(parts, "; "))
}

// binaryExt are extensions whose files are binary in npm packages
// (images, fonts, archives, media, compiled code); a fallback grep does
// not spend its budget fetching them. SVG is text and is searched.
var binaryExt = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".avif": true, ".ico": true,
	".bmp": true, ".woff": true, ".woff2": true, ".ttf": true, ".otf": true, ".eot": true,
	".zip": true, ".gz": true, ".tgz": true, ".br": true, ".zst": true, ".wasm": true, ".node": true,
	".mp3": true, ".mp4": true, ".webm": true, ".ogg": true, ".wav": true, ".pdf": true, ".jar": true,
}
