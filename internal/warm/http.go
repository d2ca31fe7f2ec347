package warm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/lockfile"
	"github.com/pkgscope/pkgscope/internal/ratelimit"
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
// The body size is bounded by the server's max-warm-body-bytes, the
// bytes of bodies being received at once by a BodyBudget, the lockfile's
// parse by lockfile limits, and how many are parsed at once by ParseSlots:
// the body, its decoded strings and the parse are the cost of a POST, and
// a few at once must not add up to more memory than the process has.
type Handlers struct {
	reqs   Requests
	lim    lockfile.Limits
	parses ParseSlots
	bodies *BodyBudget
}

// ParseSlots bounds how many lockfiles the mirror parses at once (setting
// max-lockfile-parses); their bodies are read before, within a
// BodyBudget. POST /v1/warm and the project
// registrations (POST /v1/projects, `mirror mcp`'s local project) take
// their slots from the same ParseSlots, so together they hold at most that
// many parses' memory.
type ParseSlots chan struct{}

// NewParseSlots returns n slots (at least one).
func NewParseSlots(n int) ParseSlots { return make(ParseSlots, max(n, 1)) }

// Acquire takes a slot, waiting until one is free or ctx ends; then it
// answers 503 naming the setting (an *echo.HTTPError).
func (p ParseSlots) Acquire(ctx context.Context) error {
	select {
	case p <- struct{}{}:
		return nil
	case <-ctx.Done():
		err := &PoolFullError{Setting: "max-lockfile-parses"}
		return &echo.HTTPError{Code: http.StatusServiceUnavailable, Message: err.Error(), Internal: err}
	}
}

// Release gives back a slot Acquire took.
func (p ParseSlots) Release() { <-p }

// DefaultMaxLockfileParses is the default of the setting
// max-lockfile-parses: 2, since the costliest lockfile the default limits
// accept takes a mirror to about 200 MiB RSS from 40, so two at once stay
// under 512 MiB however many arrive (docs/RELIABILITY.md).
const DefaultMaxLockfileParses = 2

// NewHandlers returns the handlers over reqs, reading bodies within
// bodies (nil: DefaultBodyBudget) and parsing
// lockfiles within lim and within one of parses' slots each.
func NewHandlers(reqs Requests, lim lockfile.Limits, parses ParseSlots, bodies *BodyBudget) *Handlers {
	if bodies == nil {
		bodies = DefaultBodyBudget()
	}
	return &Handlers{reqs: reqs, lim: lim, parses: parses, bodies: bodies}
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

// maxFileName is the longest file name a lockfile can have: NAME_MAX, 255
// bytes on Linux, macOS and Windows alike.
const maxFileName = 255

// CheckLockfileName refuses a lockfile name longer than a file name can
// be, saying what to give instead: the refusals that name the file would
// otherwise quote it whole (a 5 MB name was answered back in full).
func CheckLockfileName(name string) error {
	if len(name) > maxFileName {
		return fmt.Errorf(`lockfile "name" is %d bytes, longer than a file name can be (%d): give the file's name, e.g. "pnpm-lock.yaml"`, len(name), maxFileName)
	}
	return nil
}

// PostResponse answers POST /v1/warm.
type PostResponse struct {
	// ID identifies the request.
	ID string `json:"id"`
	// Status is the path to poll for progress.
	Status string `json:"status"`
}

func (h *Handlers) post(c echo.Context) error {
	ctx := c.Request().Context()
	// The body first, its bytes charged to max-lockfile-bytes-in-flight
	// as they arrive, then a parse slot: a body sent slowly holds no slot
	// (BodyBudget). Read into one buffer and decoded without a
	// json.Decoder: a body costs itself plus its decoded strings, charged
	// until the parse is done.
	var body PostBody
	done, err := h.bodies.DecodeBody(c, &body, "max-warm-body-bytes")
	if err != nil {
		return err
	}
	defer done()
	if err := h.acquire(ctx); err != nil {
		c.Response().Header().Set("Retry-After", "1")
		return err
	}
	defer h.release()
	id, err := h.accept(ctx, &body)
	if errors.Is(err, ErrQueueFull) {
		c.Response().Header().Set("Retry-After", queueFullRetry)
	}
	if err != nil {
		return err
	}
	status := "/v1/warm/" + id
	c.Response().Header().Set(echo.HeaderLocation, status)
	return c.JSON(http.StatusAccepted, PostResponse{ID: id, Status: status})
}

// acquire takes one of the parse slots (setting max-lockfile-parses),
// waiting until one is free or ctx ends. The POST takes it once its body
// has arrived (BodyBudget bounds the bodies' memory before).
func (h *Handlers) acquire(ctx context.Context) error {
	if err := h.parses.Acquire(ctx); err != nil {
		return err
	}
	return nil
}

func (h *Handlers) release() { h.parses.Release() }

// Accept checks a request's body and queues it, returning its id: the
// POST handler and the web page's warm form both submit through it. A
// refusal is an *echo.HTTPError naming what to fix. It holds a parse slot
// while it runs.
func (h *Handlers) Accept(ctx context.Context, body PostBody) (string, error) {
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer h.release()
	return h.accept(ctx, &body)
}

// accept is Accept within a parse slot. It drops the lockfile's text from
// body once copied, so that the parse's memory does not come on top of it.
func (h *Handlers) accept(ctx context.Context, body *PostBody) (string, error) {
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
		if err := CheckLockfileName(lf.Name); err != nil {
			return "", echo.NewHTTPError(http.StatusBadRequest, err.Error())
		}
		if n := int64(len(lf.Content)); n > h.lim.MaxBytes {
			return "", echo.NewHTTPError(http.StatusRequestEntityTooLarge,
				fmt.Sprintf("lockfile: %s is %d bytes, over the limit of %d (setting lockfile-max-bytes)", lf.Name, n, h.lim.MaxBytes))
		}
		name, data := lf.Name, []byte(lf.Content)
		var manifest []byte
		if lf.PackageJSON != "" {
			manifest = []byte(lf.PackageJSON)
		}
		// The body's strings are garbage now: return them to the OS
		// before the parse, whose own peak comes on top. One full
		// collection per large lockfile is cheap next to its parse.
		lf.Content, lf.PackageJSON = "", ""
		if len(data) > 1<<20 {
			debug.FreeOSMemory()
		}
		parsed, err := h.lim.ParseWithManifest(name, data, manifest)
		if errors.Is(err, lockfile.ErrTooLarge) {
			return "", echo.NewHTTPError(http.StatusRequestEntityTooLarge, err.Error())
		}
		if err != nil {
			return "", echo.NewHTTPError(http.StatusBadRequest, err.Error())
		}
		wants = Wants(parsed)
		source = fmt.Sprintf("POST /v1/warm: %s (%s)", name, parsed.Format)
	default:
		for _, s := range body.Specs {
			wants = append(wants, ParseSpecArg(strings.TrimSpace(s)))
		}
		source = "POST /v1/warm: " + english.Count(len(body.Specs), "spec")
	}
	// Each package is a fetch and an index build: the request pays for
	// them at the rate limit (a 429 when its caller's bucket cannot).
	if err := ratelimit.ChargeItems(ctx, len(wants), fmt.Sprintf("a warm request of %d packages", len(wants))); err != nil {
		return "", err
	}
	id, err := h.reqs.Submit(ctx, source, wants)
	if errors.Is(err, ErrTooMany) || errors.Is(err, ErrInvalidWant) {
		return "", echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	if errors.Is(err, ErrQueueFull) {
		return "", queueFull(err)
	}
	if err != nil {
		return "", err
	}
	return id, nil
}

// queueFullRetry is the Retry-After of a request the warm queue refused
// as full: a minute, in which its workers drain some of it.
const queueFullRetry = "60"

func queueFull(err error) error {
	return &echo.HTTPError{Code: http.StatusServiceUnavailable, Message: err.Error(), Internal: err}
}

// QueueFull answers a request the warm queue refused as full
// (ErrQueueFull): 503 with its message, and Retry-After.
func QueueFull(c echo.Context, err error) error {
	c.Response().Header().Set("Retry-After", queueFullRetry)
	return queueFull(err)
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
