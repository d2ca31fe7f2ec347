package lockfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
)

// bunLock is bun.lock, bun's text lockfile (bun 1.2+): JSON with trailing
// commas (JSONC). "workspaces" maps each workspace folder ("" is the
// root) to its declarations; "packages" maps an install path, the
// installed names joined by "/" ("debug/ms" is ms inside debug), to an
// array whose first element is the resolution, "name@version" or
// "name@<protocol>:...", and one of whose later elements is an object
// holding the package's own dependencies.
type bunLock struct {
	LockfileVersion *int                         `json:"lockfileVersion"`
	Workspaces      map[string]bunWorkspace      `json:"workspaces"`
	Packages        map[string][]json.RawMessage `json:"packages"`
}

type bunWorkspace struct {
	Name                 string            `json:"name"`
	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
}

type bunInfo struct {
	Dependencies         map[string]string `json:"dependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
}

// parseBun checks bracket nesting against MaxNesting and the node count
// against MaxNodes before hujson parses: hujson's parser recurses once per
// level with no limit of its own (a file of 64 MiB of "[" would overflow
// the stack, which Go cannot recover from), and builds its whole tree at
// about 300 bytes per node.
func parseBun(data []byte, lim Limits) (*Lockfile, error) {
	if d := jsoncDepth(data); d > lim.MaxNesting {
		return nil, fmt.Errorf("%w: brackets nest %d deep, over the limit MaxNesting = %d", ErrInvalid, d, lim.MaxNesting)
	}
	if err := lim.checkNodes(data); err != nil {
		return nil, err
	}
	std, err := hujson.Standardize(append([]byte(nil), data...))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var lock bunLock
	if err := decodeJSON(std, &lock); err != nil {
		return nil, err
	}
	if lock.LockfileVersion == nil {
		return nil, fmt.Errorf("%w: no lockfileVersion", ErrInvalid)
	}
	if v := *lock.LockfileVersion; v < 0 || v > 2 {
		return nil, fmt.Errorf("lockfileVersion %d: %w", v, ErrUnsupported)
	}
	lf := &Lockfile{Format: "bun@" + strconv.Itoa(*lock.LockfileVersion)}

	var g depGraph
	byKey := map[string]int{}
	infos := map[int]bunInfo{}
	for _, key := range sortedKeys(lock.Packages) {
		arr := lock.Packages[key]
		path, err := bunPath(key)
		if err != nil {
			return nil, err
		}
		var res string
		if len(arr) == 0 || json.Unmarshal(arr[0], &res) != nil || res == "" {
			return nil, fmt.Errorf("%w: package %s: first element is not a resolution string", ErrInvalid, truncate(key))
		}
		var info bunInfo
		for _, el := range arr[1:] {
			if len(el) > 0 && el[0] == '{' {
				if err := json.Unmarshal(el, &info); err != nil {
					return nil, fmt.Errorf("%w: package %s: %v", ErrInvalid, truncate(key), err)
				}
				break
			}
		}
		i := g.add(checkVersion(bunDep(path[len(path)-1], res)))
		byKey[key] = i
		infos[i] = info
	}
	// resolve finds what a package at install path from gets for name, as
	// node resolves: from/name, then each parent's, then the top.
	resolve := func(from []string, name string) (int, bool) {
		for n := len(from); n >= 0; n-- {
			key := strings.Join(append(append([]string(nil), from[:n]...), name), "/")
			if i, ok := byKey[key]; ok {
				return i, true
			}
		}
		return 0, false
	}
	for _, key := range sortedKeys(lock.Packages) {
		i := byKey[key]
		path, _ := bunPath(key)
		info := infos[i]
		for s, sec := range []map[string]string{info.Dependencies, info.OptionalDependencies, info.PeerDependencies} {
			for _, name := range sortedKeys(sec) {
				if j, ok := resolve(path, name); ok && j != i {
					g.edge(i, j)
					if s == 2 {
						g.peer(i, j)
					}
				}
			}
		}
	}
	for _, dir := range sortedKeys(lock.Workspaces) {
		ws := lock.Workspaces[dir]
		var from []string
		if dir != "" && ws.Name != "" {
			from = []string{ws.Name}
		}
		decl := mergeSections(ws.Dependencies, ws.OptionalDependencies, ws.PeerDependencies, ws.DevDependencies)
		for _, name := range sortedKeys(decl) {
			if i, ok := resolve(from, name); ok {
				g.rootIn(dir, i, decl[name].dev)
				if dir == "" {
					g.deps[i].Direct = true
				}
			}
		}
	}
	g.markDev()
	lf.Deps, lf.graph = g.deps, &g
	return lf, nil
}

// bunPath splits a packages key into installed names, keeping each
// "@scope/name" whole.
func bunPath(key string) ([]string, error) {
	parts := strings.Split(key, "/")
	var out []string
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		if strings.HasPrefix(p, "@") && i+1 < len(parts) {
			p += "/" + parts[i+1]
			i++
		}
		if p == "" || p == "@" {
			return nil, fmt.Errorf("%w: package key %s has an empty name", ErrInvalid, truncate(key))
		}
		out = append(out, p)
	}
	return out, nil
}

// bunDep types a package by its resolution "name@version" or
// "name@<protocol>:...".
func bunDep(name, res string) Dep {
	d := Dep{Name: name}
	locName, ref, ok := splitNameAt(res)
	if !ok {
		d.Kind, d.Target = Other, res
		return d
	}
	if isVersion(ref) {
		d.Kind, d.Version = Registry, ref
		if locName != name {
			d.Kind, d.Target = Alias, locName
		}
		return d
	}
	d.Target = ref
	lower := strings.ToLower(ref)
	switch {
	case strings.HasPrefix(lower, "workspace:"), strings.HasPrefix(lower, "root:"):
		d.Kind = Workspace
	case strings.HasPrefix(lower, "link:"):
		d.Kind = Link
	default:
		if k, ok := classifyResolved(ref); ok {
			d.Kind = k
		} else {
			d.Kind = Other
		}
	}
	return d
}

// jsoncDepth returns the deepest bracket nesting of JSONC data, skipping
// strings and comments as a JSONC parser does.
func jsoncDepth(data []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '/':
			switch {
			case i+1 < len(data) && data[i+1] == '/':
				for i < len(data) && data[i] != '\n' {
					i++
				}
			case i+1 < len(data) && data[i+1] == '*':
				end := bytes.Index(data[i+2:], []byte("*/"))
				if end < 0 {
					return deepest
				}
				i += 2 + end + 1
			}
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth--
		}
	}
	return deepest
}
