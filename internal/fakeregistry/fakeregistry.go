// Package fakeregistry is an in-process npm registry for tests: it serves
// abbreviated packuments and tarballs published in code, counts requests,
// and can fail or hold requests on demand so tests of failure paths and
// stampedes need neither the network nor sleeps.
//
// It serves each version's manifest too (GET /<name>/<version>, as npm's
// registry does); RefuseVersions makes it answer that endpoint otherwise.
//
// Point npm configuration at it with npm_config_registry=r.URL().
package fakeregistry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/semver"
)

// Registry is a fake npm registry backed by an httptest server. It is safe
// for concurrent use.
type Registry struct {
	t   testing.TB
	srv *httptest.Server

	mu        sync.Mutex
	pkgs      map[string]*pkg
	tarballs  map[string]tarballRef // decoded URL path → version
	failures  map[string]failure
	raw       map[string][]byte
	holds     map[string]*hold
	tarHolds  map[string]*hold // HoldTarballs
	allHolds  []*hold
	packReqs  map[string]int
	versReqs  map[string]int           // name + "@" + version
	refuseVer int                      // RefuseVersions
	arrived   map[string]chan struct{} // Arrived
	downloads map[string]int           // name + "@" + version
	lastAuth  string
	search    bool // ServeSearch
}

type pkg struct {
	versions map[string]*version
	distTags map[string]string
	// latestPinned is set once "latest" was tagged explicitly; until then
	// Publish keeps it at the highest release.
	latestPinned bool
	modified     time.Time
}

type version struct {
	tgz        []byte
	tarball    string
	integrity  string
	shasum     string
	deprecated string
	deps       map[string]string
	// tagged is set when the version was published under another dist-tag
	// than latest, which keeps it out of the latest computation.
	tagged bool
	// unpackedSize and fileCount describe the tarball's regular files, 0
	// when it is not a readable .tgz (hostile tarballs are published too).
	unpackedSize int64
	fileCount    int
	// published is the version's entry in the full packument's "time".
	published time.Time
}

type tarballRef struct{ name, version string }

type failure struct {
	status     int
	retryAfter string
}

// New starts a registry that is closed when the test ends. Requests still
// held by Hold are released first, so a forgotten release cannot hang the
// test's cleanup.
func New(t testing.TB) *Registry {
	t.Helper()
	r := &Registry{
		t:         t,
		pkgs:      map[string]*pkg{},
		tarballs:  map[string]tarballRef{},
		failures:  map[string]failure{},
		raw:       map[string][]byte{},
		holds:     map[string]*hold{},
		tarHolds:  map[string]*hold{},
		packReqs:  map[string]int{},
		versReqs:  map[string]int{},
		downloads: map[string]int{},
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		r.mu.Lock()
		holds := r.allHolds
		r.mu.Unlock()
		for _, h := range holds {
			h.release()
		}
		r.srv.Close()
	})
	return r
}

// URL is the registry's base URL, with a trailing slash.
func (r *Registry) URL() string { return r.srv.URL + "/" }

// Env is an isolated npm environment whose registry is r (IsolatedEnv).
func (r *Registry) Env() map[string]string { return IsolatedEnv(r.t, r.URL()) }

// IsolatedEnv is the environment a mirror under test reads npm's
// configuration from: npm_config_registry is registryURL, the user and
// global .npmrc are an empty file and HOME an empty directory, so nothing
// of the machine's npm configuration leaks in. Callers add entries to it;
// Getenv reads it.
func IsolatedEnv(t testing.TB, registryURL string) map[string]string {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "npmrc")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"npm_config_registry":     registryURL,
		"NPM_CONFIG_USERCONFIG":   empty,
		"NPM_CONFIG_GLOBALCONFIG": empty,
		"HOME":                    t.TempDir(),
	}
}

// NPM is npm's configuration read from Env: r is the registry.
func (r *Registry) NPM() *npmrc.Config {
	r.t.Helper()
	npm, err := npmrc.Load(r.t.TempDir(), Getenv(r.Env()))
	if err != nil {
		r.t.Fatal(err)
	}
	return npm
}

// Getenv reads env as os.Getenv reads the process's.
func Getenv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// PublishOption changes how Publish records a version.
type PublishOption func(*publishOpts)

type publishOpts struct {
	tag          string
	noIntegrity  bool
	integrity    string
	tarballURL   string
	deprecated   string
	deps         map[string]string
	setIntegrity bool
	published    time.Time
}

// WithTag publishes under dist-tag tag instead of moving latest, as
// `npm publish --tag tag` does. WithTag("latest") pins latest to this
// version even when it is not the highest.
func WithTag(tag string) PublishOption { return func(o *publishOpts) { o.tag = tag } }

// WithoutIntegrity leaves dist.integrity out, so only dist.shasum (sha1)
// vouches for the tarball, as for versions published before 2017.
func WithoutIntegrity() PublishOption { return func(o *publishOpts) { o.noIntegrity = true } }

// WithIntegrity sets dist.integrity to sri verbatim, e.g. a wrong digest;
// "" removes it.
func WithIntegrity(sri string) PublishOption {
	return func(o *publishOpts) { o.integrity, o.setIntegrity = sri, true }
}

// WithTarballURL sets dist.tarball to u instead of the registry's own URL.
// The tarball is still served at the registry's own URL.
func WithTarballURL(u string) PublishOption { return func(o *publishOpts) { o.tarballURL = u } }

// WithDependencies lists the version's dependencies (name → range) in its
// packument, so that the real npm CLI can resolve a tree from the registry.
func WithDependencies(deps map[string]string) PublishOption {
	return func(o *publishOpts) { o.deps = deps }
}

// PublishedAt sets the version's publish time in the full packument's
// "time" object (default: when Publish ran).
func PublishedAt(t time.Time) PublishOption { return func(o *publishOpts) { o.published = t } }

// Deprecated marks the version deprecated with msg.
func Deprecated(msg string) PublishOption { return func(o *publishOpts) { o.deprecated = msg } }

// Publish adds version of package name with tarball tgz. It computes
// dist.integrity (sha512) and dist.shasum (sha1) from tgz. Unless tagged
// otherwise, dist-tags.latest is the highest version without a prerelease
// (or the highest prerelease, when there is no release) among the versions
// not published WithTag. Publishing the same
// version twice fails the test, as the registry refuses it.
func (r *Registry) Publish(name, ver string, tgz []byte, opts ...PublishOption) {
	r.t.Helper()
	var o publishOpts
	for _, opt := range opts {
		opt(&o)
	}
	if !semver.Valid(ver) {
		r.t.Fatalf("fakeregistry: Publish(%q, %q): not a semver version", name, ver)
	}
	sum512 := sha512.Sum512(tgz)
	sum1 := sha1.Sum(tgz)
	v := &version{
		tgz:        tgz,
		integrity:  "sha512-" + base64.StdEncoding.EncodeToString(sum512[:]),
		shasum:     hex.EncodeToString(sum1[:]),
		deprecated: o.deprecated,
		deps:       o.deps,
		published:  o.published,
	}
	if v.published.IsZero() {
		v.published = time.Now().UTC()
	}
	v.unpackedSize, v.fileCount = tarStats(tgz)
	v.tagged = o.tag != "" && o.tag != "latest"
	if o.noIntegrity {
		v.integrity = ""
	}
	if o.setIntegrity {
		v.integrity = o.integrity
	}
	path := name + "/-/" + basename(name) + "-" + ver + ".tgz"
	v.tarball = r.URL() + path
	if o.tarballURL != "" {
		v.tarball = o.tarballURL
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pkgs[name]
	if p == nil {
		p = &pkg{versions: map[string]*version{}, distTags: map[string]string{}}
		r.pkgs[name] = p
	}
	if _, dup := p.versions[ver]; dup {
		r.t.Fatalf("fakeregistry: %s@%s is already published", name, ver)
	}
	p.versions[ver] = v
	p.modified = time.Now().UTC()
	r.tarballs[path] = tarballRef{name, ver}
	if o.tag != "" {
		p.distTags[o.tag] = ver
		if o.tag == "latest" {
			p.latestPinned = true
		}
	}
	if !p.latestPinned {
		if l := highest(p.versions); l != "" {
			p.distTags["latest"] = l
		}
	}
}

// SetDistTag points dist-tag tag of name at version, as `npm dist-tag add`
// does. Setting "latest" stops Publish from moving it.
func (r *Registry) SetDistTag(name, tag, ver string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pkgs[name]
	if p == nil || p.versions[ver] == nil {
		r.t.Errorf("fakeregistry: SetDistTag(%q, %q, %q): version not published", name, tag, ver)
		return
	}
	p.distTags[tag] = ver
	p.modified = time.Now().UTC()
	if tag == "latest" {
		p.latestPinned = true
	}
}

// Deprecate sets the deprecation message of name@version, as `npm
// deprecate` does; "" takes it back.
func (r *Registry) Deprecate(name, ver, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pkgs[name]
	if p == nil || p.versions[ver] == nil {
		r.t.Errorf("fakeregistry: Deprecate(%q, %q): version not published", name, ver)
		return
	}
	p.versions[ver].deprecated = msg
	p.modified = time.Now().UTC()
}

// TarballDownloads counts GET requests for the tarball of name@version,
// including those answered with a Fail status.
func (r *Registry) TarballDownloads(name, ver string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.downloads[name+"@"+ver]
}

// PackumentRequests counts GET requests for the packument of name,
// including those answered with a Fail status or for unknown packages.
func (r *Registry) PackumentRequests(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.packReqs[name]
}

// VersionRequests counts GET requests for the manifest of name@version
// (its version endpoint), including those answered with a Fail or
// RefuseVersions status.
func (r *Registry) VersionRequests(name, ver string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.versReqs[name+"@"+ver]
}

// RefuseVersions makes every request for a version's manifest answer
// status (a 404 or 405, as registries that do not serve the endpoint
// answer), so clients must read the packument; 0 serves them again.
func (r *Registry) RefuseVersions(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refuseVer = status
}

// LastAuthorization is the Authorization header of the latest request, ""
// when it had none.
func (r *Registry) LastAuthorization() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastAuth
}

// Fail makes every request for name (packument and tarballs) answer status,
// with a Retry-After header when retryAfter is not "". Fail(name, 0, "")
// clears it.
func (r *Registry) Fail(name string, status int, retryAfter string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if status == 0 {
		delete(r.failures, name)
		return
	}
	r.failures[name] = failure{status, retryAfter}
}

// SetRawPackument makes the packument of name answer 200 with body verbatim
// (garbage, truncated JSON, a wrong name); nil clears it.
func (r *Registry) SetRawPackument(name string, body []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if body == nil {
		delete(r.raw, name)
		return
	}
	r.raw[name] = body
}

// Hold makes requests for name (packument and tarballs) block until release
// is called; release may be called more than once. Requests are counted
// before they block.
func (r *Registry) Hold(name string) (release func()) {
	h := &hold{ch: make(chan struct{})}
	r.mu.Lock()
	r.holds[name] = h
	r.allHolds = append(r.allHolds, h)
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		if r.holds[name] == h {
			delete(r.holds, name)
		}
		r.mu.Unlock()
		h.release()
	}
}

// Arrived returns a channel closed when the next request for name (packument
// or tarball) reaches the registry, before any Hold blocks it: a test
// waits on it to know a fetch is in flight, without sleeping.
func (r *Registry) Arrived(name string) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.arrived == nil {
		r.arrived = map[string]chan struct{}{}
	}
	a, ok := r.arrived[name]
	if !ok {
		a = make(chan struct{})
		r.arrived[name] = a
	}
	return a
}

// HoldTarballs makes requests for name's tarballs (not its packument or
// manifests, so a fill gets as far as its download) block until release
// is called, or until their client gives up; arrived is closed once the
// first of them blocks.
func (r *Registry) HoldTarballs(name string) (arrived <-chan struct{}, release func()) {
	h := &hold{ch: make(chan struct{}), arrived: make(chan struct{})}
	r.mu.Lock()
	r.tarHolds[name] = h
	r.allHolds = append(r.allHolds, h)
	r.mu.Unlock()
	return h.arrived, func() {
		r.mu.Lock()
		if r.tarHolds[name] == h {
			delete(r.tarHolds, name)
		}
		r.mu.Unlock()
		h.release()
	}
}

// hold is one Hold: a channel closed once on release.
type hold struct {
	ch   chan struct{}
	once sync.Once
	// arrived, when set, is closed once a request blocks on the hold.
	arrived     chan struct{}
	arrivedOnce sync.Once
}

func (h *hold) release() { h.once.Do(func() { close(h.ch) }) }

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		http.Error(w, `{"error":"method not allowed"}`, http.StatusMethodNotAllowed)
		return
	}
	// req.URL.Path is decoded, so "@scope%2fname" and "@scope/name" are
	// the same path here.
	path := strings.TrimPrefix(req.URL.Path, "/")
	r.mu.Lock()
	search := r.search
	r.mu.Unlock()
	if path == "-/v1/search" && search {
		r.serveSearch(w)
		return
	}
	name, isTarball := path, false
	var ver string
	r.mu.Lock()
	r.lastAuth = req.Header.Get("Authorization")
	if i := strings.Index(path, "/-/"); i >= 0 {
		name, isTarball = path[:i], true
		if ref, ok := r.tarballs[path]; ok {
			r.downloads[ref.name+"@"+ref.version]++
		}
	} else if name, ver = splitVersion(path); ver != "" {
		r.versReqs[name+"@"+ver]++
	} else {
		r.packReqs[name]++
	}
	h := r.holds[name]
	if th := r.tarHolds[name]; th != nil && isTarball && h == nil {
		h = th
	}
	if a, ok := r.arrived[name]; ok {
		close(a)
		delete(r.arrived, name)
	}
	r.mu.Unlock()

	if h != nil {
		if h.arrived != nil {
			h.arrivedOnce.Do(func() { close(h.arrived) })
		}
		select {
		case <-h.ch:
		case <-req.Context().Done():
			return
		}
	}

	r.mu.Lock()
	fail, failing := r.failures[name]
	raw, isRaw := r.raw[name]
	if refuse := r.refuseVer; ver != "" && refuse != 0 && !failing {
		fail, failing = failure{status: refuse}, true
	}
	r.mu.Unlock()
	if failing {
		if fail.retryAfter != "" {
			w.Header().Set("Retry-After", fail.retryAfter)
		}
		writeJSON(w, fail.status, "application/json", map[string]string{"error": http.StatusText(fail.status)})
		return
	}
	if isTarball {
		r.serveTarball(w, path)
		return
	}
	if ver != "" {
		r.serveVersion(w, name, ver)
		return
	}
	if isRaw {
		w.Header().Set("Content-Type", "application/vnd.npm.install-v1+json")
		w.Write(raw)
		return
	}
	accept := req.Header.Get("Accept")
	r.servePackument(w, name, strings.Contains(accept, "application/json") && !strings.Contains(accept, "application/vnd.npm.install-v1+json"))
}

func (r *Registry) serveTarball(w http.ResponseWriter, path string) {
	r.mu.Lock()
	var tgz []byte
	if ref, ok := r.tarballs[path]; ok {
		tgz = r.pkgs[ref.name].versions[ref.version].tgz
	}
	r.mu.Unlock()
	if tgz == nil {
		writeJSON(w, http.StatusNotFound, "application/json", map[string]string{"error": "Not found"})
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(tgz)
}

// abbreviated is the abbreviated packument ("corgi") format.
type abbreviated struct {
	Name     string                     `json:"name"`
	DistTags map[string]string          `json:"dist-tags"`
	Versions map[string]abbreviatedVers `json:"versions"`
	Modified string                     `json:"modified"`
	// Time is the full packument's: "created", "modified" and each
	// version's publish time. The abbreviated one has none.
	Time map[string]string `json:"time,omitempty"`
}

type abbreviatedVers struct {
	Name         string            `json:"name"`
	Version      string            `json:"version"`
	Dependencies map[string]string `json:"dependencies,omitempty"`
	Dist         abbreviatedDist   `json:"dist"`
	Deprecated   string            `json:"deprecated,omitempty"`
}

type abbreviatedDist struct {
	Tarball      string `json:"tarball"`
	Integrity    string `json:"integrity,omitempty"`
	Shasum       string `json:"shasum"`
	UnpackedSize int64  `json:"unpackedSize"`
	FileCount    int    `json:"fileCount"`
}

// entry is v as the packument and its manifest describe it.
func (v *version) entry(name, ver string) abbreviatedVers {
	return abbreviatedVers{Name: name, Version: ver, Deprecated: v.deprecated, Dependencies: v.deps, Dist: abbreviatedDist{
		Tarball: v.tarball, Integrity: v.integrity, Shasum: v.shasum, UnpackedSize: v.unpackedSize, FileCount: v.fileCount,
	}}
}

// A request whose Accept asks for application/json and not the
// abbreviated document gets the full one, as npm's registry answers: here
// it adds only "time". Without an Accept the abbreviated one is served.
func (r *Registry) servePackument(w http.ResponseWriter, name string, full bool) {
	r.mu.Lock()
	p := r.pkgs[name]
	var doc abbreviated
	if p != nil {
		doc = abbreviated{Name: name, DistTags: map[string]string{}, Versions: map[string]abbreviatedVers{},
			Modified: p.modified.Format(time.RFC3339Nano)}
		for tag, v := range p.distTags {
			doc.DistTags[tag] = v
		}
		for ver, v := range p.versions {
			doc.Versions[ver] = v.entry(name, ver)
		}
		if full {
			doc.Time = map[string]string{"modified": doc.Modified}
			created := p.modified
			for ver, v := range p.versions {
				doc.Time[ver] = v.published.Format(time.RFC3339Nano)
				if v.published.Before(created) {
					created = v.published
				}
			}
			doc.Time["created"] = created.Format(time.RFC3339Nano)
		}
	}
	r.mu.Unlock()
	if p == nil {
		writeJSON(w, http.StatusNotFound, "application/json", map[string]string{"error": "Not found"})
		return
	}
	ct := "application/vnd.npm.install-v1+json"
	if full {
		ct = "application/json"
	}
	writeJSON(w, http.StatusOK, ct, doc)
}

// splitVersion splits "name/version" ("@scope/name/version") into its
// parts; version is "" for a packument's path.
func splitVersion(path string) (name, ver string) {
	parts := 2
	if strings.HasPrefix(path, "@") {
		parts = 3
	}
	f := strings.SplitN(path, "/", parts)
	if len(f) < parts {
		return path, ""
	}
	return strings.Join(f[:parts-1], "/"), f[parts-1]
}

// manifest is one version's document, as the version endpoint answers
// it: the package.json fields a test needs, with dist.
type manifest struct {
	ID string `json:"_id"`
	abbreviatedVers
}

func (r *Registry) serveVersion(w http.ResponseWriter, name, ver string) {
	r.mu.Lock()
	var doc *manifest
	if p := r.pkgs[name]; p != nil && p.versions[ver] != nil {
		doc = &manifest{ID: name + "@" + ver, abbreviatedVers: p.versions[ver].entry(name, ver)}
	}
	r.mu.Unlock()
	if doc == nil {
		writeJSON(w, http.StatusNotFound, "application/json", map[string]string{"error": "version not found: " + ver})
		return
	}
	writeJSON(w, http.StatusOK, "application/json", doc)
}

func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	w.Write(b)
}

// basename is the package name without its scope, as used in tarball file
// names: "@s/x" → "x".
func basename(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// tarStats sums the sizes of the regular files in a .tgz and counts them.
func tarStats(tgz []byte) (size int64, files int) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return 0, 0
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return size, files
		}
		if err != nil {
			return 0, 0
		}
		if h.Typeflag == tar.TypeReg {
			size += h.Size
			files++
		}
	}
}

// highest picks the highest release, or the highest prerelease when there
// is no release, among versions not published under another tag: what npm
// publish leaves as dist-tags.latest.
func highest(versions map[string]*version) string {
	var best, bestPre string
	for v, meta := range versions {
		if meta.tagged {
			continue
		}
		core, _, _ := strings.Cut(v, "+")
		if !strings.Contains(core, "-") {
			if best == "" || semver.Compare(v, best) > 0 {
				best = v
			}
		} else if bestPre == "" || semver.Compare(v, bestPre) > 0 {
			bestPre = v
		}
	}
	if best != "" {
		return best
	}
	return bestPre
}

// ServeSearch makes the registry answer npm's search (/-/v1/search); by
// default it does not, as many private registries do not.
func (r *Registry) ServeSearch() {
	r.mu.Lock()
	r.search = true
	r.mu.Unlock()
}

// serveSearch answers npm's search (/-/v1/search) with every published
// name, sorted: the caller ranks them (a real registry's search is fuzzy
// and ranks by popularity; a test needs only the names to be there).
func (r *Registry) serveSearch(w http.ResponseWriter) {
	r.mu.Lock()
	type object struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
	}
	var out struct {
		Objects []object `json:"objects"`
		Total   int      `json:"total"`
	}
	for name := range r.pkgs {
		var o object
		o.Package.Name = name
		out.Objects = append(out.Objects, o)
	}
	r.mu.Unlock()
	sort.Slice(out.Objects, func(i, j int) bool { return out.Objects[i].Package.Name < out.Objects[j].Package.Name })
	out.Total = len(out.Objects)
	writeJSON(w, http.StatusOK, "application/json", out)
}
