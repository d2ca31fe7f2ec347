package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/mcp"
	"github.com/pkgscope/pkgscope/internal/webdocs"
)

// registerWebDocs mounts POST /v1/webdocs, the explore_web_docs tool as
// JSON: the body is a webdocs.Request, the answer a
// webdocs.SearchResult, Doc or Compat; errors take the one error shape.
// A nil wd leaves the route unmounted (404).
func registerWebDocs(e *echo.Echo, wd *webdocs.Service) {
	if wd == nil {
		return
	}
	e.POST("/v1/webdocs", func(c echo.Context) error {
		var req webdocs.Request
		if err := decodeStrict(c, &req); err != nil {
			return err
		}
		res, err := wd.Do(c.Request().Context(), req)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, res)
	})
}

// mcpWebDocs is wd as the MCP option, nil when wd is (a nil
// *webdocs.Service in the interface would not be nil).
func mcpWebDocs(wd *webdocs.Service) mcp.WebDocs {
	if wd == nil {
		return nil
	}
	return wd
}
