package lockfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// pnpmLock is pnpm-lock.yaml, lockfileVersion 6.x (pnpm 8) or 9.x (pnpm
// 9 and 10). "importers" maps each workspace project's folder ("." is the
// root) to its dependencies; a single-project version 6 file has them at
// the top level instead. A dependency's version is a reference that
// refToRelative turns into a "dependency path" keying "packages" (and, in
// version 9, "snapshots", which hold the edges).
type pnpmLock struct {
	LockfileVersion string                `yaml:"lockfileVersion"`
	Importers       yamlMap[pnpmImporter] `yaml:"importers"`
	Packages        yamlMap[pnpmPackage]  `yaml:"packages"`
	Snapshots       yamlMap[pnpmSnapshot] `yaml:"snapshots"`
	pnpmImporter    `yaml:",inline"`
}

type pnpmImporter struct {
	Dependencies         yamlMap[pnpmImporterDep] `yaml:"dependencies"`
	DevDependencies      yamlMap[pnpmImporterDep] `yaml:"devDependencies"`
	OptionalDependencies yamlMap[pnpmImporterDep] `yaml:"optionalDependencies"`
}

type pnpmImporterDep struct {
	Specifier string `yaml:"specifier"`
	Version   string `yaml:"version"`
}

type pnpmPackage struct {
	Resolution pnpmResolution `yaml:"resolution"`
	// Name and Version are written for packages whose dependency path
	// does not say them (git, tarballs, directories).
	Name    string `yaml:"name"`
	Version string `yaml:"version"`
	// pnpmSnapshot holds version 6's edges; version 9 moved them to
	// "snapshots".
	pnpmSnapshot `yaml:",inline"`
	// PeerDependenciesMeta marks optional peers, whose resolutions pnpm
	// lists among the dependencies of the peer-suffixed instance.
	// PeerDependencies names the peers, whose resolutions pnpm also lists
	// among the dependencies: Tree places a package only where its peers
	// resolve to those, as npm does.
	PeerDependencies     yamlMap[string]       `yaml:"peerDependencies"`
	PeerDependenciesMeta yamlMap[pnpmPeerMeta] `yaml:"peerDependenciesMeta"`
}

type pnpmPeerMeta struct {
	Optional bool `yaml:"optional"`
}

type pnpmResolution struct {
	Integrity string `yaml:"integrity"`
	Tarball   string `yaml:"tarball"`
	Type      string `yaml:"type"` // "git", "directory"
	Repo      string `yaml:"repo"`
	Commit    string `yaml:"commit"`
	Directory string `yaml:"directory"`
}

type pnpmSnapshot struct {
	Dependencies         yamlMap[string] `yaml:"dependencies"`
	OptionalDependencies yamlMap[string] `yaml:"optionalDependencies"`
}

func parsePNPM(data []byte, lim Limits) (*Lockfile, error) {
	if err := lim.checkNodes(data); err != nil {
		return nil, err
	}
	lock, err := decodePNPM(data)
	if err != nil {
		return nil, err
	}
	major, _, _ := strings.Cut(lock.LockfileVersion, ".")
	v, err := strconv.Atoi(major)
	switch {
	case lock.LockfileVersion == "":
		return nil, fmt.Errorf("%w: no lockfileVersion", ErrInvalid)
	case err != nil || v < 6 || v > 9:
		return nil, fmt.Errorf("lockfileVersion %q (pnpm 8 and later write 6.0 or 9.0): %w", lock.LockfileVersion, ErrUnsupported)
	}
	w := &pnpmWalker{lock: lock, v6: v < 7, nodes: map[pnpmNodeKey]int{}, byPath: map[string]int{}, reachedPkg: map[string]bool{}}
	if lock.Importers == nil {
		lock.Importers = map[string]pnpmImporter{".": lock.pnpmImporter}
	}
	// Sorted, so that graph indexes do not depend on map order.
	for _, dir := range sortedKeys(lock.Importers) {
		imp := lock.Importers[dir]
		for _, sec := range []struct {
			deps map[string]pnpmImporterDep
			dev  bool
		}{{imp.Dependencies, false}, {imp.OptionalDependencies, false}, {imp.DevDependencies, true}} {
			for _, name := range sortedKeys(sec.deps) {
				i, err := w.node(name, sec.deps[name].Version, dir)
				if err != nil {
					return nil, err
				}
				w.g.rootIn(strings.TrimPrefix(dir, "."), i, sec.dev)
				if dir == "." {
					w.g.deps[i].Direct = true
				}
			}
		}
	}
	if err := w.linkAll(); err != nil {
		return nil, err
	}
	// Packages no importer reaches (pnpm does not write them, but a file
	// edited by hand may hold them) are instances under their own name.
	unreached := sortedKeys(lock.Snapshots)
	if w.v6 {
		unreached = sortedKeys(lock.Packages)
	}
	for _, key := range unreached {
		if _, ok := w.byPath[key]; !ok {
			if _, err := w.nodeForPath(key, ""); err != nil {
				return nil, err
			}
		}
	}
	if !w.v6 {
		for _, key := range sortedKeys(lock.Packages) {
			if !w.reachedPkg[key] {
				if _, err := w.nodeForPath(key, ""); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := w.linkAll(); err != nil {
		return nil, err
	}
	w.g.markDev()
	return &Lockfile{Format: "pnpm@" + strconv.Itoa(v), Deps: w.g.deps, graph: &w.g}, nil
}

// decodePNPM decodes the document that holds the lockfile. pnpm 10 may
// put a document of config dependencies before the main one, so the last
// document with importers or packages wins.
func decodePNPM(data []byte) (*pnpmLock, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var found *pnpmLock
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		if err := noAliases(&doc); err != nil {
			return nil, err
		}
		var lock pnpmLock
		if err := doc.Decode(&lock); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		if found == nil || lock.Importers != nil || lock.Packages != nil {
			found = &lock
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%w: empty file", ErrInvalid)
	}
	return found, nil
}

// pnpmNodeKey is one package instance: an installed name and the
// dependency path it resolves to ("link:<dir>" for links).
type pnpmNodeKey struct{ name, depPath string }

type pnpmWalker struct {
	lock   *pnpmLock
	v6     bool
	g      depGraph
	nodes  map[pnpmNodeKey]int
	byPath map[string]int // some node of each dependency path
	// reachedPkg holds the "packages" keys (paths without peer suffix)
	// of version 9 that some node stands for.
	reachedPkg map[string]bool
	queue      []int    // nodes whose edges are still to add
	paths      []string // dependency path of each node ("" for links)
}

// node returns the instance that reference ref of the dependency name
// gives, made on first use. importerDir is the folder of the importer
// declaring it ("" inside packages), against which link: paths resolve.
func (w *pnpmWalker) node(name, ref, importerDir string) (int, error) {
	if name == "" || ref == "" {
		return 0, fmt.Errorf("%w: dependency %q has no name or version", ErrInvalid, name+"@"+ref)
	}
	if target, ok := strings.CutPrefix(ref, "link:"); ok {
		key := pnpmNodeKey{name, ref}
		if i, ok := w.nodes[key]; ok {
			return i, nil
		}
		d := Dep{Name: name, Kind: Link, Target: ref}
		if importerDir != "" {
			if _, ok := w.lock.Importers[path.Join(importerDir, target)]; ok {
				d.Kind = Workspace
			}
		}
		return w.add(key, d, ""), nil
	}
	return w.nodeForPath(w.refToRelative(ref, name), name)
}

// refToRelative turns a dependency's reference into its dependency path,
// as pnpm's dependency-path package does for each lockfile version.
func (w *pnpmWalker) refToRelative(ref, name string) string {
	if strings.HasPrefix(ref, "file:") {
		if w.v6 {
			return ref
		}
		return name + "@" + ref
	}
	if w.v6 {
		paren := strings.IndexByte(ref, '(')
		if !strings.Contains(ref, "/") || (paren >= 0 && strings.LastIndexByte(ref[:paren], '/') < 0) {
			return "/" + name + "@" + ref
		}
		return ref
	}
	if strings.HasPrefix(ref, "@") {
		return ref
	}
	at := strings.IndexByte(ref, '@')
	if at < 0 {
		return name + "@" + ref
	}
	colon, paren := strings.IndexByte(ref, ':'), strings.IndexByte(ref, '(')
	if (colon < 0 || at < colon) && (paren < 0 || at < paren) {
		return ref // an alias: "left-pad@1.3.0"
	}
	return name + "@" + ref
}

// nodeForPath returns the instance of depPath installed as name ("" when
// the path's own name is meant).
func (w *pnpmWalker) nodeForPath(depPath, name string) (int, error) {
	pkgName, ver, pkg, ok := w.describe(depPath)
	if name == "" {
		name = pkgName
	}
	if name == "" {
		return 0, fmt.Errorf("%w: package %q has no name", ErrInvalid, depPath)
	}
	key := pnpmNodeKey{name, depPath}
	if i, ok := w.nodes[key]; ok {
		return i, nil
	}
	d := Dep{Name: name, Version: ver, Kind: Registry}
	if !ok || !isVersion(ver) {
		// Not a registry version: the resolution says what it is.
		ref := ver
		if !ok {
			ref = depPath // version 6: "file:local-pkg", "host+port/repo/<sha>"
		}
		d.Kind, d.Target, d.Version = pnpmSource(pkg.Resolution, ref), ref, pkg.Version
		if r := pkg.Resolution; r.Type == "git" && r.Repo != "" {
			d.Target = r.Repo + "#" + r.Commit
		} else if r.Tarball != "" {
			d.Target = r.Tarball
		}
	} else if pkgName != "" && pkgName != name {
		d.Kind, d.Target = Alias, pkgName
	}
	return w.add(key, checkVersion(d), depPath), nil
}

// describe splits a dependency path into the package's name and version
// (or non-registry reference) and finds its "packages" entry; ok is false
// when the path does not have the name@version form.
func (w *pnpmWalker) describe(depPath string) (name, ver string, pkg pnpmPackage, ok bool) {
	pkgKey := depPath
	if !w.v6 {
		pkgKey = stripPeers(depPath)
	}
	pkg = w.lock.Packages[pkgKey]
	p := depPath
	if w.v6 {
		var slash bool
		p, slash = strings.CutPrefix(depPath, "/")
		if !slash {
			return pkg.Name, pkg.Version, pkg, false
		}
	}
	name, ver, ok = splitNameAt(stripPeers(p))
	if !ok {
		return pkg.Name, pkg.Version, pkg, false
	}
	if pkg.Name != "" {
		name = pkg.Name
	}
	return name, ver, pkg, true
}

// stripPeers removes the peer suffix "(react@18.3.1)" of a dependency
// path.
func stripPeers(depPath string) string {
	if i := strings.IndexByte(depPath, '('); i > 0 {
		return depPath[:i]
	}
	return depPath
}

// pnpmSource types a non-registry package by its resolution.
func pnpmSource(r pnpmResolution, ref string) Kind {
	switch {
	case r.Type == "git":
		return Git
	case r.Type == "directory":
		return File
	case strings.HasPrefix(r.Tarball, "file:"):
		return File
	case r.Tarball != "":
		if k, ok := classifyResolved(r.Tarball); ok && k == Git {
			return Git // codeload tarballs of hosted git repositories
		}
		return Tarball
	}
	if k, ok := classifyResolved(ref); ok {
		return k
	}
	return Other
}

func (w *pnpmWalker) add(key pnpmNodeKey, d Dep, depPath string) int {
	i := w.g.add(d)
	w.nodes[key] = i
	w.paths = append(w.paths, depPath)
	if depPath != "" {
		if _, ok := w.byPath[depPath]; !ok {
			w.byPath[depPath] = i
		}
		w.reachedPkg[stripPeers(depPath)] = true
		w.queue = append(w.queue, i)
	}
	return i
}

// linkAll adds the edges of every node, including the nodes that adding
// edges makes.
func (w *pnpmWalker) linkAll() error {
	for len(w.queue) > 0 {
		i := w.queue[0]
		w.queue = w.queue[1:]
		depPath := w.paths[i]
		var snap pnpmSnapshot
		pkg := w.lock.Packages[depPath]
		if w.v6 {
			snap = pkg.pnpmSnapshot
		} else {
			snap = w.lock.Snapshots[depPath]
			pkg = w.lock.Packages[stripPeers(depPath)]
		}
		for _, sec := range []map[string]string{snap.Dependencies, snap.OptionalDependencies} {
			for _, name := range sortedKeys(sec) {
				j, err := w.node(name, sec[name], "")
				if err != nil {
					return err
				}
				if pkg.PeerDependenciesMeta[name].Optional {
					// An optional peer the project happens to have (styled-jsx
					// on @babel/core): it does not make a dev package prod,
					// as npm does not either. It is laid out, though: the
					// lockfile cannot tell it from a dependency that is also
					// an optional peer (ajv of ajv-formats), which npm
					// installs.
					w.g.layoutOnly(i, j)
					continue
				}
				w.g.edge(i, j)
				if _, ok := pkg.PeerDependencies[name]; ok {
					w.g.peer(i, j)
				}
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
