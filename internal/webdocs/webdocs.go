// Package webdocs is the explore_web_docs service: search MDN's pages,
// read one, and get a feature's browser support with its Baseline status,
// so a model does not guess which web APIs exist, their signatures, or
// where they work.
//
// Everything it knows comes from four npm packages read through the
// mirror (explore.Service), pinned by version, so it works air-gapped once
// they are warm:
//
//   - @mdn/browser-compat-data: data.json, the support tree (BCD);
//   - @ddbeck/mdn-content-inventory: index.json, every MDN page's front
//     matter (title, slug, page-type, browser-compat keys) and redirects;
//   - @webref/idl: one Web IDL file per spec;
//   - web-features: data.json, the Baseline status of each feature,
//     mapped to BCD keys.
//
// They are parsed and indexed in memory on first use (or by Warm). MDN's
// prose (article bodies and summaries) is only on MDN's site: when its
// base URL is set and it answers, get_doc shows it (and search its
// summaries), cached in memory; otherwise get_doc builds the page from the
// packages (title, page type, IDL, compat keys, spec links) and says the
// prose was unavailable.
package webdocs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/store"
)

// The data packages' names.
const (
	PackageBCD       = "@mdn/browser-compat-data"
	PackageInventory = "@ddbeck/mdn-content-inventory"
	PackageIDL       = "@webref/idl"
	PackageFeatures  = "web-features"
)

var errBadData = explore.ErrBadData

// Versions pins the four data packages (npm version specs; exact
// versions keep answers stable and let a warm mirror answer without the
// registry).
type Versions struct {
	BCD       string `json:"browserCompatData"`
	Inventory string `json:"contentInventory"`
	IDL       string `json:"webrefIdl"`
	Features  string `json:"webFeatures"`
}

// DefaultVersions are the versions this package was written and tested
// against (checked to exist with npm view, February 2026).
func DefaultVersions() Versions {
	return Versions{BCD: "8.1.9", Inventory: "0.2.20260206", IDL: "3.85.0", Features: "3.40.0"}
}

// Limits bound what one request may ask for and get.
type Limits struct {
	// MaxQueryBytes caps a search query, a path and a key. The longest BCD
	// key is 119 bytes and the longest MDN path about 150; 512 leaves room
	// for a full URL with a fragment.
	MaxQueryBytes int
	// DefaultResults is how many documents a search returns unless asked;
	// MaxResults the most it may ask for. 10 results with summaries are
	// about 3 KB; 50 is as many as a model usefully reads.
	DefaultResults, MaxResults int
	// MaxPrefixTerms bounds the index terms one query word may expand to as
	// a prefix ("res" matches 300 terms in the real index).
	MaxPrefixTerms int
	// MaxDocBytes caps get_doc's content (and the IDL it shows). MDN's
	// longest reference pages run to 150 KB of markdown; 96 KiB (about
	// 25k tokens) keeps one answer readable and is cut at a line.
	MaxDocBytes int
	// MaxCompatChildren caps the sub-features whose support data get_compat
	// returns; the rest are listed by key. api.Element has 300 children of
	// about 1 KB each.
	MaxCompatChildren int
	// MaxSuggestions is how many close keys or paths a 404 names.
	MaxSuggestions int
	// LoadTimeout bounds loading the four packages: filling them on a cold
	// mirror (BCD's tarball is 1 MB, 20 MB unpacked) and indexing them,
	// about a second once the bytes are local.
	LoadTimeout time.Duration
}

// DefaultLimits returns the defaults explained on Limits.
func DefaultLimits() Limits {
	return Limits{
		MaxQueryBytes: 512, DefaultResults: 10, MaxResults: 50, MaxPrefixTerms: 256,
		MaxDocBytes: 96 << 10, MaxCompatChildren: 100, MaxSuggestions: 5, LoadTimeout: 5 * time.Minute,
	}
}

// Packages reads files of package versions: *explore.Service, which
// serves them from the mirror and fills it from the registry on a miss.
type Packages interface {
	// Open resolves t and returns its file list; errors as explore's.
	Open(ctx context.Context, t explore.Target) (*explore.Opened, error)
	// FileOf returns one file of an opened version; an
	// *explore.NotFoundError when the version has no such file.
	FileOf(ctx context.Context, o *explore.Opened, path string) (store.File, []byte, *explore.Opened, error)
}

// Options configure a Service; zero fields take their defaults.
type Options struct {
	Versions Versions
	Limits   Limits
	MDN      MDNOptions
	Logger   *slog.Logger
	// Access, when set, is asked whether the caller may read the four
	// data packages (the read chain's first link, explore.Access) each
	// time an action (Do, Search, GetDoc, GetCompat) reads the dataset: an
	// answer is made of them, so a token that may not read them gets a
	// 403, not their contents. The packages are loaded once, as the
	// mirror.
	Access explore.Access
	// HTTPClient fetches from MDN; nil means a client with no timeout of
	// its own (each request is bounded by MDN.Timeout).
	HTTPClient *http.Client
}

// Service answers explore_web_docs actions.
type Service struct {
	pkgs   Packages
	access explore.Access
	ver    Versions
	lim    Limits
	log    *slog.Logger
	mdn    *mdnClient // nil when MDN is disabled

	cur   atomic.Pointer[dataset]
	group singleflight.Group
}

// New returns a Service reading the data packages through pkgs. It does
// not load them: the first action (or Warm) does.
func New(pkgs Packages, opt Options) *Service {
	def, defLim := DefaultVersions(), DefaultLimits()
	v := opt.Versions
	v.BCD, v.Inventory, v.IDL, v.Features = or(v.BCD, def.BCD), or(v.Inventory, def.Inventory), or(v.IDL, def.IDL), or(v.Features, def.Features)
	lim := opt.Limits
	orInt(&lim.MaxQueryBytes, defLim.MaxQueryBytes)
	orInt(&lim.DefaultResults, defLim.DefaultResults)
	orInt(&lim.MaxResults, defLim.MaxResults)
	orInt(&lim.MaxPrefixTerms, defLim.MaxPrefixTerms)
	orInt(&lim.MaxDocBytes, defLim.MaxDocBytes)
	orInt(&lim.MaxCompatChildren, defLim.MaxCompatChildren)
	orInt(&lim.MaxSuggestions, defLim.MaxSuggestions)
	lim.LoadTimeout = cmp.Or(lim.LoadTimeout, defLim.LoadTimeout)
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{pkgs: pkgs, access: opt.Access, ver: v, lim: lim, log: log}
	if opt.MDN.BaseURL != "" {
		s.mdn = newMDNClient(opt.MDN, opt.HTTPClient, log)
	}
	return s
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orInt(p *int, def int) {
	if *p <= 0 {
		*p = def
	}
}

// Versions returns the configured version specs.
func (s *Service) Versions() Versions { return s.ver }

// Warm loads and indexes the data packages (filling the mirror with them
// on a cold start), so the first request does not wait. It is safe to
// call concurrently with requests and more than once.
func (s *Service) Warm(ctx context.Context) error {
	_, err := s.data(ctx)
	return err
}

// dataset is everything parsed from one resolved version set.
type dataset struct {
	versions  Versions // exact versions read
	inv       *inventory
	bcd       *bcd
	features  *features
	idl       *idlIndex
	index     *searchIndex
	byCompat  map[string][]int // BCD key → pages declaring it
	children  map[string][]int // lower-cased slug → pages directly under it
	idlTarget []idlTarget      // per page; Interface "" when none
	loadedIn  time.Duration
}

// data returns the loaded dataset, loading it once. The load runs
// detached from ctx (bounded by LoadTimeout), so a caller giving up does
// not fail the load for the others waiting on it; a failed load is not
// kept, and the next call tries again.
func (s *Service) data(ctx context.Context) (*dataset, error) {
	if s.access != nil {
		for _, name := range []string{PackageBCD, PackageInventory, PackageIDL, PackageFeatures} {
			if err := s.access(ctx, name); err != nil {
				return nil, err
			}
		}
	}
	if d := s.cur.Load(); d != nil {
		return d, nil
	}
	ch := s.group.DoChan("load", func() (any, error) {
		if d := s.cur.Load(); d != nil {
			return d, nil
		}
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.lim.LoadTimeout)
		defer cancel()
		d, err := s.load(lctx)
		if err != nil {
			return nil, err
		}
		s.cur.Store(d)
		s.log.Info("web docs loaded", "versions", d.versions, "pages", len(d.inv.pages), "compatKeys", len(d.bcd.keys), "took", d.loadedIn)
		return d, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*dataset), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Service) load(ctx context.Context) (*dataset, error) {
	start := time.Now()
	d := &dataset{}
	var idlFiles []IDLFile
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		b, v, err := s.file(gctx, PackageBCD, s.ver.BCD, "data.json", "webdocs-bcd-version")
		if err != nil {
			return err
		}
		d.versions.BCD = v
		if d.bcd, err = parseBCD(b); err != nil {
			return fmt.Errorf("%s@%s (setting webdocs-bcd-version): %w", PackageBCD, v, err)
		}
		return nil
	})
	g.Go(func() error {
		b, v, err := s.file(gctx, PackageInventory, s.ver.Inventory, "index.json", "webdocs-inventory-version")
		if err != nil {
			return err
		}
		d.versions.Inventory = v
		if d.inv, err = parseInventory(b); err != nil {
			return fmt.Errorf("%s@%s (setting webdocs-inventory-version): %w", PackageInventory, v, err)
		}
		return nil
	})
	g.Go(func() error {
		b, v, err := s.file(gctx, PackageFeatures, s.ver.Features, "data.json", "webdocs-features-version")
		if err != nil {
			return err
		}
		d.versions.Features = v
		if d.features, err = parseFeatures(b); err != nil {
			return fmt.Errorf("%s@%s (setting webdocs-features-version): %w", PackageFeatures, v, err)
		}
		return nil
	})
	g.Go(func() error {
		var err error
		idlFiles, d.versions.IDL, err = s.idlFiles(gctx)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("loading the web docs data: %w", err)
	}
	d.idl = newIDLIndex(idlFiles)
	d.byCompat = map[string][]int{}
	d.children = map[string][]int{}
	d.idlTarget = make([]idlTarget, len(d.inv.pages))
	for i := range d.inv.pages {
		p := &d.inv.pages[i]
		for _, k := range p.Compat {
			d.byCompat[k] = append(d.byCompat[k], i)
		}
		if j := strings.LastIndexByte(p.Slug, '/'); j > 0 {
			parent := strings.ToLower(p.Slug[:j])
			d.children[parent] = append(d.children[parent], i)
		}
		if t, ok := d.idl.targetFor(p); ok {
			d.idlTarget[i] = t
		}
	}
	d.index = buildIndex(d.inv.pages, d.idlNames)
	d.loadedIn = time.Since(start)
	return d, nil
}

// idlNames lists the IDL names a page documents, for the search index:
// the interface, and for a member page the member and the dictionaries,
// enums and callbacks its declaration uses.
func (d *dataset) idlNames(i int) idlNames {
	t := d.idlTarget[i]
	if t.Interface == "" {
		return idlNames{}
	}
	if t.Member == "" {
		return idlNames{iface: t.Interface, names: []string{t.Interface}}
	}
	n := idlNames{names: []string{t.Interface, t.Member}}
	_, members := d.idl.render(t, 1<<20)
	for _, m := range members {
		for _, w := range strings.FieldsFunc(m.Text, func(r rune) bool { return !isIdentRune(r) }) {
			if defs := d.idl.defs[w]; len(defs) > 0 && defs[0].Kind != "interface" && w != t.Interface {
				n.names = append(n.names, w)
			}
		}
	}
	return n
}

func isIdentRune(r rune) bool {
	return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// file reads one file of a data package, naming the setting that pins it
// when the version or the file is missing.
func (s *Service) file(ctx context.Context, name, spec, path, setting string) ([]byte, string, error) {
	o, err := s.pkgs.Open(ctx, explore.Target{PackageName: name, Version: spec})
	if err != nil {
		return nil, "", pinnedErr(err, name, spec, "", setting)
	}
	_, b, o, err := s.pkgs.FileOf(ctx, o, path)
	if err != nil {
		return nil, "", pinnedErr(err, name, spec, path, setting)
	}
	return b, o.Version, nil
}

// pinnedErr is the error of reading path of a pinned data package (path
// "" for the package itself). What the registry or the package lacks is
// the operator's setting to fix, not the caller's request: it is a 502
// upstream_bad_data naming the setting, never a 404, which a caller
// searching for "gap" would read as "no such doc" (before, a pinned
// version missing from the registry answered 404 not_found).
func pinnedErr(err error, name, spec, path, setting string) error {
	if explore.Classify(err).Status == http.StatusNotFound {
		if path == "" {
			return fmt.Errorf("%w: %s@%s is not in the registry (setting %s)", errBadData, name, spec, setting)
		}
		return fmt.Errorf("%w: %s@%s has no %s (setting %s)", errBadData, name, spec, path, setting)
	}
	return fmt.Errorf("reading %s@%s (setting %s): %w", name, spec, setting, err)
}

// idlFiles reads every top-level .idl file of @webref/idl.
func (s *Service) idlFiles(ctx context.Context) ([]IDLFile, string, error) {
	t := explore.Target{PackageName: PackageIDL, Version: s.ver.IDL}
	o, err := s.pkgs.Open(ctx, t)
	if err != nil {
		return nil, "", pinnedErr(err, PackageIDL, s.ver.IDL, "", "webdocs-idl-version")
	}
	var files []IDLFile
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, f := range o.Files {
		if !strings.HasSuffix(f.Path, ".idl") || strings.Contains(f.Path, "/") {
			continue
		}
		g.Go(func() error {
			_, b, _, err := s.pkgs.FileOf(gctx, o, f.Path)
			if err != nil {
				return fmt.Errorf("reading %s@%s/%s: %w", PackageIDL, o.Version, f.Path, err)
			}
			pf := ParseIDL(strings.TrimSuffix(f.Path, ".idl"), string(b))
			mu.Lock()
			files = append(files, pf)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, "", err
	}
	if len(files) == 0 {
		return nil, "", fmt.Errorf("%w: %s@%s has no .idl files (setting webdocs-idl-version)", errBadData, PackageIDL, o.Version)
	}
	return files, o.Version, nil
}

// Request is one explore_web_docs call: the body of POST /v1/webdocs and
// the MCP tool's arguments. Each action reads the fields it needs.
type Request struct {
	// Action is "search", "get_doc" or "get_compat".
	Action string `json:"action"`
	// search
	Query  string `json:"query,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Offset int    `json:"offset,omitempty"`
	// get_doc
	Path string `json:"path,omitempty"`
	// get_compat
	Key string `json:"key,omitempty"`
}

// Actions are the values of Request.Action.
var Actions = []string{"search", "get_doc", "get_compat"}

// Do runs one request: *SearchResult, *Doc or *Compat.
func (s *Service) Do(ctx context.Context, r Request) (any, error) {
	switch r.Action {
	case "search":
		return s.Search(ctx, SearchRequest{Query: r.Query, Limit: r.Limit, Offset: r.Offset})
	case "get_doc":
		return s.GetDoc(ctx, r.Path)
	case "get_compat":
		return s.GetCompat(ctx, r.Key)
	case "":
		return nil, &explore.InputError{Field: "action", Err: errors.New(`missing: give "search", "get_doc" or "get_compat"`)}
	}
	return nil, &explore.InputError{Field: "action", Err: fmt.Errorf("unknown action %q: use search, get_doc or get_compat", r.Action)}
}

// checkLen refuses a query, path or key over MaxQueryBytes.
func (s *Service) checkLen(field, v string) error {
	if len(v) > s.lim.MaxQueryBytes {
		return &explore.LimitError{Setting: "webdocs-max-query-bytes", Msg: fmt.Sprintf("%s is %d bytes, above the most one request may send (%d)", field, len(v), s.lim.MaxQueryBytes)}
	}
	return nil
}
