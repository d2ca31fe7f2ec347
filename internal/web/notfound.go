package web

import (
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/closest"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/pkgpath"
)

// maxClosest is how many corrections a not-found page links, as many as
// the API's corrections name.
const maxClosest = 5

// errorData is what an error page links besides its message: the closest
// paths or packages to what was asked (the API's corrections, as links).
type errorData struct {
	Links []crumb
}

// missing answers a path a stored version does not hold: 404, with the
// closest files and folders linked.
func (p *Pages) missing(c echo.Context, o *explore.Opened, want string) error {
	base := "/browse/" + o.Name + "@" + o.Version + "/"
	seen := map[string]bool{}
	var cands []string
	for _, f := range o.Files {
		cands = append(cands, f.Path)
		for d := path.Dir(f.Path); d != "." && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			cands = append(cands, d+"/")
		}
	}
	d := &errorData{}
	for _, s := range closest.Strings(want, cands, maxClosest) {
		href := base + pkgpath.Escape(strings.TrimSuffix(s, "/"))
		if strings.HasSuffix(s, "/") {
			href += "/"
		}
		d.Links = append(d.Links, crumb{Name: s, Href: href})
	}
	msg := fmt.Sprintf("%s@%s has no file or folder %q.", o.Name, o.Version, want)
	return p.render(c, http.StatusNotFound, "error", page{Title: "Not found: " + o.Name + "@" + o.Version + "/" + want, Error: msg, Data: d})
}

// closestPackages links the names an unknown package's correction names
// ("closest published names: a, b").
func closestPackages(err error) *errorData {
	var nf *explore.NotFoundError
	if !errors.As(err, &nf) {
		return nil
	}
	names, ok := strings.CutPrefix(nf.Hint, "closest published names: ")
	if !ok {
		return nil
	}
	d := &errorData{}
	for _, n := range strings.Split(names, ", ") {
		d.Links = append(d.Links, crumb{Name: n, Href: "/browse/" + n})
	}
	return d
}

// wantsHTML reports a browser's request: its Accept names text/html.
func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// notFound answers a route nothing serves. A browser gets a page linking
// the package the path may name and the stored packages like it; an API
// client the API's JSON 404.
func (p *Pages) notFound(c echo.Context) error {
	r := c.Request()
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || !wantsHTML(r) {
		return echo.ErrNotFound
	}
	d := &errorData{}
	word := strings.Trim(r.URL.Path, "/")
	if t, _, err := npmspec.SplitPath(word); err == nil && npmspec.ValidateName(t.Name) == nil {
		d.Links = append(d.Links, crumb{Name: "the package " + t.Name, Href: "/browse/" + t.Name})
		if p.d.Catalog != nil {
			if names, err := p.d.Catalog.Names(r.Context(), path.Base(t.Name), maxClosest+1); err == nil {
				for _, n := range closest.Strings(t.Name, names, maxClosest) {
					if n != t.Name && p.allowed(c, n) {
						d.Links = append(d.Links, crumb{Name: n, Href: "/browse/" + n})
					}
				}
			}
		}
	}
	d.Links = append(d.Links, crumb{Name: "web platform docs", Href: "/docs"})
	return p.render(c, http.StatusNotFound, "error", page{Title: "Not found: " + r.URL.Path,
		Error: "This mirror has no page at " + r.URL.Path + ". Pages are /browse/{package}, /diff/{package}, /docs and /.", Data: d})
}
