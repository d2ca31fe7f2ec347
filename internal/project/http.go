package project

import (
	"errors"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/warm"
)

// Handlers serve project registration over HTTP:
//
//	POST /v1/projects {"lockfile":{"name":"package-lock.json","content":"…"},"packageJson":"…"}
//	  → 201 (202 when already registered: 200) {"id":"…","status":"/v1/projects/…",…}
//	GET /v1/projects/{id} → 200 Status
//
// Errors: a lockfile that does not parse is 400 with the line; a lockfile
// over max-project-lockfile-bytes 413 and a tree over
// max-project-packages 422, both naming the setting; an unknown id 404; a
// project holding a package the caller's token may not read 403 naming it.
type Handlers struct {
	svc    *Service
	bodies *warm.BodyBudget
}

// NewHandlers returns the handlers over svc, reading bodies within bodies
// (shared with POST /v1/warm; nil: one of its own,
// warm.DefaultBodyBudget).
func NewHandlers(svc *Service, bodies *warm.BodyBudget) *Handlers {
	if bodies == nil {
		bodies = warm.DefaultBodyBudget()
	}
	return &Handlers{svc: svc, bodies: bodies}
}

// Register mounts the routes on e; mw wraps the POST (its own body limit:
// a lockfile is larger than the API's other bodies).
func (h *Handlers) Register(e *echo.Echo, mw ...echo.MiddlewareFunc) {
	e.POST("/v1/projects", h.post, mw...)
	e.GET("/v1/projects/:id", h.get)
}

func (h *Handlers) post(c echo.Context) error {
	// The body first, its bytes charged to max-lockfile-bytes-in-flight
	// as they arrive (shared with POST /v1/warm), then a parse slot
	// (max-lockfile-parses), as POST /v1/warm does: a body sent slowly
	// holds no slot, and uploads waiting for a slot hold only their
	// charged bodies. The slot is given back once the lockfile is parsed
	// (or on any earlier refusal), the body's bytes when the request ends.
	ctx := c.Request().Context()
	var u Upload
	done, err := h.bodies.DecodeBody(c, &u, "max-warm-body-bytes")
	if err != nil {
		return err
	}
	defer done()
	if err := h.svc.parses.Acquire(ctx); err != nil {
		c.Response().Header().Set("Retry-After", "1")
		return err
	}
	release := sync.OnceFunc(h.svc.parses.Release)
	defer release()
	reg, err := h.svc.register(ctx, u, release)
	if err != nil {
		return h.httpError(c, err)
	}
	c.Response().Header().Set(echo.HeaderLocation, reg.Status)
	status := http.StatusCreated
	if reg.Existing {
		status = http.StatusOK
	}
	return c.JSON(status, reg)
}

func (h *Handlers) get(c echo.Context) error {
	st, err := h.svc.Status(c.Request().Context(), c.Param("id"))
	if err != nil {
		return h.httpError(c, err)
	}
	return c.JSON(http.StatusOK, st)
}

// httpError maps the service's errors to statuses; others pass to the
// API's error handler.
func (h *Handlers) httpError(c echo.Context, err error) error {
	var le *LimitError
	switch {
	case errors.As(err, &le) && le.Bytes:
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, err.Error())
	case errors.As(err, &le):
		return echo.NewHTTPError(http.StatusUnprocessableEntity, err.Error())
	case errors.Is(err, ErrBadInput):
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	case errors.Is(err, ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, err.Error())
	case errors.Is(err, warm.ErrQueueFull):
		return warm.QueueFull(c, err)
	}
	// The access check's refusal (explore.ForbiddenError, 403) and store
	// failures (503) are mapped by the API's one error handler.
	return err
}
