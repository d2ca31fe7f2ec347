package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/store"
)

// Following a link never fills the store. A GET for a version the store
// does not hold shows a page with a "Fetch" button (a POST from this
// mirror's own page, refused from another site's, as the warm form is):
// before, each of the ~50 version links of a browse page started a
// download and an index build, and a link checker pulled ~100 versions
// (609 MB) in minutes. robots.txt keeps well-behaved crawlers off the
// pages that read packages at all.

// robotsTxt keeps crawlers to the home page: browse (and grep, its query),
// diff, docs, warm requests and projects answer from packages and the
// registry, not from anything worth indexing.
const robotsTxt = `User-agent: *
Disallow: /browse/
Disallow: /diff/
Disallow: /docs
Disallow: /warm
Disallow: /projects/
`

// errNotStored is a version the store does not hold: the page offers the
// fetch button instead of filling.
var errNotStored = errors.New("version not stored")

// stored resolves name@spec and returns the version when the store holds
// it. exact is the resolved version (for the redirect of a range or tag,
// which needs no fill). A version not stored is errNotStored; an unknown
// package is the API's correction (the closest published names).
func (p *Pages) stored(c echo.Context, name, spec string) (o *explore.Opened, exact string, err error) {
	ctx := c.Request().Context()
	sp, err := explore.Target{PackageName: name, Version: spec}.Spec()
	if err != nil {
		return nil, "", err
	}
	exact, err = p.d.Packages.Versions().Resolve(ctx, name, sp)
	if err != nil {
		return nil, "", p.d.Packages.Correct(ctx, name, err)
	}
	o, err = p.d.Packages.Versions().Stored(ctx, name, exact)
	if errors.Is(err, store.ErrNotFound) {
		return nil, exact, errNotStored
	}
	return o, exact, err
}

// fetchData is the page offered for versions the store does not hold.
type fetchData struct {
	Name     string
	Versions []string // name@version for each version missing
	Action   string   // where the form posts: the page's own URL
}

// offerFetch answers a GET for versions not stored: what is missing and
// the button that fetches them. 200, since the page is what was asked
// for; noindex, since it holds nothing worth keeping.
func (p *Pages) offerFetch(c echo.Context, name string, versions ...string) error {
	d := &fetchData{Name: name, Action: c.Request().URL.RequestURI()}
	for _, v := range versions {
		d.Versions = append(d.Versions, name+"@"+v)
	}
	return p.render(c, http.StatusOK, "fetch", page{Title: strings.Join(d.Versions, ", ") + " (not fetched yet)", Data: d})
}

// fetchBrowse is the fetch button of a browse page (POST
// /browse/{name}@{version}/…): it brings the version into the store, then
// sends the browser back to the page it asked for.
func (p *Pages) fetchBrowse(c echo.Context) error {
	if crossSite(c.Request()) {
		return p.refuseFetch(c)
	}
	t, _, err := npmspec.SplitPath(strings.TrimPrefix(c.Request().URL.Path, "/browse/"))
	if err != nil {
		return p.fail(c, &explore.InputError{Field: "url", Err: err})
	}
	if _, err := p.d.Packages.Fill(c.Request().Context(), explore.Target{PackageName: t.Name, Version: t.Spec}); err != nil {
		return p.fail(c, p.d.Packages.Correct(c.Request().Context(), t.Name, err))
	}
	return c.Redirect(http.StatusSeeOther, c.Request().URL.RequestURI())
}

// fetchDiff is the fetch button of a diff page (POST
// /diff/{name}?from=&to=): both versions, then the diff.
func (p *Pages) fetchDiff(c echo.Context) error {
	if crossSite(c.Request()) {
		return p.refuseFetch(c)
	}
	ref, _, err := npmspec.SplitPath(strings.TrimPrefix(c.Request().URL.Path, "/diff/"))
	if err != nil {
		return p.fail(c, &explore.InputError{Field: "url", Err: err})
	}
	for _, field := range []string{"from", "to"} {
		v := c.QueryParam(field)
		if v == "" {
			return p.fail(c, &explore.InputError{Field: field, Err: errors.New("give a version, range or tag")})
		}
		if _, err := p.d.Packages.Fill(c.Request().Context(), explore.Target{PackageName: ref.Name, Version: v}); err != nil {
			return p.fail(c, fmt.Errorf("%s: %w", field, p.d.Packages.Correct(c.Request().Context(), ref.Name, err)))
		}
	}
	return c.Redirect(http.StatusSeeOther, c.Request().URL.RequestURI())
}

// refuseFetch answers a fetch another site's page submitted: such a form
// would make this browser's token fill the store.
func (p *Pages) refuseFetch(c echo.Context) error {
	return p.render(c, http.StatusForbidden, "error", page{Title: "Forbidden",
		Error: "A fetch from another site's page is refused: use the button on this mirror's own page."})
}
