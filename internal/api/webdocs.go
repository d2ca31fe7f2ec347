package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

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

// decodeStrict reads one JSON object into v as decode does for
// /v1/explore: unknown fields are a 400 naming the field.
func decodeStrict(c echo.Context, v any) error {
	ct := c.Request().Header.Get(echo.HeaderContentType)
	if ct != "" && !strings.HasPrefix(ct, echo.MIMEApplicationJSON) && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return echo.NewHTTPError(http.StatusUnsupportedMediaType, "send a JSON body with Content-Type: application/json")
	}
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return echo.ErrStatusRequestEntityTooLarge
		}
		if errors.Is(err, io.EOF) {
			return inputErr("body", "empty: send a JSON object with an action")
		}
		return inputErr("body", "not valid JSON for this endpoint: "+err.Error())
	}
	if dec.More() {
		return inputErr("body", "trailing data after the JSON object")
	}
	return nil
}
