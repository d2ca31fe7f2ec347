package lockfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// manifestDeps is what a package.json declares, by section.
type manifestDeps struct {
	Name                 string            `json:"name"`
	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	// PackageManager is corepack's "pnpm@9.1.0" field, which Find reads.
	PackageManager string `json:"packageManager"`
}

// utf8BOM is stripped before decoding: some editors on Windows write it,
// and Node's JSON.parse of package.json (via read-package-json) tolerates
// it.
var utf8BOM = []byte("\xef\xbb\xbf")

func parseManifest(data []byte) (*manifestDeps, error) {
	var m manifestDeps
	if err := decodeJSON(data, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// decodeJSON decodes one JSON value into v and wraps errors in ErrInvalid
// with a line number where the decoder gives an offset.
func decodeJSON(data []byte, v any) error {
	data = bytes.TrimPrefix(data, utf8BOM)
	if err := json.Unmarshal(data, v); err != nil {
		return jsonError(data, err)
	}
	return nil
}

func jsonError(data []byte, err error) error {
	var off int64 = -1
	switch e := err.(type) {
	case *json.SyntaxError:
		off = e.Offset
	case *json.UnmarshalTypeError:
		off = e.Offset
		if e.Field != "" {
			return fmt.Errorf("%w: line %d: field %s: want %s, got JSON %s", ErrInvalid, lineAt(data, off), e.Field, e.Type, e.Value)
		}
	}
	if off >= 0 {
		return fmt.Errorf("%w: line %d: %v", ErrInvalid, lineAt(data, off), err)
	}
	return fmt.Errorf("%w: %v", ErrInvalid, err)
}

// lineAt returns the 1-based line of byte offset off.
func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// rootDecl is one dependency a project root declares.
type rootDecl struct {
	spec string
	dev  bool // declared only in devDependencies
}

// declared merges the manifest's sections into name → declaration. A
// name in devDependencies and another section is not dev: npm installs
// it for production too.
func (m *manifestDeps) declared() map[string]rootDecl {
	if m == nil {
		return nil
	}
	return mergeSections(m.Dependencies, m.OptionalDependencies, m.PeerDependencies, m.DevDependencies)
}

// mergeSections builds name → declaration from prod-like sections
// (dependencies, optional, peer) and the dev section.
func mergeSections(dependencies, optional, peer, dev map[string]string) map[string]rootDecl {
	out := map[string]rootDecl{}
	for name, spec := range dev {
		out[name] = rootDecl{spec: spec, dev: true}
	}
	// Later sections win the spec, as npm's install order lets
	// dependencies override optionalDependencies and peers.
	for _, sec := range []map[string]string{peer, optional, dependencies} {
		for name, spec := range sec {
			out[name] = rootDecl{spec: spec}
		}
	}
	return out
}

// parsePackageJSON reads a bare package.json: every declared dependency is
// a direct Dep whose Version is the declared range.
func parsePackageJSON(data []byte) (*Lockfile, error) {
	m, err := parseManifest(data)
	if err != nil {
		return nil, err
	}
	lf := &Lockfile{Format: "package.json"}
	for _, sec := range []struct {
		deps map[string]string
		dev  bool
	}{
		{m.Dependencies, false}, {m.OptionalDependencies, false}, {m.PeerDependencies, false}, {m.DevDependencies, true},
	} {
		for name, spec := range sec.deps {
			if name == "" {
				return nil, fmt.Errorf("%w: a dependency with an empty name", ErrInvalid)
			}
			lf.Deps = append(lf.Deps, declaredDep(name, spec, sec.dev))
		}
	}
	return lf, nil
}

// declaredDep is the Dep a declaration alone gives: the range as Version
// for registry specs and aliases, the spec as Target for the rest.
func declaredDep(name, spec string, dev bool) Dep {
	d := Dep{Name: name, Direct: true, Dev: dev}
	kind, aliasName, aliasRange := classifySpec(spec)
	d.Kind = kind
	switch kind {
	case Registry:
		d.Version = orStar(spec)
	case Alias:
		d.Target, d.Version = aliasName, orStar(aliasRange)
	default:
		d.Target = spec
	}
	return d
}

// orStar returns "*" for an empty range, as npm reads one.
func orStar(rng string) string {
	if s := strings.TrimSpace(rng); s != "" {
		return s
	}
	return "*"
}
