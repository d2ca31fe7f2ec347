package web

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/project"
)

// projectPage serves /projects/{id}: a registered project's node_modules
// folders, each linked to its package's page at the locked version, and
// how warm they are (the page refreshes itself until all are).
func (p *Pages) projectPage(c echo.Context) error {
	if p.d.Projects == nil {
		return p.fail(c, &explore.NotFoundError{What: "projects on this mirror"})
	}
	st, err := p.d.Projects.Status(c.Request().Context(), c.Param("id"))
	if errors.Is(err, project.ErrNotFound) {
		return p.fail(c, &explore.NotFoundError{What: "project " + c.Param("id") + " (register its lockfile with POST /v1/projects)"})
	}
	if err != nil {
		return p.fail(c, err)
	}
	return p.render(c, http.StatusOK, "project", page{Title: "Project " + st.ID[:12], Data: st})
}
