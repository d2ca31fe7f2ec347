package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/store"
)

// homeData is the home page: a search, what the store holds, and the warm
// requests this browser submitted.
type homeData struct {
	Query string
	Open  string // link to the package the query names, when it is a valid name
	Names []string
	// Found are the registry search's answers; SearchErr says it failed.
	Found     []string
	SearchErr bool
	Recent    []store.Version
	Warm      []warmSummary
}

// home serves /: find a package, recently stored versions, warm requests.
func (p *Pages) home(c echo.Context) error {
	ctx := c.Request().Context()
	d := &homeData{Query: strings.TrimSpace(c.QueryParam("q"))}
	if d.Query != "" {
		if t, _, err := npmspec.SplitPath(d.Query); err == nil && npmspec.ValidateName(t.Name) == nil {
			d.Open = "/browse/" + t.Name
			if t.Spec != "" {
				d.Open += "@" + t.Spec
			}
		}
		if p.d.Catalog != nil {
			names, err := p.d.Catalog.Names(ctx, d.Query, p.lim.ListNames)
			if err != nil {
				return p.fail(c, err)
			}
			for _, n := range names {
				if p.allowed(c, n) {
					d.Names = append(d.Names, n)
				}
			}
		}
		if p.d.Search != nil {
			found, err := p.d.Search(ctx, d.Query, p.lim.ListNames/2)
			if err != nil {
				p.log.Warn("web: registry search", "err", err)
				d.SearchErr = true
			}
			for _, n := range found {
				if p.allowed(c, n) {
					d.Found = append(d.Found, n)
				}
			}
		}
	}
	if p.d.Catalog != nil {
		recent, err := p.d.Catalog.Recent(ctx, p.lim.ListNames)
		if err != nil {
			return p.fail(c, err)
		}
		for _, v := range recent {
			if p.allowed(c, v.Name) {
				d.Recent = append(d.Recent, v)
			}
		}
	}
	d.Warm = p.myWarmRequests(c)
	title := "pkgscope"
	if d.Query != "" {
		title = "Packages matching " + d.Query
	}
	return p.render(c, http.StatusOK, "home", page{Title: title, Query: d.Query, Data: d})
}

// allowed applies the access check to a name before a page lists it.
func (p *Pages) allowed(c echo.Context, name string) bool {
	return p.d.Access == nil || p.d.Access(c.Request().Context(), name) == nil
}
