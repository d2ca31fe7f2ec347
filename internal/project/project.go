// Package project makes a whole project's dependencies explorable: a
// lockfile is registered once (POST /v1/projects), its node_modules tree
// (lockfile.Tree) is kept in the store under an id derived from the
// uploaded bytes, every locked version is warmed through the warm queue,
// and GET /v1/projects/{id} says how much of it is warm.
//
// Access: a caller sees a project only if it may read every package in it
// (the same check explore makes per package), so a project never reveals
// a private package to a token that could not read it directly.
package project

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/lockfile"
	"github.com/pkgscope/pkgscope/internal/lru"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/ratelimit"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// Limits bound what one project may cost.
type Limits struct {
	// MaxPackages caps the folders of a project's tree (setting
	// max-project-packages).
	MaxPackages int
	// MaxLockfileBytes caps the uploaded lockfile (setting
	// max-project-lockfile-bytes).
	MaxLockfileBytes int64
	// Wait bounds how long a project grep waits for packages that are not
	// warm yet before answering from those that are (setting
	// project-wait).
	Wait time.Duration
	// Lockfile bounds the parse as POST /v1/warm's is (lockfile-max-nodes;
	// its MaxBytes is MaxLockfileBytes).
	Lockfile lockfile.Limits
	// ReadyVersions caps how many versions project answers remember as
	// ready, so that a grep reads from the store only the states of the
	// others (setting project-ready-versions; 0 remembers none).
	ReadyVersions int
	// An answer's byte budget is a package answer's (answer-bytes,
	// max-answer-bytes): one contract for both.
}

// DefaultLimits returns the defaults: 20,000 folders (the warm queue's
// max-request-items, four times a large monorepo's 5,000 packages); a
// 32 MiB lockfile (npm's package-lock spends about 850 bytes a package, so
// 20,000 packages fit in 17 MiB); 5 s of waiting (the warm queue ingests
// the median package in well under a second, so most of a fresh
// project's direct dependencies are warm by then); 50,000 ready versions
// remembered (about 10 MB: two and a half projects at the folder cap, or
// a hundred mid-size apps of 400 packages).
func DefaultLimits() Limits {
	return Limits{MaxPackages: 20_000, MaxLockfileBytes: 32 << 20, Wait: 5 * time.Second, Lockfile: lockfile.DefaultLimits(),
		ReadyVersions: 50_000}
}

// Store is what projects need of the store: the projects, and the state
// of many versions at once (VersionStates).
type Store interface {
	store.ProjectStore
}

// Warmer queues warm jobs (warm.Queue.Submit).
type Warmer interface {
	Submit(ctx context.Context, source string, wants []warm.Want) (string, error)
}

// Service registers and describes projects.
type Service struct {
	st     Store
	warm   Warmer
	access func(ctx context.Context, name string) error
	lim    Limits
	parses warm.ParseSlots
	// ready remembers versions seen ready (readyVersions).
	ready *lru.Cache[store.VersionKey, struct{}]
}

// New returns a Service. access (nil: everyone may read everything) is the
// explore service's per-package check; it returns an error (an
// *explore.ForbiddenError) for a package the caller may not read. Each
// lockfile is parsed within one of parses' slots, the ones POST /v1/warm
// takes (setting max-lockfile-parses): a project lockfile of up to 32 MiB
// parses to several times that in memory.
func New(st Store, w Warmer, access func(ctx context.Context, name string) error, lim Limits, parses warm.ParseSlots) *Service {
	return &Service{st: st, warm: w, access: access, lim: lim, parses: parses,
		ready: lru.New[store.VersionKey, struct{}](int64(max(lim.ReadyVersions, 0)), lru.Options{})}
}

// Upload is what a caller registers: a lockfile (or a package.json
// alone), the project's package.json, and workspace manifests.
type Upload struct {
	Lockfile    File   `json:"lockfile"`
	PackageJSON string `json:"packageJson,omitempty"`
	// Workspaces are the workspaces' package.json files, keyed by folder
	// ("packages/app"). They are part of the id; the tree itself comes
	// from the lockfile, which records what workspaces install.
	Workspaces map[string]string `json:"workspaces,omitempty"`
}

// File is a named file's text.
type File struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// Error kinds, tested with errors.Is; the handlers map them to statuses.
var (
	// ErrBadInput: the upload does not parse (400; the message names the
	// line where the lockfile format says it).
	ErrBadInput = errors.New("bad project upload")
	// ErrTooLarge: over a limit (413 for bytes, 422 for packages); the
	// message names the setting.
	ErrTooLarge = errors.New("project over a limit")
	// ErrNotFound: no project has that id (404).
	ErrNotFound = errors.New("no such project")
)

// LimitError is an upload over a named limit.
type LimitError struct {
	Setting string
	Msg     string
	// Bytes is true for a size limit (413), false for a count (422).
	Bytes bool
}

func (e *LimitError) Error() string { return e.Msg + " (setting " + e.Setting + ")" }
func (e *LimitError) Unwrap() error { return ErrTooLarge }

// Registered answers a registration.
type Registered struct {
	ID       string `json:"id"`
	Format   string `json:"format"`
	Packages int    `json:"packages"`
	// Status is the path that reports warmth; WarmRequest the warm
	// request (GET /v1/warm/{id}) queued for it, "" when the project was
	// already registered.
	Status      string `json:"status"`
	WarmRequest string `json:"warmRequest,omitempty"`
	// Existing is true when the same files were registered before.
	Existing bool `json:"existing"`
}

// ID returns the project id of u: a sha256 over every uploaded byte, so
// the same files give the same id on every replica.
func ID(u Upload) string {
	h := sha256.New()
	field := func(s string) {
		h.Write([]byte(strconv.Itoa(len(s)) + ":"))
		h.Write([]byte(s))
	}
	field("pkgscope-project-1")
	field(path.Base(u.Lockfile.Name))
	field(u.Lockfile.Content)
	field(u.PackageJSON)
	for _, dir := range slices.Sorted(maps.Keys(u.Workspaces)) {
		field(dir)
		field(u.Workspaces[dir])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// validID matches what ID returns.
var validID = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Register parses u, checks limits and access, records the project and
// queues a warm job for every locked version. Registering the same files
// again is one store lookup and answers the same id.
func (s *Service) Register(ctx context.Context, u Upload) (*Registered, error) {
	return s.register(ctx, u, nil)
}

// register is Register; release, when not nil, gives back a parse slot
// the caller already holds (POST /v1/projects takes it before reading
// the body) and is called once the lockfile is parsed. Without one,
// register takes a slot for the parse itself.
func (s *Service) register(ctx context.Context, u Upload, release func()) (*Registered, error) {
	if u.Lockfile.Name == "" || u.Lockfile.Content == "" {
		return nil, fmt.Errorf(`%w: "lockfile" needs "name" (e.g. "package-lock.json") and "content"`, ErrBadInput)
	}
	if err := warm.CheckLockfileName(u.Lockfile.Name); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	if n := int64(len(u.Lockfile.Content)); n > s.lim.MaxLockfileBytes {
		return nil, &LimitError{Setting: "max-project-lockfile-bytes", Bytes: true,
			Msg: fmt.Sprintf("the lockfile is %d bytes, over the limit of %d", n, s.lim.MaxLockfileBytes)}
	}
	id := ID(u)
	if p, err := s.st.Project(ctx, id); err == nil {
		if err := s.check(ctx, p); err != nil {
			return nil, err
		}
		return &Registered{ID: id, Format: p.Format, Packages: len(p.Packages), Status: statusPath(id), Existing: true}, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("looking up project %s: %w", id, err)
	}
	var manifest []byte
	if u.PackageJSON != "" {
		manifest = []byte(u.PackageJSON)
	}
	lim := s.lim.Lockfile
	lim.MaxBytes = max(s.lim.MaxLockfileBytes, 1)
	// The layout stops past the folder cap: its cost grows with the tree
	// it lays out, which can be far larger than the lockfile.
	lim.MaxFolders = s.lim.MaxPackages
	if release == nil {
		if err := s.parses.Acquire(ctx); err != nil {
			return nil, err
		}
		release = s.parses.Release
	}
	lf, tree, err := lim.Tree(u.Lockfile.Name, []byte(u.Lockfile.Content), manifest)
	release()
	if errors.Is(err, lockfile.ErrTooManyFolders) {
		return nil, &LimitError{Setting: "max-project-packages",
			Msg: fmt.Sprintf("the lockfile installs more than %d packages", s.lim.MaxPackages)}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	if len(tree) > s.lim.MaxPackages {
		return nil, &LimitError{Setting: "max-project-packages",
			Msg: fmt.Sprintf("the lockfile installs %d packages, over the limit of %d", len(tree), s.lim.MaxPackages)}
	}
	p := store.Project{ID: id, Format: lf.Format, Packages: make([]store.ProjectPackage, len(tree))}
	for i, in := range tree {
		pp := store.ProjectPackage{Path: in.Path, Package: in.Name, Version: in.Version, Kind: in.Kind.String(),
			Reason: in.Reason, Direct: in.Direct, Dev: in.Dev}
		if name, version, ok := in.Warm(); ok {
			pp.Package, pp.Version = name, version
		}
		if err := validate(&pp); err != nil {
			return nil, err
		}
		p.Packages[i] = pp
	}
	if err := s.check(ctx, p); err != nil {
		return nil, err
	}
	var wants []warm.Want
	seen := map[warm.Want]bool{}
	for _, pp := range p.Packages {
		w := warm.Want{Name: pp.Package, Spec: pp.Version}
		if warmable(pp) && !seen[w] {
			seen[w] = true
			wants = append(wants, w)
		}
	}
	// The warm request pays at the rate limit before the project is
	// recorded: a refusal (429) leaves nothing behind, so the retry
	// registers and warms it.
	if err := ratelimit.ChargeItems(ctx, len(wants), fmt.Sprintf("a project warming %d packages", len(wants))); err != nil {
		return nil, err
	}
	// Queued before the project is recorded: a queue that refuses the
	// request (full: warm.ErrQueueFull) leaves no project behind, which
	// registering again would find and never warm. Jobs queued for a
	// project whose recording then fails only warm packages early.
	reg := &Registered{ID: id, Format: p.Format, Packages: len(p.Packages), Status: statusPath(id)}
	if len(wants) > 0 {
		if reg.WarmRequest, err = s.warm.Submit(ctx, "project "+id[:12]+": "+path.Base(u.Lockfile.Name)+" ("+lf.Format+")", wants); err != nil {
			return nil, fmt.Errorf("warming project %s: %w", id, err)
		}
	}
	if err := s.st.PutProject(ctx, p); err != nil {
		return nil, fmt.Errorf("recording project %s: %w", id, err)
	}
	return reg, nil
}

// validate refuses a folder of the tree that neither the store nor the
// warm queue could record: text with a NUL byte or invalid UTF-8, or, for
// a registry package, a name that is not a package's or a version that is
// not exact. Every folder is checked before anything is stored or queued,
// so a bad entry refuses the upload whole (400 naming the folder) instead
// of leaving a project whose package stays pending forever. A registry
// version is kept in canonical form, the form the store records.
func validate(pp *store.ProjectPackage) error {
	bad := func(err error) error {
		return fmt.Errorf("%w: the lockfile's entry %.200q: %v", ErrBadInput, pp.Path, err)
	}
	for _, s := range []string{pp.Path, pp.Package, pp.Version, pp.Kind, pp.Reason} {
		if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
			return bad(fmt.Errorf("%.80q holds a NUL byte or invalid UTF-8", s))
		}
	}
	if !warmable(*pp) {
		return nil
	}
	if err := npmspec.ValidateName(pp.Package); err != nil {
		return bad(err)
	}
	spec, err := npmspec.ParseSpec(pp.Version)
	if err == nil && spec.Kind != npmspec.Version {
		err = fmt.Errorf("%s is a %s, not an exact version", strconv.Quote(pp.Version), spec.Kind)
	}
	if err != nil {
		return bad(err)
	}
	pp.Version = spec.Raw
	return nil
}

// warmable reports whether the mirror serves pp's files.
func warmable(pp store.ProjectPackage) bool {
	return (pp.Kind == lockfile.Registry.String() || pp.Kind == lockfile.Alias.String()) && pp.Version != ""
}

func statusPath(id string) string { return "/v1/projects/" + id }

// check returns the access error of the first package (by path) the
// caller may not read.
func (s *Service) check(ctx context.Context, p store.Project) error {
	if s.access == nil {
		return nil
	}
	checked := map[string]bool{}
	for _, pp := range p.Packages {
		if checked[pp.Package] {
			continue
		}
		checked[pp.Package] = true
		if err := s.access(ctx, pp.Package); err != nil {
			return fmt.Errorf("project %s includes %s at %s: %w", p.ID, pp.Package, pp.Path, err)
		}
	}
	return nil
}

// Open returns project id after the access check: ErrNotFound for an
// unknown id, the access error for a project holding a package the
// caller may not read.
func (s *Service) Open(ctx context.Context, id string) (store.Project, error) {
	if !validID.MatchString(id) {
		return store.Project{}, notFound(fmt.Sprintf("project %q: a project id is 64 hex digits, as POST /v1/projects answers", id))
	}
	p, err := s.st.Project(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Project{}, notFound("project " + id + " (register its lockfile with POST /v1/projects)")
	}
	if err != nil {
		return store.Project{}, fmt.Errorf("reading project %s: %w", id, err)
	}
	if err := s.check(ctx, p); err != nil {
		return store.Project{}, err
	}
	return p, nil
}

// notFound is an unknown project: ErrNotFound for the project routes, an
// *explore.NotFoundError (404) for explore_npm.
func notFound(what string) error {
	return fmt.Errorf("%w: %w", ErrNotFound, &explore.NotFoundError{What: what})
}

// Package states in Status.
const (
	Warm    = "warm"    // in the store: explorable
	Pending = "pending" // not yet in the store
	Failed  = "failed"  // its ingest failed for good (Reason says why)
	Skipped = "skipped" // not from the registry: no files in the mirror
)

// PackageStatus is one folder of a project and its warmth.
type PackageStatus struct {
	store.ProjectPackage
	State string `json:"state"`
}

// Status answers GET /v1/projects/{id}.
type Status struct {
	ID       string          `json:"id"`
	Format   string          `json:"format"`
	Packages []PackageStatus `json:"packages"`
	// Total counts the folders; Warm, Pending, Failed and Skipped split
	// them by state.
	Total   int `json:"total"`
	Warm    int `json:"warm"`
	Pending int `json:"pending"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// Ready is true once every registry package is warm.
	Ready bool `json:"ready"`
}

// Status reports project id and which of its packages are warm.
func (s *Service) Status(ctx context.Context, id string) (*Status, error) {
	p, err := s.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.status(ctx, p)
}

func (s *Service) status(ctx context.Context, p store.Project) (*Status, error) {
	st := &Status{ID: p.ID, Format: p.Format, Packages: make([]PackageStatus, len(p.Packages)), Total: len(p.Packages)}
	states, err := s.states(ctx, p.Packages)
	if err != nil {
		return nil, fmt.Errorf("project %s: %w", p.ID, err)
	}
	for i, pp := range p.Packages {
		ps := PackageStatus{ProjectPackage: pp, State: Skipped}
		if warmable(pp) {
			v, ok := states[store.VersionKey{Name: pp.Package, Version: pp.Version}]
			switch {
			case ok && v.State == store.StateReady:
				ps.State = Warm
			case ok && v.State == store.StateFailed:
				ps.State, ps.Reason = Failed, v.Reason
			default:
				ps.State = Pending
			}
		}
		switch ps.State {
		case Warm:
			st.Warm++
		case Pending:
			st.Pending++
		case Failed:
			st.Failed++
		default:
			st.Skipped++
		}
		st.Packages[i] = ps
	}
	st.Ready = st.Pending == 0 && st.Failed == 0
	return st, nil
}

// unknownStates is states for the versions of pkgs not remembered as
// ready; those it answers as ready without a store read.
func (s *Service) unknownStates(ctx context.Context, pkgs []store.ProjectPackage) (map[store.VersionKey]store.Version, error) {
	known := map[store.VersionKey]store.Version{}
	var unknown []store.ProjectPackage
	for _, pp := range pkgs {
		k := store.VersionKey{Name: pp.Package, Version: pp.Version}
		if _, ok := s.ready.Get(k); ok {
			known[k] = store.Version{Name: k.Name, Version: k.Version, State: store.StateReady}
		} else {
			unknown = append(unknown, pp)
		}
	}
	if len(unknown) == 0 {
		return known, nil
	}
	states, err := s.states(ctx, unknown)
	if err != nil {
		return nil, err
	}
	maps.Copy(states, known)
	return states, nil
}

// states looks up the store state of pkgs' registry versions in one query.
func (s *Service) states(ctx context.Context, pkgs []store.ProjectPackage) (map[store.VersionKey]store.Version, error) {
	seen := map[store.VersionKey]bool{}
	var keys []store.VersionKey
	for _, pp := range pkgs {
		k := store.VersionKey{Name: pp.Package, Version: pp.Version}
		if warmable(pp) && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	states, err := s.st.VersionStates(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("looking up its versions: %w", err)
	}
	return states, nil
}
