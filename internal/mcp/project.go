package mcp

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pkgscope/pkgscope/internal/lockfile"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/semver"
)

// DefaultMaxManifestBytes is the default cap on the package.json read
// for declared ranges. Real manifests, even monorepo roots, are a few KB
// to a few hundred KB; 8 MiB bounds a generated or hostile one without
// refusing any real project.
const DefaultMaxManifestBytes = 8 << 20

// Project answers which version of a package a project wants, from its
// lockfile and package.json, found as npm finds them: the project is the
// nearest folder at or above the starting one holding a package.json, and
// a workspace package without a lockfile of its own uses its workspace
// root's (the nearest folder above holding a lockfile and declaring
// workspaces: package.json "workspaces" for npm, yarn and bun,
// pnpm-workspace.yaml for pnpm). Each call looks for the lockfile again
// (lockfile.Find: a few stats and a read of package.json) and re-parses
// only when a file's size or modification time changed, so an `npm
// install` during the agent's session is seen on the next call. It is
// safe for concurrent use.
type Project struct {
	dir         string // the package's folder (package.json)
	root        string // the workspace root, when dir is a member without a lockfile; else ""
	maxManifest int64

	mu   sync.Mutex
	lock cached[*lockfile.Lockfile]
	pkg  cached[*manifest]
}

// NewProject returns the Project found from dir: the nearest folder at or
// above it with a package.json (dir itself when there is none), and its
// workspace root. maxManifestBytes caps the package.json read (setting
// max-manifest-bytes); 0 means DefaultMaxManifestBytes.
func NewProject(dir string, maxManifestBytes int64) (*Project, error) {
	if maxManifestBytes <= 0 {
		maxManifestBytes = DefaultMaxManifestBytes
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("project directory %q: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("project directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("project directory %s is not a directory", abs)
	}
	p := &Project{dir: abs, maxManifest: maxManifestBytes}
	if pkg, ok := upTo(abs, func(d string) bool { return isFile(filepath.Join(d, "package.json")) }); ok {
		p.dir = pkg
	}
	if !hasLockfile(p.dir) {
		if root, ok := upTo(filepath.Dir(p.dir), func(d string) bool { return hasLockfile(d) && declaresWorkspaces(d) }); ok && root != p.dir {
			p.root = root
		}
	}
	return p, nil
}

// upTo returns the first of dir and its ancestors for which ok holds.
func upTo(dir string, ok func(string) bool) (string, bool) {
	for {
		if ok(dir) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// hasLockfile reports whether dir holds a lockfile (not just package.json).
func hasLockfile(dir string) bool {
	path, err := lockfile.Find(dir)
	return err == nil && filepath.Base(path) != "package.json"
}

// declaresWorkspaces reports whether dir is a workspace root: its
// package.json lists "workspaces" (npm, yarn, bun), or it holds
// pnpm-workspace.yaml.
func declaresWorkspaces(dir string) bool {
	if isFile(filepath.Join(dir, "pnpm-workspace.yaml")) {
		return true
	}
	f, err := os.Open(filepath.Join(dir, "package.json"))
	if err != nil {
		return false
	}
	defer f.Close()
	var m struct {
		Workspaces json.RawMessage `json:"workspaces"`
	}
	b, err := io.ReadAll(io.LimitReader(f, DefaultMaxManifestBytes))
	return err == nil && json.Unmarshal(b, &m) == nil && len(m.Workspaces) > 0 && string(m.Workspaces) != "null"
}

// Dir is the project's absolute directory: the package's, where its
// package.json is.
func (p *Project) Dir() string { return p.dir }

// LockDir is where the lockfile is looked for: the workspace root for a
// member without one of its own, else Dir.
func (p *Project) LockDir() string { return cmp.Or(p.root, p.dir) }

// Default is the version a call that names none uses, and why.
type Default struct {
	// Spec is the version or range to ask for; "" means latest.
	Spec string
	// Source names the file Spec came from (e.g. "package-lock.json",
	// "package.json"); "" when the project does not depend on the package.
	Source string
	// Locked is true when Spec came from the lockfile.
	Locked bool
	// Workspace is true when the lockfile is the workspace root's.
	Workspace bool
	// Skipped is a version the project names that pkgscope cannot serve
	// (a git, file or workspace dependency), when Spec fell back past it.
	Skipped string
	// Warning is a lockfile or package.json that could not be read; the
	// other source, or latest, was used instead.
	Warning error
	// NoProject is true when neither the folder nor any above it has a
	// package.json (an agent started outside any project).
	NoProject bool
}

// Reason says in a few words which version and why: "locked by
// package-lock.json", "range ^1.1.0 from package.json", "latest: no
// project found". It is the answer's resolvedFrom.
func (d Default) Reason() string {
	var s string
	switch {
	case d.Locked && d.Workspace:
		s = "locked by the workspace root's " + d.Source
	case d.Locked:
		s = "locked by " + d.Source
	case d.Source != "":
		s = "range " + d.Spec + " from " + d.Source
	case d.NoProject:
		s = "latest: no project found"
	default:
		s = "latest: the project does not depend on it"
	}
	if d.Skipped != "" {
		s += fmt.Sprintf("; the project names %q, which is not a registry version", d.Skipped)
	}
	if d.Warning != nil {
		s += "; warning: " + strings.Join(strings.Fields(d.Warning.Error()), " ")
	}
	return s
}

// Note is Reason in parentheses, the form errors and diffs carry.
func (d Default) Note() string { return "(" + d.Reason() + ")" }

// Default returns the version of name the project wants: what its
// lockfile locks, else the range its package.json declares, else latest.
// For a workspace package, the version locked is the one of the root
// lockfile's versions of name that the package's own range picks (as npm
// would install it), falling back to what the root locks.
func (p *Project) Default(name string) Default {
	p.mu.Lock()
	defer p.mu.Unlock()
	var d Default
	m, merr := p.manifest()
	lf, lockName, err := p.lockfile()
	if err != nil {
		d.Warning = err
	} else if lf != nil {
		if p.root != "" && merr == nil {
			if v, ok := m.declared(name); ok && usable(v) {
				if got, ok := pick(lf, name, v); ok {
					d.Spec, d.Source, d.Locked, d.Workspace = got, lockName, true, true
					return d
				}
			}
		}
		if v, ok := lf.Locked(name); ok {
			if usable(v) {
				d.Spec, d.Source, d.Locked, d.Workspace = v, lockName, true, p.root != ""
				return d
			}
			d.Skipped = v
		}
	}
	if merr != nil {
		d.Warning = errors.Join(d.Warning, merr)
		return d
	}
	d.NoProject = lf == nil && m.missing
	if v, ok := m.declared(name); ok {
		if usable(v) {
			d.Spec, d.Source = v, "package.json"
			return d
		}
		if d.Skipped == "" {
			d.Skipped = v
		}
	}
	return d
}

// pick returns the version of name, among those lf installs, that the
// range declared picks, as npm would.
func pick(lf *lockfile.Lockfile, name, declared string) (string, bool) {
	spec, err := npmspec.ParseSpec(declared)
	if err != nil {
		return "", false
	}
	var cands []semver.Candidate
	for _, d := range lf.Deps {
		if n, v, ok := d.Warm(); ok && n == name && semver.Valid(v) {
			cands = append(cands, semver.Candidate{Version: v})
		}
	}
	v, err := semver.Select(spec, cands, nil)
	return v, err == nil
}

// usable reports whether v is a spec the explore service resolves (an
// exact version, range or tag), not a git URL, file path, alias or
// workspace reference.
func usable(v string) bool {
	_, err := npmspec.ParseSpec(v)
	return err == nil
}

// lockfile returns the project's parsed lockfile and its base name, or nil
// when it has none.
func (p *Project) lockfile() (*lockfile.Lockfile, string, error) {
	path, err := lockfile.Find(p.LockDir())
	// Find answers package.json itself when there is no lockfile: its
	// ranges are declared, not locked, and manifest reads them.
	if errors.Is(err, lockfile.ErrNoLockfile) || errors.Is(err, fs.ErrNotExist) || (err == nil && (path == "" || filepath.Base(path) == "package.json")) {
		p.lock = cached[*lockfile.Lockfile]{}
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("finding the lockfile in %s: %w", p.LockDir(), err)
	}
	// ParseFile reads the package.json beside the lockfile too (yarn v1
	// and npm v1 record direct dependencies only there): a change to
	// either invalidates the parse.
	lf, err := p.lock.load([]string{path, filepath.Join(filepath.Dir(path), "package.json")},
		func() (*lockfile.Lockfile, error) { return lockfile.ParseFile(path) })
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", path, err)
	}
	return lf, filepath.Base(path), nil
}

func (p *Project) manifest() (*manifest, error) {
	path := filepath.Join(p.dir, "package.json")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		p.pkg = cached[*manifest]{}
		return &manifest{missing: true}, nil
	}
	m, err := p.pkg.load([]string{path}, func() (*manifest, error) { return parseManifest(path, p.maxManifest) })
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return m, nil
}

// cached is one parsed file, kept while the files it was read from keep
// their size and modification time.
type cached[T any] struct {
	stamps []stamp
	val    T
	ok     bool
}

// stamp identifies one version of a file; a missing file has size -1.
type stamp struct {
	path  string
	size  int64
	mtime time.Time
}

func stampOf(path string) stamp {
	st, err := os.Stat(path)
	if err != nil {
		return stamp{path: path, size: -1}
	}
	return stamp{path: path, size: st.Size(), mtime: st.ModTime()}
}

func (c *cached[T]) load(paths []string, parse func() (T, error)) (T, error) {
	stamps := make([]stamp, len(paths))
	for i, p := range paths {
		stamps[i] = stampOf(p)
	}
	if c.ok && slices.EqualFunc(c.stamps, stamps, func(a, b stamp) bool {
		return a.path == b.path && a.size == b.size && a.mtime.Equal(b.mtime)
	}) {
		return c.val, nil
	}
	v, err := parse()
	if err != nil {
		*c = cached[T]{}
		return v, err
	}
	*c = cached[T]{stamps: stamps, val: v, ok: true}
	return v, nil
}

// manifest is the part of package.json that declares dependencies.
type manifest struct {
	Dependencies         map[string]any `json:"dependencies"`
	DevDependencies      map[string]any `json:"devDependencies"`
	OptionalDependencies map[string]any `json:"optionalDependencies"`
	PeerDependencies     map[string]any `json:"peerDependencies"`
	// missing is true when the project has no package.json.
	missing bool
}

// declared returns the range the manifest declares for name, looking in
// the order npm installs from: dependencies, devDependencies,
// optionalDependencies, then peerDependencies.
func (m *manifest) declared(name string) (string, bool) {
	for _, deps := range []map[string]any{m.Dependencies, m.DevDependencies, m.OptionalDependencies, m.PeerDependencies} {
		if v, ok := deps[name].(string); ok {
			return v, true
		}
	}
	return "", false
}

func parseManifest(path string, max int64) (*manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("larger than %d bytes (setting max-manifest-bytes)", max)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	return &m, nil
}
