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
	req := c.Request()
	ctx := req.Context()
	if s.held != nil && plainRead(req) {
		if h, ok := s.held.Get(req.URL.Path); ok {
			// What the chain would check before it found the file again
			// (explore.Service.Allow). A caller refused here learns that
			// the answer is held only from the ~0.3 µs it saves.
			if err := s.svc.Allow(ctx, h.name); err != nil {
				return err
			}
			h.file.write(c, "", "", true)
			return nil
		}
	}
	t, file, err := splitNPMPath(strings.TrimPrefix(req.URL.Path, "/v1/npm/"))
	if err != nil {
		return err
	}
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
	a := serveFile(c, versionHeader, o.Version, f, body, exact, s.stall)
	if a != nil && s.held != nil && versionHeader == "" && o.Source == "" && file == f.Path {
		// An exact version's file, verified against the registry's
		// integrity (not a fallback's): the same URL always gets the
		// same bytes and headers, the caller's access and
		// Cache-Control's "private" aside, which are the request's. Only
		// under the file's own path: "./index.js" or "a/../index.js"
		// would each hold the same answer again, and a caller could
		// flush the others' with them.
		s.held.Add(req.URL.Path, heldRead{name: o.Name, file: a}, a.cost(req.URL.Path))
	}
	return nil
}

// heldRead is a raw read of an exact version's file held by Server.held
// under its URL path: the answer ready to write and the package it is of,
// which the caller must be allowed to read.
type heldRead struct {
	name string
	file *heldFile
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
