package api

import (
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/npmspec"
)

// npm serves the REST-style GETs under /v1/npm/:
//
//	/v1/npm/{name}[@{spec}]/-/files[?glob=P&glob=!Q]  JSON file list
//	/v1/npm/{name}[@{spec}]/{path}                    the raw file
//	/v1/npm/{name}/-/diff?from=A&to=B                 npm diff's text (diff.go)
//
// {name} may be scoped: /v1/npm/@types/react@19/index.d.ts (or with the
// scope's slash escaped as %2f).
func (s *Server) npm(c echo.Context) error {
	rest := strings.TrimPrefix(c.Request().URL.Path, "/v1/npm/")
	t, file, err := splitNPMPath(rest)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if file == "-/diff" {
		return s.diff(c, t)
	}
	if file == "-/files" || file == "" {
		res, err := s.svc.FileList(ctx, t, c.QueryParams()["glob"])
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, res)
	}
	o, err := s.svc.Open(ctx, t)
	if err != nil {
		return err
	}
	f, body, o, err := s.svc.FileOfStream(ctx, o, file)
	if err != nil {
		return err
	}
	spec, _ := npmspec.ParseSpec(t.Version)
	exact := spec.Kind == npmspec.Version
	// The version a range or dist-tag resolved to; a URL that spells the
	// exact version names it already.
	versionHeader := "X-Pkgscope-Version"
	if exact && t.Version == o.Version {
		versionHeader = ""
	}
	return serveFile(c, versionHeader, o.Version, f, body, exact, s.stall)
}

// splitNPMPath splits "name@spec/path" (name possibly "@scope/name") with
// npmspec.SplitPath.
func splitNPMPath(rest string) (explore.Target, string, error) {
	r, file, err := npmspec.SplitPath(rest)
	if err != nil {
		return explore.Target{}, "", inputErr("url", err.Error()+": /v1/npm/{name}[@{version}]/-/files or /v1/npm/{name}[@{version}]/{path}")
	}
	return explore.Target{PackageName: r.Name, Version: r.Spec}, file, nil
}

// contentType names what a package file is. Text gets a charset; script
// types follow the WHATWG registry (text/javascript); TypeScript and other
// source with no registered type are served as plain text.
func contentType(p string, binary bool) string {
	switch ext := strings.ToLower(path.Ext(p)); ext {
	case ".js", ".mjs", ".cjs":
		return "text/javascript; charset=utf-8"
	case ".json", ".map":
		return "application/json; charset=utf-8"
	case ".md", ".markdown":
		return "text/markdown; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html", ".htm":
		return "text/html; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".wasm":
		return "application/wasm"
	default:
		if t := mime.TypeByExtension(ext); t != "" && !strings.HasPrefix(t, "text/") {
			return t
		}
	}
	if binary {
		return "application/octet-stream"
	}
	return "text/plain; charset=utf-8"
}
