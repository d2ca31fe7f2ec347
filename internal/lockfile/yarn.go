package lockfile

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"go.yaml.in/yaml/v3"
)

// parseYarn reads yarn.lock: yarn berry's YAML when it has a __metadata
// entry (berry always writes one, first), yarn classic's format otherwise.
func parseYarn(data []byte, loadManifest func() (*manifestDeps, error), lim Limits) (*Lockfile, error) {
	man, err := loadManifest()
	if err != nil {
		return nil, err
	}
	if isBerry(data) {
		return parseBerry(data, man, lim)
	}
	return parseYarnV1(data, man, lim)
}

func isBerry(data []byte) bool {
	return bytes.HasPrefix(data, []byte("__metadata:")) || bytes.Contains(data, []byte("\n__metadata:"))
}

// yarnEntry is one entry of either yarn format, after parsing: its
// descriptors ("name@range", the keys) and what they resolve to.
type yarnEntry struct {
	descriptors []string
	version     string
	// resolution is berry's locator ("left-pad@npm:1.3.0"); classic
	// records a resolved URL instead.
	resolution string
	resolved   string
	deps       map[string]string // dependencies and optionalDependencies
	line       int
}

// yarnGraph turns entries into instances: one per distinct descriptor
// name of an entry (yarn merges "left@npm:left-pad@^1" and
// "left-pad@^1" into one entry when they resolve alike).
type yarnGraph struct {
	g depGraph
	// byDescriptor maps "name@range" to the instance it installs.
	byDescriptor map[string]int
}

func newYarnGraph(entries []yarnEntry, dep func(e yarnEntry, name, rng string) (Dep, bool)) (*yarnGraph, error) {
	y := &yarnGraph{byDescriptor: map[string]int{}}
	for _, e := range entries {
		byName := map[string]int{}
		for _, desc := range e.descriptors {
			name, rng, ok := splitNameAt(strings.TrimSpace(desc))
			if !ok {
				return nil, fmt.Errorf("%w: line %d: entry key %s is not name@range", ErrInvalid, e.line, truncate(desc))
			}
			i, seen := byName[name]
			if !seen {
				d, keep := dep(e, name, rng)
				if !keep {
					continue
				}
				i = y.g.add(checkVersion(d))
				byName[name] = i
			}
			y.byDescriptor[name+"@"+rng] = i
			// berry binds some ranges to their parent ("file:./x::locator=
			// root%40workspace%3A."); dependencies name them unbound.
			if unbound, _, ok := strings.Cut(rng, "::"); ok {
				if _, dup := y.byDescriptor[name+"@"+unbound]; !dup {
					y.byDescriptor[name+"@"+unbound] = i
				}
			}
		}
	}
	for _, e := range entries {
		from := map[int]bool{}
		for _, desc := range e.descriptors {
			name, rng, _ := splitNameAt(strings.TrimSpace(desc))
			if i, ok := y.byDescriptor[name+"@"+rng]; ok {
				from[i] = true
			}
		}
		for _, name := range sortedKeys(e.deps) {
			to, ok := y.lookup(name, e.deps[name])
			if !ok {
				continue // a workspace (classic does not list them) or a peer
			}
			for i := range from {
				y.g.edge(i, to)
			}
		}
	}
	return y, nil
}

// lookup finds the instance a dependency on name at rng installs. Yarn 3
// writes dependency ranges without the default protocol ("^1.0.0") but
// keys with it ("x@npm:^1.0.0"), so that is tried second.
func (y *yarnGraph) lookup(name, rng string) (int, bool) {
	rng = strings.TrimSpace(rng)
	if i, ok := y.byDescriptor[name+"@"+rng]; ok {
		return i, true
	}
	if k, _, _ := classifySpec(rng); k == Registry {
		i, ok := y.byDescriptor[name+"@npm:"+rng]
		return i, ok
	}
	return 0, false
}

// roots marks the instances declared maps to as the root's, and computes
// Dev. Declarations that match no entry (a workspace in classic) are
// skipped.
func (y *yarnGraph) roots(declared map[string]rootDecl) {
	for _, name := range sortedKeys(declared) {
		decl := declared[name]
		if i, ok := y.lookup(name, decl.spec); ok {
			y.g.deps[i].Direct = true
			y.g.root(i, decl.dev)
		}
	}
	y.g.markDev()
}

// guessRoots marks as direct the instances no other instance depends on,
// for a lockfile read without its package.json; Dev stays false.
func (y *yarnGraph) guessRoots() {
	needed := make([]bool, len(y.g.deps))
	for _, tos := range y.g.edges {
		for _, to := range tos {
			needed[to] = true
		}
	}
	for i := range y.g.deps {
		y.g.deps[i].Direct = !needed[i]
	}
}

// parseYarnV1 reads a yarn classic lockfile.
func parseYarnV1(data []byte, man *manifestDeps, lim Limits) (*Lockfile, error) {
	fields, err := parseYarnV1Syntax(data, lim)
	if err != nil {
		return nil, err
	}
	entries := make([]yarnEntry, 0, len(fields))
	for _, f := range fields {
		if f.block == nil {
			return nil, fmt.Errorf("%w: line %d: top-level key %s has a value, not an entry block", ErrInvalid, f.line, trimKey(f.keys))
		}
		e := yarnEntry{descriptors: f.keys, version: yarnGet(f.block, "version"), resolved: yarnGet(f.block, "resolved"), line: f.line}
		e.deps = yarnMap(f.block, "dependencies")
		for k, v := range yarnMap(f.block, "optionalDependencies") {
			if e.deps == nil {
				e.deps = map[string]string{}
			}
			e.deps[k] = v
		}
		entries = append(entries, e)
	}
	y, err := newYarnGraph(entries, yarnV1Dep)
	if err != nil {
		return nil, err
	}
	if man != nil {
		y.roots(man.declared())
	} else {
		y.guessRoots()
	}
	return &Lockfile{Format: "yarn@1", Deps: y.g.deps, graph: &y.g}, nil
}

// yarnV1Dep types a classic entry by its declared range: classic keeps
// the range as written ("npm:left-pad@^1.3.0", "file:./x", a git URL).
func yarnV1Dep(e yarnEntry, name, rng string) (Dep, bool) {
	d := Dep{Name: name, Version: e.version}
	kind, aliasName, _ := classifySpec(rng)
	d.Kind = kind
	switch kind {
	case Registry:
	case Alias:
		d.Target = aliasName
	default:
		d.Target = rng
		if e.resolved != "" {
			d.Target = e.resolved
		}
	}
	return d, true
}

// berryEntry is one entry of a berry lockfile.
type berryEntry struct {
	Version              string          `yaml:"version"`
	Resolution           string          `yaml:"resolution"`
	Dependencies         yamlMap[string] `yaml:"dependencies"`
	OptionalDependencies yamlMap[string] `yaml:"optionalDependencies"`
}

// parseBerry reads a yarn 2+ lockfile: YAML whose keys are
// comma-separated descriptors and whose entries name their resolution as
// a locator, "name@protocol:reference".
func parseBerry(data []byte, man *manifestDeps, lim Limits) (*Lockfile, error) {
	if err := lim.checkNodes(data); err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := noAliases(&doc); err != nil {
		return nil, err
	}
	var raw yamlMap[berryEntry]
	if err := doc.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	meta, ok := raw["__metadata"]
	if !ok || meta.Version == "" {
		return nil, fmt.Errorf("%w: no __metadata.version", ErrInvalid)
	}
	lf := &Lockfile{Format: "yarn-berry@" + meta.Version}
	var entries []yarnEntry
	var rootDecl map[string]rootDecl
	var workspaceDecls []berryWorkspace
	for _, key := range sortedKeys(raw) {
		if key == "__metadata" {
			continue
		}
		e := raw[key]
		if e.Resolution == "" {
			return nil, fmt.Errorf("%w: entry %s has no resolution", ErrInvalid, truncate(key))
		}
		ye := yarnEntry{descriptors: strings.Split(key, ","), version: e.Version, resolution: e.Resolution, deps: e.Dependencies}
		for k, v := range e.OptionalDependencies {
			if ye.deps == nil {
				ye.deps = map[string]string{}
			}
			ye.deps[k] = v
		}
		if _, ref, _ := splitNameAt(e.Resolution); strings.HasPrefix(ref, "workspace:") {
			if ref == "workspace:." {
				rootDecl = berryRootDecl(e.Dependencies, man)
			} else {
				workspaceDecls = append(workspaceDecls, berryWorkspace{strings.TrimPrefix(ref, "workspace:"), e.Dependencies})
			}
		}
		entries = append(entries, ye)
	}
	y, err := newYarnGraph(entries, berryDep)
	if err != nil {
		return nil, err
	}
	// Berry's compat plugin patches some packages (resolve, typescript,
	// fsevents): dependents name the unpatched descriptor ("resolve":
	// "npm:^1.22.0") and berry installs the "resolve@patch:..." entry in
	// its place, so the patched entry hangs off the unpatched one.
	for _, e := range entries {
		for _, desc := range e.descriptors {
			desc = strings.TrimSpace(desc)
			name, inner, ok := berryPatched(desc)
			if !ok {
				continue
			}
			from, ok1 := y.lookup(name, inner)
			to, ok2 := y.byDescriptor[desc]
			if ok1 && ok2 {
				y.g.edge(from, to)
			}
		}
	}
	// Other workspaces' dependencies are production roots: they ship
	// with the project. Their dev split would need their own manifests.
	for _, ws := range workspaceDecls {
		for _, name := range sortedKeys(ws.decls) {
			if i, ok := y.lookup(name, ws.decls[name]); ok {
				y.g.rootIn(ws.dir, i, false)
			}
		}
	}
	y.roots(rootDecl)
	lf.Deps, lf.graph = y.g.deps, &y.g
	return lf, nil
}

// berryWorkspace is a workspace other than the root: its folder and its
// declared dependencies.
type berryWorkspace struct {
	dir   string
	decls map[string]string
}

// berryRootDecl is the root workspace's dependencies, with the dev split
// from the manifest: berry's lockfile merges devDependencies into
// dependencies, with ranges normalized ("^1" becomes "npm:^1").
func berryRootDecl(deps map[string]string, man *manifestDeps) map[string]rootDecl {
	out := map[string]rootDecl{}
	for name, rng := range deps {
		d := rootDecl{spec: rng}
		if man != nil {
			_, inDev := man.DevDependencies[name]
			_, inProd := man.Dependencies[name]
			_, inOpt := man.OptionalDependencies[name]
			d.dev = inDev && !inProd && !inOpt
		}
		out[name] = d
	}
	return out
}

// berryDep types a berry entry by its resolution's protocol. The root
// workspace is the project itself, not a dependency.
func berryDep(e yarnEntry, name, _ string) (Dep, bool) {
	locName, ref, ok := splitNameAt(e.resolution)
	if !ok {
		return Dep{Name: name, Kind: Other, Target: e.resolution}, true
	}
	if ref == "workspace:." {
		return Dep{}, false
	}
	d := Dep{Name: name, Version: e.version}
	d.Kind, d.Target = berryKind(ref)
	if d.Kind == Workspace && d.Version == "0.0.0-use.local" {
		d.Version = "" // berry's placeholder, not the workspace's version
	}
	// "patch:resolve@npm%3A1.22.1#~builtin<compat/resolve>::..." patches
	// a registry package: warm the package patched.
	if n, r, ok := berryPatched(e.resolution); ok {
		if k, _ := berryKind(r); k == Registry {
			locName, ref, d.Kind, d.Target = n, r, Registry, ""
		}
	}
	if d.Kind == Registry {
		d.Version = strings.TrimPrefix(ref, "npm:")
		if locName != name {
			d.Kind, d.Target = Alias, locName
		}
	}
	return d, true
}

// berryKind types a locator's reference; target is the reference without
// berry's "::" bindings.
func berryKind(ref string) (Kind, string) {
	target, _, _ := strings.Cut(ref, "::")
	lower := strings.ToLower(ref)
	switch {
	case strings.HasPrefix(lower, "npm:"):
		return Registry, ""
	case strings.HasPrefix(lower, "workspace:"):
		return Workspace, target
	case strings.HasPrefix(lower, "file:"):
		return File, target
	case strings.HasPrefix(lower, "link:"), strings.HasPrefix(lower, "portal:"):
		return Link, target
	case strings.Contains(lower, "#commit=") || isGitURL(lower):
		return Git, target
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		return Tarball, target
	}
	return Other, target
}

// berryPatched returns the descriptor or locator a patch: one patches:
// "resolve@patch:resolve@npm%3A^1.22.0#~builtin<...>" gives "resolve" and
// "npm:^1.22.0".
func berryPatched(s string) (name, rng string, ok bool) {
	_, ref, ok := splitNameAt(s)
	if !ok || !strings.HasPrefix(ref, "patch:") {
		return "", "", false
	}
	inner, _, _ := strings.Cut(strings.TrimPrefix(ref, "patch:"), "#")
	if dec, err := url.PathUnescape(inner); err == nil {
		inner = dec
	}
	return splitNameAt(inner)
}
