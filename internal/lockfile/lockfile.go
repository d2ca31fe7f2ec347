// Package lockfile reads the dependency lockfiles of the npm ecosystem and
// says which package versions a project installs: the indexer warms every
// one of them, and the MCP server uses Locked to default a package's
// version to the one the user's project locks.
//
// Formats (Lockfile.Format):
//
//	package-lock@1|2|3  package-lock.json, lockfileVersion 1 (npm 5-6), 2, 3 (npm 7+)
//	npm-shrinkwrap@N    npm-shrinkwrap.json, same format as package-lock
//	pnpm@6|9            pnpm-lock.yaml, lockfileVersion 6.x (pnpm 8) and 9.x (pnpm 9+)
//	yarn@1              yarn.lock of yarn classic, yarn's own indented format
//	yarn-berry@N        yarn.lock of yarn 2+, YAML; N is __metadata.version (6 from yarn 3, 8 or 10 from yarn 4)
//	bun@N               bun.lock, the text JSONC format; N is lockfileVersion (1 from bun 1.2, 2 from bun 1.4)
//	package.json        no lockfile: the declared ranges
//
// Every package instance a lockfile installs becomes a Dep. Entries that do
// not come from the registry (git, file:, link:, workspace:, remote
// tarballs) are Deps too, with a Kind and a Reason saying why they cannot
// be warmed: they never make a parse fail. Aliases ("foo": "npm:bar@^1")
// are Deps of Kind Alias whose Target is the package to warm.
//
// Tree also lays out the node_modules folders the lockfile installs, as
// `npm ci` would (tree.go): npm lockfiles say so themselves, and the other
// formats are hoisted as npm's arborist hoists.
//
// The fixtures under testdata/ were written by the tools themselves (see
// testdata/README.md), and the tests replay them.
package lockfile

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// Kind says where a Dep comes from, and so whether the registry serves it.
type Kind int

// The kinds of Dep. Only Registry and Alias can be warmed.
const (
	// Registry is a version published to the registry under Dep.Name.
	Registry Kind = iota + 1
	// Alias is a registry version installed under another name
	// ("left": "npm:left-pad@^1"): warm Dep.Target at Dep.Version.
	Alias
	// Git is a git repository at a commit.
	Git
	// File is a local directory or tarball named by a file: spec.
	File
	// Link is a symlinked local directory (link:, portal:, npm link).
	Link
	// Workspace is a package of the project's own workspace.
	Workspace
	// Tarball is a tarball fetched from a URL that is not the registry's.
	Tarball
	// Other is a source this package does not recognize (yarn's exec:,
	// a future protocol): reported and skipped, like the others.
	Other
)

// String returns the kind's lower-case name ("registry", "alias", ...).
func (k Kind) String() string {
	switch k {
	case Registry:
		return "registry"
	case Alias:
		return "alias"
	case Git:
		return "git"
	case File:
		return "file"
	case Link:
		return "link"
	case Workspace:
		return "workspace"
	case Tarball:
		return "tarball"
	case Other:
		return "other"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// reason is the Dep.Reason of each kind that cannot be warmed.
func (k Kind) reason() string {
	switch k {
	case Git:
		return "git dependency"
	case File:
		return "local file: dependency"
	case Link:
		return "linked local directory"
	case Workspace:
		return "workspace package"
	case Tarball:
		return "remote tarball URL"
	case Other:
		return "unrecognized source"
	}
	return ""
}

// Warmable reports whether the registry serves deps of this kind.
func (k Kind) Warmable() bool { return k == Registry || k == Alias }

// Dep is one package the project installs.
type Dep struct {
	// Name is the name as installed (node_modules/<Name>).
	Name string
	// Version is the exact locked version. For a bare package.json it is
	// the declared range. For a non-registry kind it is the package's own
	// version when the lockfile records one, else "".
	Version string
	// Kind says where the package comes from.
	Kind Kind
	// Target is, for Alias, the real package name ("npm:other@1" gives
	// "other"); for Git, File, Link, Workspace, Tarball and Other, where
	// the lockfile says the package comes from (the resolved URL or path,
	// else the declared spec); "" for Registry.
	Target string
	// Reason says, for a kind that cannot be warmed, why ("git
	// dependency", "local file: dependency", ...); "" otherwise.
	Reason string
	// Direct is true for a direct dependency of the project root, from any
	// of dependencies, devDependencies, optionalDependencies and
	// peerDependencies as far as the format records them.
	Direct bool
	// Dev is true when only development dependencies need the package. A
	// format that does not record it (yarn and berry without a
	// package.json) leaves it false.
	Dev bool
}

// Warm returns the registry package and version to fetch for d, and false
// when d does not come from the registry.
func (d Dep) Warm() (name, version string, ok bool) {
	switch d.Kind {
	case Registry:
		return d.Name, d.Version, true
	case Alias:
		return d.Target, d.Version, true
	}
	return "", "", false
}

// Lockfile is what a lockfile says the project installs.
type Lockfile struct {
	// Format names the file's format and version, e.g. "package-lock@3",
	// "pnpm@9", "yarn@1", "yarn-berry@10", "bun@1", "package.json".
	Format string
	// Deps holds every package instance, deduplicated on (Name, Version,
	// Kind, Target) and sorted by those fields. Of duplicates, the one
	// kept is Direct if any was, and Dev only if all were.
	Deps []Dep

	// tree (npm formats) or graph (the others) is what Tree lays out;
	// both are nil on a Lockfile that Parse returns.
	tree  []Install
	graph *depGraph
}

// Locked answers "which version of name does this project use?".
//
// It returns the version of the project root's direct dependency on the
// registry package name: the hoisted node_modules/<name> for npm,
// importers['.'] for pnpm, the entry matching the declared range for yarn
// and bun, and for a package.json alone the declared range. A direct
// dependency installed under name wins over an alias of it ("x":
// "npm:name@1"). When the root does not depend on name directly but the
// lockfile holds exactly one registry version of it (a transitive
// dependency), that version is the answer too, since it is the only one
// the project can load. ok is false otherwise, and for a direct dependency
// that is not from the registry (git, file:, a workspace), since no
// registry version corresponds to it.
func (l *Lockfile) Locked(name string) (versionOrRange string, ok bool) {
	var alias string
	seen := map[string]bool{}
	for _, d := range l.Deps {
		switch {
		case d.Kind == Registry && d.Name == name:
			if d.Direct {
				return d.Version, true
			}
		case d.Kind == Alias && d.Target == name:
			if d.Direct && alias == "" {
				alias = d.Version
			}
		default:
			continue
		}
		seen[d.Version] = true
	}
	if alias != "" {
		return alias, true
	}
	if len(seen) == 1 {
		for v := range seen {
			return v, true
		}
	}
	return "", false
}

// Error kinds, tested with errors.Is.
var (
	// ErrInvalid: the bytes are not a well-formed lockfile of the format
	// (bad JSON or YAML, a yarn.lock that does not parse, a field of the
	// wrong type). The message says where.
	ErrInvalid = errors.New("invalid lockfile")
	// ErrUnsupported: a well-formed file of a format or version this
	// package does not read (pnpm lockfile 5, the binary bun.lockb, an
	// unknown file name whose content is not recognized).
	ErrUnsupported = errors.New("unsupported lockfile")
	// ErrTooLarge: the file is bigger than Limits.MaxBytes, or holds
	// more syntax nodes than Limits.MaxNodes.
	ErrTooLarge = errors.New("lockfile too large")
	// ErrTooManyFolders: Tree's layout passed Limits.MaxFolders.
	ErrTooManyFolders = errors.New("lockfile installs too many folders")
	// ErrNoLockfile: Find found neither a lockfile nor a package.json.
	ErrNoLockfile = errors.New("no lockfile or package.json")
)

// Limits bound what one parse may cost: MaxBytes the input, MaxNodes the
// syntax tree the YAML and JSONC parsers build before decoding (whose
// memory the input's size alone does not bound), MaxNesting the
// recursion. With the defaults, the costliest input each format accepts
// peaks under 256 MiB RSS in a mirror process (docs/RELIABILITY.md, "Lockfile
// parsing memory").
type Limits struct {
	// MaxBytes caps the lockfile, and the package.json ParseFile reads
	// beside it. Default 8 MiB. Lockfiles written by the tools spend 240
	// (bun.lock) to 410 (package-lock v3) bytes per package on the
	// 396-package testdata/midsize-app, and 850 in package-lock v2 (which
	// holds both of npm's layouts), so 8 MiB holds about 10,000 packages
	// in v2 and 20,000 in the others: a large monorepo locks 5,000 to
	// 10,000. The JSON formats decode at up to 15 times their size in
	// heap (a package-lock.json of empty entries), which makes this their
	// memory bound: at 12 MiB such a file peaked at 280 MiB RSS in the
	// mirror, over issue 11's 256 MiB target; at 8 MiB, 172.
	MaxBytes int64
	// MaxNodes caps an upper bound on the syntax nodes of pnpm and yarn
	// berry YAML and bun's JSONC (see nodeBound), and twice the fields of
	// a yarn v1 lockfile (a key and a value each), since those parsers
	// build their whole tree first at 200 to 300 bytes per node, and a
	// node can cost 2 bytes of input. Default 800,000: the lockfiles the
	// tools wrote bound 33 nodes per package (pnpm, bun; yarn v1 16), so
	// about 24,000 packages fit, while the costliest input it lets
	// through (a pnpm "packages" of empty entries) peaks near 210 MiB RSS
	// in the mirror; at 1,000,000 it was 246.
	MaxNodes int
	// MaxNesting caps how deep yarn.lock v1 blocks and bun.lock brackets
	// nest, since both parsers recurse per level. Yarn writes 3 levels
	// (entry, dependencies, name) and bun 5 (packages, key, array, info,
	// dependencies); the default 16 leaves room and keeps the stack small
	// on hostile input.
	MaxNesting int
	// MaxFolders caps the folders Tree lays out (0: no cap); past it Tree
	// stops and fails with ErrTooManyFolders. The hoisted layout of a
	// pnpm, yarn or bun graph can be far larger than its lockfile: each
	// package locked in two versions that depend on one another nests a
	// copy under every folder, so a 737 KB pnpm lockfile of 700 such
	// packages laid out 490,700 folders in 3 minutes of CPU and 1.1 GiB
	// before a cap checked after the layout refused it
	// (docs/RELIABILITY.md). Projects set it to max-project-packages.
	MaxFolders int
}

// DefaultLimits returns the defaults documented on each field.
func DefaultLimits() Limits {
	return Limits{MaxBytes: 8 << 20, MaxNodes: 800_000, MaxNesting: 16}
}

// Validate reports the first setting that is not positive, by name.
func (lim Limits) Validate() error {
	if lim.MaxBytes <= 0 {
		return fmt.Errorf("lockfile: limit MaxBytes = %d: must be positive", lim.MaxBytes)
	}
	if lim.MaxNodes <= 0 {
		return fmt.Errorf("lockfile: limit MaxNodes = %d: must be positive", lim.MaxNodes)
	}
	if lim.MaxNesting <= 0 {
		return fmt.Errorf("lockfile: limit MaxNesting = %d: must be positive", lim.MaxNesting)
	}
	return nil
}

// Parse parses a lockfile with the default limits; see Limits.Parse.
func Parse(filename string, data []byte) (*Lockfile, error) {
	return DefaultLimits().Parse(filename, data)
}

// ParseWithManifest parses a lockfile and the project's package.json with
// the default limits; see Limits.ParseWithManifest.
func ParseWithManifest(filename string, data, manifest []byte) (*Lockfile, error) {
	return DefaultLimits().ParseWithManifest(filename, data, manifest)
}

// ParseFile reads and parses a lockfile with the default limits; see
// Limits.ParseFile.
func ParseFile(path string) (*Lockfile, error) {
	return DefaultLimits().ParseFile(path)
}

// Parse parses the lockfile data. The format comes from filename's base
// name (package-lock.json, npm-shrinkwrap.json, pnpm-lock.yaml, yarn.lock,
// bun.lock, package.json) and then from the content where the name leaves
// it open (yarn.lock v1 or berry, the lockfile version); a name it does
// not know (an upload) is recognized by content alone.
//
// Without the project's package.json, yarn v1 and npm v1 lockfiles do not
// record which dependencies are the root's: Direct is then guessed as the
// entries no other entry's dependency resolves to (which misses a direct
// dependency that another also uses), and yarn's Dev flags stay false.
// Use ParseWithManifest or ParseFile to have them exact.
func (lim Limits) Parse(filename string, data []byte) (*Lockfile, error) {
	return lim.ParseWithManifest(filename, data, nil)
}

// ParseWithManifest is Parse with the project's package.json (nil when
// there is none), which gives the root's direct and dev dependencies to
// the formats that do not record them: npm v1 and yarn v1 (direct and
// dev), yarn berry (dev). A manifest that does not parse is an error for
// those formats, and ignored by the others.
func (lim Limits) ParseWithManifest(filename string, data, manifest []byte) (*Lockfile, error) {
	return lim.parse(filename, data, manifest, false)
}

// parse is ParseWithManifest; withTree keeps what Tree needs.
func (lim Limits) parse(filename string, data, manifest []byte, withTree bool) (*Lockfile, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	base := filepath.Base(filename)
	if int64(len(data)) > lim.MaxBytes {
		return nil, fmt.Errorf("lockfile: %s is %d bytes, over the limit MaxBytes = %d: %w", base, len(data), lim.MaxBytes, ErrTooLarge)
	}
	if int64(len(manifest)) > lim.MaxBytes {
		return nil, fmt.Errorf("lockfile: package.json is %d bytes, over the limit MaxBytes = %d: %w", len(manifest), lim.MaxBytes, ErrTooLarge)
	}
	// The manifest is parsed only by the formats that use it, so a broken
	// package.json beside a pnpm or bun lockfile does not block it.
	man := func() (*manifestDeps, error) {
		if manifest == nil {
			return nil, nil
		}
		m, err := parseManifest(manifest)
		if err != nil {
			return nil, fmt.Errorf("the package.json beside it: %w", err)
		}
		return m, nil
	}
	format := formatByName(base)
	if format == "" {
		format = sniff(data, lim)
	}
	var (
		lf  *Lockfile
		err error
	)
	switch format {
	case "package-lock", "npm-shrinkwrap":
		lf, err = parseNPM(format, data, man)
	case "pnpm":
		lf, err = parsePNPM(data, lim)
	case "yarn":
		lf, err = parseYarn(data, man, lim)
	case "bun":
		lf, err = parseBun(data, lim)
	case "package.json":
		lf, err = parsePackageJSON(data)
	case "bun.lockb":
		err = fmt.Errorf("the binary bun.lockb (run `bun install --save-text-lockfile` to write bun.lock): %w", ErrUnsupported)
	default:
		err = fmt.Errorf("not a lockfile format this package knows: %w", ErrUnsupported)
	}
	if err != nil {
		return nil, fmt.Errorf("lockfile: %s: %w", base, err)
	}
	if !withTree {
		lf.tree, lf.graph = nil, nil
	} else if lf.graph != nil {
		// normalize sorts Deps in place; the graph indexes its own copy.
		g := *lf.graph
		g.deps = slices.Clone(g.deps)
		for i := range g.deps {
			g.deps[i].Reason = g.deps[i].Kind.reason()
			if g.deps[i].Kind == Registry {
				g.deps[i].Target = ""
			}
		}
		lf.graph = &g
	}
	lf.Deps = normalize(lf.Deps)
	return lf, nil
}

// ParseFile reads the lockfile at path and, if one exists, the
// package.json beside it (see ParseWithManifest); both are read only up to
// MaxBytes.
func (lim Limits) ParseFile(path string) (*Lockfile, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	data, err := lim.readFile(path)
	if err != nil {
		return nil, err
	}
	var manifest []byte
	if filepath.Base(path) != "package.json" {
		manifest, err = lim.readFile(filepath.Join(filepath.Dir(path), "package.json"))
		if errors.Is(err, os.ErrNotExist) {
			manifest, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return lim.ParseWithManifest(path, data, manifest)
}

// readFile reads path, refusing a file over MaxBytes without reading
// more than MaxBytes+1 bytes of it.
func (lim Limits) readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lockfile: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, lim.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("lockfile: reading %s: %w", path, err)
	}
	if int64(len(data)) > lim.MaxBytes {
		return nil, fmt.Errorf("lockfile: %s is over the limit MaxBytes = %d: %w", path, lim.MaxBytes, ErrTooLarge)
	}
	return data, nil
}

// normalize sorts deps and merges duplicates on (Name, Version, Kind,
// Target): Direct if any was, Dev only if all were.
func normalize(deps []Dep) []Dep {
	for i := range deps {
		deps[i].Reason = deps[i].Kind.reason()
		if deps[i].Kind == Registry {
			deps[i].Target = ""
		}
	}
	slices.SortFunc(deps, compareDeps)
	out := deps[:0]
	for _, d := range deps {
		if n := len(out); n > 0 && compareDeps(out[n-1], d) == 0 {
			out[n-1].Direct = out[n-1].Direct || d.Direct
			out[n-1].Dev = out[n-1].Dev && d.Dev
			continue
		}
		out = append(out, d)
	}
	return slices.Clip(out)
}

func compareDeps(a, b Dep) int {
	return cmp.Or(
		cmp.Compare(a.Name, b.Name),
		cmp.Compare(a.Version, b.Version),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Target, b.Target),
	)
}
