package web

import (
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/store"
)

// packageData is the package page: what jsDelivr's and unpkg's package
// pages show at a glance, for one stored version.
type packageData struct {
	Name, Version string
	Base          string // the version's files: /browse/{name}@{version}/
	Versions      *versionsData
	Deprecated    string
	Files         int
	Bytes         int64
	Description   string
	License       string
	Homepage      string
	Repository    string
	Deps          []depGroup
	Readme        template.HTML
	ReadmePath    string
	ReadmeCut     bool // the README was over PageBytes: the start is shown
	// Published is when this version was published (zero: unknown);
	// DatesNote says why dates are missing, when they are.
	Published time.Time
	DatesNote string
}

// depGroup is one of package.json's dependency maps, each linked to the
// dependency's page at its range (resolved when followed).
type depGroup struct {
	Kind string
	Deps []dep
}

type dep struct{ Name, Range, Href string }

// depHref links a dependency's page: package.json is the package
// author's, so a name that is not a package's gets no link (""), and the
// range is escaped, so that neither points the link at another page of
// the mirror ("../../logout").
func depHref(name, rng string) string {
	if npmspec.ValidateName(name) != nil {
		return ""
	}
	return "/browse/" + name + "@" + url.PathEscape(rng)
}

// manifest is what the package page reads of package.json.
type manifest struct {
	Description          string            `json:"description"`
	License              any               `json:"license"`
	Homepage             any               `json:"homepage"`
	Repository           any               `json:"repository"`
	Dependencies         map[string]string `json:"dependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
}

// packagePage serves /browse/{name}@{version} (no slash): the README,
// versions, dependencies, size and deprecation of a stored version.
func (p *Pages) packagePage(c echo.Context, o *explore.Opened) error {
	d := &packageData{Name: o.Name, Version: o.Version, Base: "/browse/" + o.Name + "@" + o.Version + "/", Deprecated: o.Deprecated, Files: len(o.Files)}
	for _, f := range o.Files {
		d.Bytes += f.Size
	}
	if vq, ok := c.QueryParams()["versions"]; ok {
		d.Versions = p.versionList(c, o.Name, o.Version, strings.TrimSpace(vq[0]), true)
	} else {
		d.Versions = p.versions(c, o.Name, o.Version)
	}
	var dates map[string]time.Time
	dates, d.DatesNote = p.dates(c, o.Name)
	d.Published = dates[o.Version]
	if vd := d.Versions; vd != nil && dates != nil {
		for _, ls := range [][]verLink{vd.Tags, vd.Releases, vd.Pre} {
			for i := range ls {
				ls[i].Published = dates[ls[i].Version]
			}
		}
	}
	if f, ok := fileNamed(o.Files, "package.json"); ok {
		var m manifest
		if b, _, err := p.readSome(c, o, f); err == nil && json.Unmarshal(b, &m) == nil {
			d.Description, d.License = m.Description, stringish(m.License, "type")
			d.Homepage, d.Repository = webURL(stringish(m.Homepage, "")), webURL(stringish(m.Repository, "url"))
			for _, g := range []struct {
				kind string
				deps map[string]string
			}{{"Dependencies", m.Dependencies}, {"Peer dependencies", m.PeerDependencies}, {"Optional dependencies", m.OptionalDependencies}} {
				if len(g.deps) == 0 {
					continue
				}
				dg := depGroup{Kind: g.kind}
				for name, rng := range g.deps {
					dg.Deps = append(dg.Deps, dep{Name: name, Range: rng, Href: depHref(name, rng)})
				}
				slices.SortFunc(dg.Deps, func(a, b dep) int { return strings.Compare(a.Name, b.Name) })
				d.Deps = append(d.Deps, dg)
			}
		}
	}
	if f, ok := readme(o.Files); ok {
		d.ReadmePath, d.ReadmeCut = f.Path, f.Size > int64(p.lim.PageBytes)
		key := readmeKey{hash: f.Hash, base: d.Base}
		if h, ok := p.readmes.Get(key); ok {
			d.Readme = h
		} else if b, _, err := p.readSome(c, o, f); err == nil {
			if strings.HasSuffix(strings.ToLower(f.Path), ".md") || strings.HasSuffix(strings.ToLower(f.Path), ".markdown") {
				d.Readme = renderMarkdown(b, packageLink(d.Base))
			} else {
				d.Readme = plainText(b)
			}
			p.readmes.Add(key, d.Readme, int64(len(d.Readme)))
		}
	}
	return p.render(c, http.StatusOK, "package", page{Title: o.Name + "@" + o.Version, Data: d})
}

// dates returns when name's versions were published, waiting at most
// DatesWait, or nil and a note saying why the page has none. Any failure
// leaves the page as it is without dates: they are a convenience, the
// registry is asked for them only here, and the answer is cached
// (packument-ttl) by the registry client, which keeps fetching a slow
// document after the page stops waiting so a later view has them.
func (p *Pages) dates(c echo.Context, name string) (map[string]time.Time, string) {
	if p.d.Dates == nil {
		return nil, ""
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), p.lim.DatesWait)
	defer cancel()
	dates, tooLarge, err := p.d.Dates(ctx, name)
	switch {
	case err == nil && tooLarge:
		return nil, "Publish dates are left out: this package's full registry document is larger than the mirror reads for them (packument-times-max-bytes)."
	case err == nil:
		return dates, ""
	case errors.Is(err, context.DeadlineExceeded) && c.Request().Context().Err() == nil:
		return nil, "Publish dates are still on their way from the registry: reload the page to see them."
	default:
		p.log.Debug("web: publish dates", "package", name, "err", err)
		return nil, "Publish dates are unavailable: the registry did not answer for them now."
	}
}

// readmeBytes bounds the rendered READMEs Pages keeps, counted as their
// HTML: a 100 KB README renders to about 150 KB, so this keeps the last
// 50 or more package pages' READMEs.
const readmeBytes = 8 << 20

// readmeKey names a rendered README: the body's hash and the base its
// relative links point into.
type readmeKey struct {
	hash [32]byte
	base string
}

// readSome reads the first PageBytes of f, and whether there was more.
func (p *Pages) readSome(c echo.Context, o *explore.Opened, f store.File) ([]byte, bool, error) {
	_, body, _, err := p.d.Packages.FileOfStream(c.Request().Context(), o, f.Path)
	if err != nil {
		return nil, false, err
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, int64(p.lim.PageBytes)+1))
	if err != nil {
		return nil, false, err
	}
	if len(b) > p.lim.PageBytes {
		return b[:p.lim.PageBytes], true, nil
	}
	return b, false, nil
}

// fileNamed returns the file at path.
func fileNamed(files []store.File, path string) (store.File, bool) {
	i, ok := slices.BinarySearchFunc(files, path, func(f store.File, p string) int { return strings.Compare(f.Path, p) })
	if !ok {
		return store.File{}, false
	}
	return files[i], true
}

// readme is the package's README at its root, as npm picks it: README.md
// before other README files, any case.
func readme(files []store.File) (store.File, bool) {
	var best store.File
	found := false
	for _, f := range files {
		if strings.Contains(f.Path, "/") || !strings.HasPrefix(strings.ToLower(f.Path), "readme") || f.Binary {
			continue
		}
		if !found || strings.EqualFold(f.Path, "readme.md") {
			best, found = f, true
		}
	}
	return best, found
}

// stringish reads a manifest field that is a string or an object holding
// one under key ("license": {"type": "MIT"}).
func stringish(v any, key string) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		if s, ok := v[key].(string); ok {
			return s
		}
	}
	return ""
}

// webURL keeps an http(s) address, turning git+https://…/x.git into the
// repository's page; anything else is not linked.
func webURL(s string) string {
	s = strings.TrimPrefix(s, "git+")
	if !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "http://") {
		return ""
	}
	return strings.TrimSuffix(s, ".git")
}
