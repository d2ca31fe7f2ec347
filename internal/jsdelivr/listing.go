package jsdelivr

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/pkgscope/pkgscope/internal/pkgpath"
	"github.com/pkgscope/pkgscope/internal/store"
)

// The Data API's JSON shapes, as its OpenAPI spec (data.jsdelivr.com
// /v1/spec.yaml) documents them. Field order is the spec's, so the
// mirror's compatible endpoints write the same bytes jsDelivr does.

// Listing is the answer for one version: GET /v1/packages/npm/{name}@{version}.
// Files holds []FlatFile with ?structure=flat, []any of TreeDir and
// TreeFile by default.
type Listing struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Version string `json:"version"`
	// Default is the file jsDelivr serves for /npm/{name}@{version}, with
	// a leading slash; null when the package names none.
	Default *string    `json:"default"`
	Files   []FlatFile `json:"files"`
}

// FlatFile is one file of a flat listing.
type FlatFile struct {
	// Name is the file's absolute path in the package: "/dist/x.js".
	Name string `json:"name"`
	// Hash is the base64 of the sha256 of the file's bytes.
	Hash string `json:"hash"`
	Size int64  `json:"size"`
}

// TreeListing is Listing with the default, nested structure.
type TreeListing struct {
	Type    string  `json:"type"`
	Name    string  `json:"name"`
	Version string  `json:"version"`
	Default *string `json:"default"`
	// Files holds TreeDir and TreeFile values.
	Files []any `json:"files"`
}

// TreeDir is a directory of a tree listing.
type TreeDir struct {
	Type  string `json:"type"` // "directory"
	Name  string `json:"name"`
	Files []any  `json:"files"`
}

// TreeFile is a file of a tree listing.
type TreeFile struct {
	Type string `json:"type"` // "file"
	Name string `json:"name"`
	Hash string `json:"hash"`
	Size int64  `json:"size"`
}

// Resolved is the answer to GET /v1/packages/npm/{name}/resolved.
type Resolved struct {
	Type string `json:"type"`
	Name string `json:"name"`
	// Version is null when no version matches.
	Version *string `json:"version"`
	// Links is {} when Version is null.
	Links map[string]string `json:"links"`
}

// Metadata is the answer to GET /v1/packages/npm/{name}.
type Metadata struct {
	Type string            `json:"type"`
	Name string            `json:"name"`
	Tags map[string]string `json:"tags"`
	// Versions are sorted newest first.
	Versions []MetadataVersion `json:"versions"`
	Links    map[string]string `json:"links"`
}

// MetadataVersion is one entry of Metadata.Versions.
type MetadataVersion struct {
	Version string            `json:"version"`
	Links   map[string]string `json:"links"`
}

// StoreFiles validates the listing's files and returns them as store
// files: paths without the leading slash, cleaned by the store's own path
// rule, sorted in byte order (explore looks files up by binary search),
// Hash decoded. Binary is left false: a listing does not say. A listing
// with a bad path, hash or size, or a duplicate path, is refused whole:
// it is not what jsDelivr documents, so none of it is trusted.
func (l *Listing) StoreFiles() ([]store.File, error) {
	files := make([]store.File, 0, len(l.Files))
	for _, f := range l.Files {
		p, ok := strings.CutPrefix(f.Name, "/")
		if !ok {
			return nil, fmt.Errorf("jsDelivr listing: file name %q does not start with /", f.Name)
		}
		clean, err := pkgpath.Clean(p)
		if err != nil || clean != p {
			return nil, fmt.Errorf("jsDelivr listing: file name %q is not a clean package path", f.Name)
		}
		h, err := base64.StdEncoding.DecodeString(f.Hash)
		if err != nil || len(h) != len(store.Hash{}) {
			return nil, fmt.Errorf("jsDelivr listing: %q: hash %q is not a base64 sha256", f.Name, f.Hash)
		}
		if f.Size < 0 {
			return nil, fmt.Errorf("jsDelivr listing: %q: negative size %d", f.Name, f.Size)
		}
		sf := store.File{Path: p, Size: f.Size}
		copy(sf.Hash[:], h)
		files = append(files, sf)
	}
	slices.SortFunc(files, func(a, b store.File) int { return strings.Compare(a.Path, b.Path) })
	for i := 1; i < len(files); i++ {
		if files[i].Path == files[i-1].Path {
			return nil, fmt.Errorf("jsDelivr listing: %q is listed twice", files[i].Path)
		}
	}
	return files, nil
}

// HashString is a file hash as the Data API writes it: base64 of sha256.
func HashString(h store.Hash) string { return base64.StdEncoding.EncodeToString(h[:]) }

// node is a directory while building a listing's order.
type node struct {
	dirs  map[string]*node
	files []store.File // Path holds the base name
}

// build groups files (store paths) by directory.
func build(files []store.File) *node {
	root := &node{dirs: map[string]*node{}}
	for _, f := range files {
		n := root
		segs := strings.Split(f.Path, "/")
		for _, d := range segs[:len(segs)-1] {
			c := n.dirs[d]
			if c == nil {
				c = &node{dirs: map[string]*node{}}
				n.dirs[d] = c
			}
			n = c
		}
		f.Path = segs[len(segs)-1]
		n.files = append(n.files, f)
	}
	return root
}

// sorted returns n's subdirectories and files in jsDelivr's order: at
// each level directories first, then files, each in byte order of their
// names (the order of the spec's examples: "/dist/jquery.js" before
// "/README.md").
func (n *node) sorted() ([]string, []store.File) {
	slices.SortFunc(n.files, func(a, b store.File) int { return strings.Compare(a.Path, b.Path) })
	return slices.Sorted(maps.Keys(n.dirs)), n.files
}

// Flat returns files (store paths) as a flat listing, in jsDelivr's order.
func Flat(files []store.File) []FlatFile {
	out := make([]FlatFile, 0, len(files))
	var rec func(prefix string, n *node)
	rec = func(prefix string, n *node) {
		dirs, files := n.sorted()
		for _, d := range dirs {
			rec(prefix+d+"/", n.dirs[d])
		}
		for _, f := range files {
			out = append(out, FlatFile{Name: prefix + f.Path, Hash: HashString(f.Hash), Size: f.Size})
		}
	}
	rec("/", build(files))
	return out
}

// Tree returns files (store paths) as a tree listing's files.
func Tree(files []store.File) []any {
	var rec func(n *node) []any
	rec = func(n *node) []any {
		out := []any{}
		dirs, files := n.sorted()
		for _, d := range dirs {
			out = append(out, TreeDir{Type: "directory", Name: d, Files: rec(n.dirs[d])})
		}
		for _, f := range files {
			out = append(out, TreeFile{Type: "file", Name: f.Path, Hash: HashString(f.Hash), Size: f.Size})
		}
		return out
	}
	return rec(build(files))
}

// DefaultFile picks the file jsDelivr serves for a bare /npm/{name}@{version}
// from the package's package.json, with a leading slash, or nil. jsDelivr
// documents the fields it reads ("jsdelivr", "browser" or "main"; "cdn"
// is read too); the first that is a string naming a file of the version
// wins, and a .js or .css file's minified sibling (x.min.js) is preferred
// when it exists, as jsDelivr serves jquery's "main": "dist/jquery.js" as
// /dist/jquery.min.js. has reports whether a store path exists.
func DefaultFile(packageJSON []byte, has func(path string) bool) *string {
	var pj map[string]json.RawMessage
	if json.Unmarshal(packageJSON, &pj) != nil {
		return nil
	}
	for _, field := range []string{"jsdelivr", "cdn", "browser", "main"} {
		var v string
		if json.Unmarshal(pj[field], &v) != nil || v == "" {
			continue
		}
		p, err := pkgpath.Clean(v)
		if err != nil {
			continue
		}
		for _, c := range candidates(p) {
			if has(c) {
				d := "/" + c
				return &d
			}
		}
	}
	return nil
}

// candidates lists the files a default field may mean, best first.
func candidates(p string) []string {
	ext := path.Ext(p)
	switch ext {
	case ".js", ".css":
		base := strings.TrimSuffix(p, ext)
		if strings.HasSuffix(base, ".min") {
			return []string{p}
		}
		return []string{base + ".min" + ext, p}
	case "":
		return []string{p + ".min.js", p + ".js", p}
	}
	return []string{p}
}

// errNoVersion is a resolved answer of null.
var errNoVersion = errors.New("jsDelivr has no version matching")
