package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/webdocs"
)

// coreBrowsers are the columns of a compat table, in Baseline's order
// (its core browser set).
var coreBrowsers = []string{"chrome", "chrome_android", "edge", "firefox", "firefox_android", "safari", "safari_ios"}

// docsSearch serves /docs?q=: explore_web_docs search.
func (p *Pages) docsSearch(c echo.Context) error {
	if p.d.WebDocs == nil {
		return p.fail(c, &explore.NotFoundError{What: "web docs on this mirror"})
	}
	q := strings.TrimSpace(c.QueryParam("q"))
	var res *webdocs.SearchResult
	if q != "" {
		off, _ := strconv.Atoi(c.QueryParam("offset"))
		var err error
		if res, err = p.d.WebDocs.Search(c.Request().Context(), webdocs.SearchRequest{Query: q, Offset: max(0, off)}); err != nil {
			return p.fail(c, err)
		}
	}
	return p.render(c, http.StatusOK, "docs", page{Title: "Web docs", Query: q, Data: res})
}

// docsPage serves /docs/page?path=: one MDN page (or what the packages
// say of it), as text.
func (p *Pages) docsPage(c echo.Context) error {
	if p.d.WebDocs == nil {
		return p.fail(c, &explore.NotFoundError{What: "web docs on this mirror"})
	}
	d, err := p.d.WebDocs.GetDoc(c.Request().Context(), c.QueryParam("path"))
	if err != nil {
		return p.fail(c, err)
	}
	return p.render(c, http.StatusOK, "docpage", page{Title: d.Title, Data: d})
}

// compatData is a compat table with its Baseline status.
type compatData struct {
	*webdocs.Compat
	Browsers []string
	Rows     []compatRow
}

type compatRow struct {
	Key          string
	Cells        []string
	Experimental bool
	Deprecated   bool
}

// docsCompat serves /docs/compat?key=: the support table of a BCD key and
// its direct children, in the core browsers, with the Baseline status.
func (p *Pages) docsCompat(c echo.Context) error {
	if p.d.WebDocs == nil {
		return p.fail(c, &explore.NotFoundError{What: "web docs on this mirror"})
	}
	cp, err := p.d.WebDocs.GetCompat(c.Request().Context(), c.QueryParam("key"))
	if err != nil {
		return p.fail(c, err)
	}
	d := &compatData{Compat: cp, Browsers: coreBrowsers}
	for _, r := range cp.Rows() {
		row := compatRow{Key: r.Key, Experimental: r.Experimental, Deprecated: r.Deprecated}
		for _, br := range coreBrowsers {
			cell := "?"
			for _, b := range r.Browsers {
				if b.Browser == br {
					cell = b.Since
				}
			}
			row.Cells = append(row.Cells, cell)
		}
		d.Rows = append(d.Rows, row)
	}
	return p.render(c, http.StatusOK, "compat", page{Title: cp.Key, Data: d})
}
