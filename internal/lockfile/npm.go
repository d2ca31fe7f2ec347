package lockfile

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// npmLock is package-lock.json and npm-shrinkwrap.json. Version 1 (npm
// 5-6) nests "dependencies" as the node_modules tree; version 2 (npm 7-8)
// has both that and "packages", a flat map keyed by install path; version
// 3 (npm 9+) has only "packages".
type npmLock struct {
	LockfileVersion int                   `json:"lockfileVersion"`
	Packages        map[string]npmPackage `json:"packages"`
	Dependencies    map[string]*npmV1Dep  `json:"dependencies"`
}

// npmPackage is one "packages" entry. Key "" is the project root, keys
// with node_modules/ are installed packages, and other keys are the
// folders that workspace and file: links point to.
type npmPackage struct {
	// Name is set on an alias ("node_modules/left": {"name": "left-pad"}),
	// and on the root and link targets.
	Name     string `json:"name"`
	Version  string `json:"version"`
	Resolved string `json:"resolved"`
	Link     bool   `json:"link"`
	Dev      bool   `json:"dev"`

	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	Workspaces           json.RawMessage   `json:"workspaces"`
}

// npmV1Dep is one entry of version 1's nested "dependencies" tree.
type npmV1Dep struct {
	// Version is the exact version for a registry package, and the
	// resolved spec otherwise: "npm:left-pad@1.3.0", "file:local-pkg",
	// "git://host/repo#<sha>", "https://host/x.tgz".
	Version      string               `json:"version"`
	Dev          bool                 `json:"dev"`
	Requires     map[string]string    `json:"requires"`
	Dependencies map[string]*npmV1Dep `json:"dependencies"`
}

// nodeModules is the path segment npm's "packages" keys nest under.
const nodeModules = "node_modules/"

func parseNPM(format string, data []byte, loadManifest func() (*manifestDeps, error)) (*Lockfile, error) {
	var lock npmLock
	if err := decodeJSON(data, &lock); err != nil {
		return nil, err
	}
	v := lock.LockfileVersion
	switch {
	case v == 0 && lock.Packages == nil && lock.Dependencies == nil:
		return nil, fmt.Errorf("%w: no lockfileVersion, packages or dependencies", ErrInvalid)
	case v < 0 || v > 3:
		return nil, fmt.Errorf("lockfileVersion %d: %w", v, ErrUnsupported)
	}
	if v == 0 {
		v = 1 // npm 5.0 wrote no version; its format is version 1
	}
	lf := &Lockfile{Format: format + "@" + strconv.Itoa(v)}
	var err error
	if lock.Packages != nil {
		lf.Deps, lf.tree, err = npmPackages(lock.Packages)
	} else {
		man, merr := loadManifest()
		if merr != nil {
			return nil, merr
		}
		lf.Deps, lf.tree, err = npmTree(lock.Dependencies, man)
	}
	if err != nil {
		return nil, err
	}
	return lf, nil
}

// npmPackages reads the "packages" map of versions 2 and 3.
func npmPackages(pkgs map[string]npmPackage) ([]Dep, []Install, error) {
	root := pkgs[""]
	rootDecl := mergeSections(root.Dependencies, root.OptionalDependencies, root.PeerDependencies, root.DevDependencies)
	hasWorkspaces := len(root.Workspaces) > 0 && string(root.Workspaces) != "null"

	// A "resolved" http(s) URL is a registry tarball unless some package
	// declares the name with a URL spec: npm writes the same fields for
	// both, and registries differ in their tarball URL layout.
	urlDeclared := map[string]bool{}
	for _, p := range pkgs {
		for _, sec := range []map[string]string{p.Dependencies, p.OptionalDependencies, p.PeerDependencies, p.DevDependencies} {
			for name, spec := range sec {
				if k, _, _ := classifySpec(spec); k == Tarball {
					urlDeclared[name] = true
				}
			}
		}
	}

	var deps []Dep
	var tree []Install
	for path, p := range pkgs {
		i := strings.LastIndex(path, nodeModules)
		if path == "" || i < 0 || (i > 0 && path[i-1] != '/') {
			continue // the root, or a folder a link points to
		}
		name := path[i+len(nodeModules):]
		if name == "" {
			return nil, nil, fmt.Errorf("%w: package key %q has no name", ErrInvalid, path)
		}
		parent := ""
		if i > 0 {
			parent = path[:i-1]
		}
		d := Dep{Name: name, Dev: p.Dev}
		if parent == "" {
			_, d.Direct = rootDecl[name]
		}
		if p.Link {
			d.Kind = linkKind(declaredSpec(pkgs[parent], name), hasWorkspaces)
			d.Target = p.Resolved
			d.Version = pkgs[p.Resolved].Version
			deps = append(deps, d)
			tree = append(tree, Install{Path: path, Dep: d})
			continue
		}
		d.Version = p.Version
		real := name
		if p.Name != "" && p.Name != name {
			real = p.Name
		}
		d.Kind = Registry
		if k, ok := classifyResolved(p.Resolved); ok && (k != Tarball || (urlDeclared[name] && !isRegistryTarball(p.Resolved, real, p.Version))) {
			d.Kind, d.Target = k, p.Resolved
		}
		if d.Kind == Registry && real != name {
			d.Kind, d.Target = Alias, real
		}
		deps = append(deps, checkVersion(d))
		tree = append(tree, Install{Path: path, Dep: deps[len(deps)-1]})
	}
	return deps, tree, nil
}

// declaredSpec is the spec p declares for name in any section.
func declaredSpec(p npmPackage, name string) string {
	for _, sec := range []map[string]string{p.Dependencies, p.OptionalDependencies, p.PeerDependencies, p.DevDependencies} {
		if s, ok := sec[name]; ok {
			return s
		}
	}
	return ""
}

// linkKind types an npm link entry from the spec that declared it: file:
// and link: say so; anything else (a range, or no declaration: npm links
// every workspace into the root's node_modules) is a workspace when the
// root has workspaces.
func linkKind(spec string, hasWorkspaces bool) Kind {
	switch k, _, _ := classifySpec(spec); {
	case spec != "" && (k == File || k == Link || k == Workspace):
		return k
	case hasWorkspaces:
		return Workspace
	}
	return Link
}

// isRegistryTarball reports whether url has the path npm registries give
// a tarball: ".../<name>/-/<basename>-<version>.tgz".
func isRegistryTarball(url, name, version string) bool {
	base := name[strings.LastIndexByte(name, '/')+1:]
	tail := "/-/" + base + "-" + version + ".tgz"
	u, _, _ := strings.Cut(url, "#")
	u, _, _ = strings.Cut(u, "?")
	return strings.HasSuffix(u, "/"+name+tail) || strings.HasSuffix(u, "/"+strings.Replace(name, "/", "%2f", 1)+tail) ||
		strings.HasSuffix(u, "/"+strings.Replace(name, "/", "%2F", 1)+tail)
}

// checkVersion turns a registry dep without a usable version into Other:
// nothing could be warmed from it, and the rest of the file is still good.
func checkVersion(d Dep) Dep {
	if (d.Kind == Registry || d.Kind == Alias) && !isVersion(d.Version) {
		if d.Kind == Alias {
			d.Target = "npm:" + d.Target + "@" + d.Version
		} else {
			d.Target = d.Version
		}
		d.Kind, d.Version = Other, ""
	}
	return d
}

// npmTree reads version 1's nested "dependencies". It records no root
// declarations, so Direct comes from the manifest. Without one, a
// top-level entry is taken as direct when no entry's "requires" resolves
// to it (node resolves a require to the nearest node_modules up the
// tree): it is installed at the top for the root alone.
func npmTree(top map[string]*npmV1Dep, man *manifestDeps) ([]Dep, []Install, error) {
	decl := man.declared()
	type item struct {
		name   string
		dep    *npmV1Dep
		depth  int
		parent *item
		path   string // install folder
	}
	var stack []*item
	push := func(m map[string]*npmV1Dep, parent *item) {
		depth, dir := 0, ""
		if parent != nil {
			depth, dir = parent.depth+1, parent.path
		}
		// Sorted, so that errors name the same entry on every run.
		for _, n := range sortedKeys(m) {
			stack = append(stack, &item{n, m[n], depth, parent, installPath(dir, n)})
		}
	}
	push(top, nil)
	var deps []Dep
	var paths []string // install folder of each of deps
	topIdx := map[string]int{}
	requiredTop := map[string]bool{}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.name == "" || it.dep == nil {
			return nil, nil, fmt.Errorf("%w: dependency %q has no name or entry", ErrInvalid, it.name)
		}
		for r := range it.dep.Requires {
			n := it
			for n != nil && n.dep.Dependencies[r] == nil {
				n = n.parent
			}
			if n == nil {
				requiredTop[r] = true
			}
		}
		d := Dep{Name: it.name, Dev: it.dep.Dev}
		v := it.dep.Version
		switch kind, aliasName, aliasRange := classifySpec(v); {
		case isVersion(v):
			d.Kind, d.Version = Registry, v
		case kind == Alias:
			d.Kind, d.Target, d.Version = Alias, aliasName, aliasRange
		case kind == Registry: // not a version, yet no protocol
			d.Kind, d.Version = Registry, v
		default:
			d.Kind, d.Target = kind, v
		}
		if it.depth == 0 {
			if decl != nil {
				_, d.Direct = decl[it.name]
			} else {
				topIdx[it.name] = len(deps)
			}
		}
		deps = append(deps, checkVersion(d))
		paths = append(paths, it.path)
		push(it.dep.Dependencies, it)
	}
	for name, i := range topIdx {
		deps[i].Direct = !requiredTop[name]
	}
	tree := make([]Install, len(deps))
	for i, it := range paths {
		tree[i] = Install{Path: it, Dep: deps[i]}
	}
	return deps, tree, nil
}
