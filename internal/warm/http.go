package warm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/lockfile"
)

// Requests is what the HTTP handlers need of a Queue.
type Requests interface {
	// Submit records a request and queues its jobs; see Queue.Submit.
	Submit(ctx context.Context, source string, wants []Want) (string, error)
	// Progress returns a request's state, or an error matching
	// ErrNotFound.
	Progress(ctx context.Context, id string) (Progress, error)
}

// Handlers serve warm requests over HTTP: CI pipelines post their lockfile
// and poll until it is warm.
//
//	POST /v1/warm {"specs":["react@19","@types/react"]}
//	POST /v1/warm {"lockfile":{"name":"package-lock.json","content":"...","packageJson":"..."}}
//	  → 202 {"id":"…","status":"/v1/warm/…"}
//	GET /v1/warm/{id} → 200 Progress
//
// The body size is bounded by the server's max-body-bytes, and the
// lockfile's parse by Lockfile limits.
type Handlers struct {
	reqs Requests
	lim  lockfile.Limits
}

// NewHandlers returns the handlers over reqs, parsing lockfiles within lim.
func NewHandlers(reqs Requests, lim lockfile.Limits) *Handlers {
	return &Handlers{reqs: reqs, lim: lim}
}

// Register mounts the routes on e; mw wraps the POST (its body limit:
// a lockfile is larger than the API's other bodies).
func (h *Handlers) Register(e *echo.Echo, mw ...echo.MiddlewareFunc) {
	e.POST("/v1/warm", h.post, mw...)
	e.GET("/v1/warm/:id", h.get)
}

// PostBody is the body of POST /v1/warm: exactly one of Specs and Lockfile.
type PostBody struct {
	// Specs are packages as npm install takes them: "react@^19".
	Specs []string `json:"specs,omitempty"`
	// Lockfile is a lockfile, or a package.json alone.
	Lockfile *PostLockfile `json:"lockfile,omitempty"`
}

// PostLockfile is a lockfile's file name (which says its format) and
// content, with the project's package.json when the format needs it to
// tell direct dependencies (npm v1, yarn).
type PostLockfile struct {
	// Name is the file's name: package-lock.json, npm-shrinkwrap.json,
	// pnpm-lock.yaml, yarn.lock, bun.lock or package.json.
	Name string `json:"name"`
	// Content is the file's text.
	Content string `json:"content"`
	// PackageJSON is the project's package.json, optional.
	PackageJSON string `json:"packageJson,omitempty"`
}

// PostResponse answers POST /v1/warm.
type PostResponse struct {
	// ID identifies the request.
	ID string `json:"id"`
	// Status is the path to poll for progress.
	Status string `json:"status"`
}

func (h *Handlers) post(c echo.Context) error {
	var body PostBody
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		var he *echo.HTTPError // the server's body limit
		if errors.As(err, &he) {
			return he
		}
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge)
		}
		return echo.NewHTTPError(http.StatusBadRequest, "decoding the body: "+err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return echo.NewHTTPError(http.StatusBadRequest, "the body holds more than one JSON value")
	}
	id, err := h.Accept(c.Request().Context(), body)
	if err != nil {
		return err
	}
	status := "/v1/warm/" + id
	c.Response().Header().Set(echo.HeaderLocation, status)
	return c.JSON(http.StatusAccepted, PostResponse{ID: id, Status: status})
}

// Accept checks a request's body and queues it, returning its id: the
// POST handler and the web page's warm form both submit through it. A
// refusal is an *echo.HTTPError naming what to fix.
func (h *Handlers) Accept(ctx context.Context, body PostBody) (string, error) {
	var wants []Want
	var source string
	switch {
	case (len(body.Specs) > 0) == (body.Lockfile != nil):
		return "", echo.NewHTTPError(http.StatusBadRequest, `give exactly one of "specs" (a non-empty list) and "lockfile"`)
	case body.Lockfile != nil:
		lf := body.Lockfile
		if lf.Name == "" || lf.Content == "" {
			return "", echo.NewHTTPError(http.StatusBadRequest, `"lockfile" needs "name" (e.g. "package-lock.json") and "content"`)
		}
		var manifest []byte
		if lf.PackageJSON != "" {
			manifest = []byte(lf.PackageJSON)
		}
		parsed, err := h.lim.ParseWithManifest(lf.Name, []byte(lf.Content), manifest)
		if err != nil {
			return "", echo.NewHTTPError(http.StatusBadRequest, err.Error())
		}
		wants = Wants(parsed)
		source = fmt.Sprintf("POST /v1/warm: %s (%s)", lf.Name, parsed.Format)
	default:
		for _, s := range body.Specs {
			wants = append(wants, ParseSpecArg(strings.TrimSpace(s)))
		}
		source = fmt.Sprintf("POST /v1/warm: %d specs", len(body.Specs))
	}
	id, err := h.reqs.Submit(ctx, source, wants)
	if errors.Is(err, ErrTooMany) {
		return "", echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	if err != nil {
		return "", err
	}
	return id, nil
}

func (h *Handlers) get(c echo.Context) error {
	p, err := h.reqs.Progress(c.Request().Context(), c.Param("id"))
	if errors.Is(err, ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, err.Error())
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

// Progress returns a request's state (see Queue.Progress).
func (h *Handlers) Progress(ctx context.Context, id string) (Progress, error) {
	return h.reqs.Progress(ctx, id)
}
