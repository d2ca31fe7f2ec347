// Package fakejsdelivr is an in-process jsDelivr for tests: a Data API and
// a CDN serving packages published in code, answering as jsDelivr's
// OpenAPI spec documents (data.jsdelivr.com /v1/spec.yaml): flat and tree
// listings, resolved versions, package metadata, raw files, 404 for what
// it does not have and 403 for a package over its size limit.
//
// Its JSON is written here, independently of the mirror's encoder
// (internal/api), so tests can compare the two byte for byte. Only the
// choice of the default file is shared (jsdelivr.DefaultFile).
package fakejsdelivr

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pkgscope/pkgscope/internal/jsdelivr"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/pkgpath"
	"github.com/pkgscope/pkgscope/internal/semver"
)

// Server is a fake jsDelivr: a Data API server and a CDN server. It is
// safe for concurrent use.
type Server struct {
	t         testing.TB
	data, cdn *httptest.Server

	mu       sync.Mutex
	pkgs     map[string]*pkg
	tooLarge map[string]bool // name@version
	fail     int
	requests map[string]int
}

type pkg struct {
	versions     map[string]map[string][]byte // version → path → body
	tags         map[string]string
	latestPinned bool
}

// New starts a fake closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{t: t, pkgs: map[string]*pkg{}, tooLarge: map[string]bool{}, requests: map[string]int{}}
	s.data = httptest.NewServer(http.HandlerFunc(s.serveData))
	s.cdn = httptest.NewServer(http.HandlerFunc(s.serveCDN))
	t.Cleanup(func() {
		s.data.Close()
		s.cdn.Close()
	})
	return s
}

// DataURL is the Data API's base URL (no trailing slash).
func (s *Server) DataURL() string { return s.data.URL }

// CDNURL is the CDN's base URL (no trailing slash).
func (s *Server) CDNURL() string { return s.cdn.URL }

// Publish adds name@version with the files of tgz, an npm tarball (its top
// folder stripped, as npm extracts it). Unless tagged otherwise, latest is
// the highest release.
func (s *Server) Publish(name, version string, tgz []byte) {
	s.t.Helper()
	files := map[string][]byte{}
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		s.t.Fatalf("fakejsdelivr: Publish(%s@%s): %v", name, version, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			s.t.Fatalf("fakejsdelivr: Publish(%s@%s): %v", name, version, err)
		}
		p, err := pkgpath.CleanEntry(h.Name)
		if h.Typeflag != tar.TypeReg || err != nil {
			continue
		}
		if files[p], err = io.ReadAll(tr); err != nil {
			s.t.Fatalf("fakejsdelivr: Publish(%s@%s): %v", name, version, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pkgs[name]
	if p == nil {
		p = &pkg{versions: map[string]map[string][]byte{}, tags: map[string]string{}}
		s.pkgs[name] = p
	}
	p.versions[version] = files
	if !p.latestPinned {
		if l := highestRelease(p); l != "" {
			p.tags["latest"] = l
		}
	}
}

// SetDistTag points tag at version; setting latest stops Publish moving it.
func (s *Server) SetDistTag(name, tag, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pkgs[name].tags[tag] = version
	if tag == "latest" {
		s.pkgs[name].latestPinned = true
	}
}

// TooLarge makes name@version answer as a package over jsDelivr's size
// limit: 403 for its listing and its files.
func (s *Server) TooLarge(name, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tooLarge[name+"@"+version] = true
}

// Fail makes every request answer status (0 clears it), as jsDelivr
// being down would.
func (s *Server) Fail(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = status
}

// Requests counts requests by kind and target: "listing name@version",
// "file name@version/path", "resolved name", "metadata name". Failed
// requests count too.
func (s *Server) Requests(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[key]
}

// TotalRequests counts every request to either server.
func (s *Server) TotalRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.requests {
		n += c
	}
	return n
}

func (s *Server) serveData(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/packages/npm/")
	if !ok || r.Method != http.MethodGet {
		s.writeError(w, http.StatusNotFound, "Couldn't find the requested item.")
		return
	}
	name, tail := splitName(rest)
	switch {
	case tail == "/resolved":
		s.resolved(w, r, name)
	case tail == "":
		s.metadata(w, name)
	case strings.HasPrefix(tail, "@") && !strings.Contains(tail, "/"):
		s.listing(w, r, name, tail[1:])
	default:
		s.writeError(w, http.StatusNotFound, "Couldn't find the requested item.")
	}
}

// splitName splits "@scope/name@1.0.0/x" into "@scope/name" and
// "@1.0.0/x" (npmspec.SplitPath finds the name); name is "" when there is
// none.
func splitName(rest string) (name, tail string) {
	r, _, err := npmspec.SplitPath(rest)
	if err != nil || !strings.HasPrefix(rest, r.Name) {
		return "", rest
	}
	return r.Name, rest[len(r.Name):]
}

// count records a request and reports the failure set by Fail, if any.
func (s *Server) count(key string) (fail int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[key]++
	return s.fail
}

func (s *Server) failed(w http.ResponseWriter, key string) bool {
	if st := s.count(key); st != 0 {
		s.writeError(w, st, http.StatusText(st))
		return true
	}
	return false
}

type errorBody struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}

func (s *Server) writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Status: status, Message: msg})
}

// writeJSON writes v compact, without HTML escaping and without a
// trailing newline, as JSON.stringify does.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

type links map[string]string

func (s *Server) versionLinks(name, v string) links {
	return links{
		"self":        s.data.URL + "/v1/packages/npm/" + name + "@" + v,
		"entrypoints": s.data.URL + "/v1/packages/npm/" + name + "@" + v + "/entrypoints",
		"stats":       s.data.URL + "/v1/stats/packages/npm/" + name + "@" + v,
	}
}

func (s *Server) metadata(w http.ResponseWriter, name string) {
	if s.failed(w, "metadata "+name) {
		return
	}
	s.mu.Lock()
	p := s.pkgs[name]
	var tags map[string]string
	var versions []string
	if p != nil {
		tags = maps.Clone(p.tags)
		versions = slices.SortedFunc(maps.Keys(p.versions), func(a, b string) int { return semver.Compare(b, a) })
	}
	s.mu.Unlock()
	if p == nil {
		s.writeError(w, http.StatusNotFound, "Couldn't fetch versions for "+name+".")
		return
	}
	type ver struct {
		Version string `json:"version"`
		Links   links  `json:"links"`
	}
	out := struct {
		Type     string            `json:"type"`
		Name     string            `json:"name"`
		Tags     map[string]string `json:"tags"`
		Versions []ver             `json:"versions"`
		Links    links             `json:"links"`
	}{Type: "npm", Name: name, Tags: tags, Versions: []ver{}, Links: links{"stats": s.data.URL + "/v1/stats/packages/npm/" + name}}
	for _, v := range versions {
		out.Versions = append(out.Versions, ver{Version: v, Links: s.versionLinks(name, v)})
	}
	writeJSON(w, http.StatusOK, out)
}

// resolved answers as jsDelivr's getResolvedVersion does: an exact
// version, else a dist-tag, else the highest release satisfying the
// range; null when none does.
func (s *Server) resolved(w http.ResponseWriter, r *http.Request, name string) {
	if s.failed(w, "resolved "+name) {
		return
	}
	spec := r.URL.Query().Get("specifier")
	if spec == "" {
		spec = "latest"
	}
	s.mu.Lock()
	p := s.pkgs[name]
	var got string
	if p != nil {
		if _, ok := p.versions[spec]; ok {
			got = spec
		} else if v, ok := p.tags[spec]; ok {
			got = v
		} else if ps, err := npmspec.ParseSpec(spec); err == nil && ps.Kind == npmspec.Range {
			var cands []semver.Candidate
			for v := range p.versions {
				cands = append(cands, semver.Candidate{Version: v})
			}
			slices.SortFunc(cands, func(a, b semver.Candidate) int { return strings.Compare(a.Version, b.Version) })
			got, _ = semver.Select(ps, cands, nil)
		}
	}
	s.mu.Unlock()
	if p == nil {
		s.writeError(w, http.StatusNotFound, "Couldn't find "+name+"@"+spec+".")
		return
	}
	out := struct {
		Type    string  `json:"type"`
		Name    string  `json:"name"`
		Version *string `json:"version"`
		Links   links   `json:"links"`
	}{Type: "npm", Name: name, Links: links{}}
	if got != "" {
		out.Version, out.Links = &got, s.versionLinks(name, got)
	}
	writeJSON(w, http.StatusOK, out)
}

type flatFile struct {
	Name string `json:"name"`
	Hash string `json:"hash"`
	Size int    `json:"size"`
}

type treeDir struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Files []any  `json:"files"`
}

type treeFile struct {
	Type string `json:"type"`
	Name string `json:"name"`
	Hash string `json:"hash"`
	Size int    `json:"size"`
}

func (s *Server) listing(w http.ResponseWriter, r *http.Request, name, version string) {
	if s.failed(w, "listing "+name+"@"+version) {
		return
	}
	structure := r.URL.Query().Get("structure")
	if structure != "" && structure != "flat" && structure != "tree" {
		writeJSON(w, http.StatusBadRequest, struct {
			Status  int    `json:"status"`
			Message string `json:"message"`
			Links   links  `json:"links"`
		}{400, "Invalid parameter value: structure must be one of [tree, flat].", links{"documentation": s.data.URL + "/docs"}})
		return
	}
	s.mu.Lock()
	p := s.pkgs[name]
	var files map[string][]byte
	if p != nil {
		files = p.versions[version]
	}
	large := s.tooLarge[name+"@"+version]
	s.mu.Unlock()
	switch {
	case p == nil:
		s.writeError(w, http.StatusNotFound, "Couldn't find "+name+"@"+version+".")
		return
	case files == nil:
		s.writeError(w, http.StatusNotFound, "Couldn't find version "+version+" for "+name+". Make sure you use a specific version number, and not a version range or a tag.")
		return
	case large:
		s.writeError(w, http.StatusForbidden, "Package size exceeded the configured limit of 150 MB.")
		return
	}
	paths := slices.SortedFunc(maps.Keys(files), dirsFirst)
	flat := make([]flatFile, len(paths))
	for i, p := range paths {
		sum := sha256.Sum256(files[p])
		flat[i] = flatFile{Name: "/" + p, Hash: base64.StdEncoding.EncodeToString(sum[:]), Size: len(files[p])}
	}
	var def *string
	if pj, ok := files["package.json"]; ok {
		def = jsdelivr.DefaultFile(pj, func(p string) bool { _, ok := files[p]; return ok })
	}
	type head struct {
		Type    string  `json:"type"`
		Name    string  `json:"name"`
		Version string  `json:"version"`
		Default *string `json:"default"`
	}
	vlinks := links{
		"stats":       s.data.URL + "/v1/stats/packages/npm/" + name + "@" + version,
		"entrypoints": s.data.URL + "/v1/packages/npm/" + name + "@" + version + "/entrypoints",
	}
	h := head{"npm", name, version, def}
	if structure == "flat" {
		writeJSON(w, http.StatusOK, struct {
			head
			Files []flatFile `json:"files"`
			Links links      `json:"links"`
		}{h, flat, vlinks})
		return
	}
	writeJSON(w, http.StatusOK, struct {
		head
		Files []any `json:"files"`
		Links links `json:"links"`
	}{h, tree(flat), vlinks})
}

// dirsFirst orders paths as jsDelivr's listings do: at each level
// directories before files, names in byte order.
func dirsFirst(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		aDir, bDir := i < len(as)-1, i < len(bs)-1
		if aDir != bDir {
			if aDir {
				return -1
			}
			return 1
		}
		if c := strings.Compare(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return len(as) - len(bs)
}

// tree nests a flat listing the way jsDelivr's PackageRequest.getFiles
// does: a directory is created on its first file and inserted before the
// first file of its level.
func tree(flat []flatFile) []any {
	root := []any{}
	dirs := map[string]*treeDir{}
	var add func(name string, f flatFile, level *[]any, dir string)
	add = func(name string, f flatFile, level *[]any, dir string) {
		if i := strings.IndexByte(name, '/'); i >= 0 {
			abs := dir + "/" + name[:i]
			d, ok := dirs[abs]
			if !ok {
				d = &treeDir{Type: "directory", Name: name[:i], Files: []any{}}
				dirs[abs] = d
				at := slices.IndexFunc(*level, func(e any) bool { _, isFile := e.(treeFile); return isFile })
				if at < 0 {
					at = len(*level)
				}
				*level = slices.Insert(*level, at, any(d))
			}
			add(name[i+1:], f, &d.Files, abs)
			return
		}
		*level = append(*level, treeFile{Type: "file", Name: name, Hash: f.Hash, Size: f.Size})
	}
	for _, f := range flat {
		add(strings.TrimPrefix(f.Name, "/"), f, &root, "")
	}
	return root
}

func (s *Server) serveCDN(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/npm/")
	name, tail := splitName(rest)
	version, file, _ := strings.Cut(strings.TrimPrefix(tail, "@"), "/")
	if st := s.count("file " + name + "@" + version + "/" + file); st != 0 {
		http.Error(w, http.StatusText(st), st)
		return
	}
	s.mu.Lock()
	var body []byte
	found := false
	if p := s.pkgs[name]; p != nil && ok && strings.HasPrefix(tail, "@") {
		body, found = p.versions[version][file]
	}
	large := s.tooLarge[name+"@"+version]
	s.mu.Unlock()
	switch {
	case large:
		http.Error(w, "Package size exceeded the configured limit of 150 MB.", http.StatusForbidden)
	case !found:
		http.Error(w, "Couldn't find the requested file "+file+" in "+name+".", http.StatusNotFound)
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(body)
	}
}

// highestRelease is the highest version without a prerelease, else the
// highest version.
func highestRelease(p *pkg) string {
	var best, bestAny string
	for v := range p.versions {
		if bestAny == "" || semver.Compare(v, bestAny) > 0 {
			bestAny = v
		}
		if !strings.Contains(v, "-") && (best == "" || semver.Compare(v, best) > 0) {
			best = v
		}
	}
	if best == "" {
		return bestAny
	}
	return best
}
