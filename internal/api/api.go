// Package api is the HTTP transport of the mirror: /v1/explore (the
// explore_npm tool as JSON), REST-style GETs for people and scripts, and
// health checks. All behaviour lives in package explore; this package only
// decodes, dispatches, encodes and maps errors to statuses, once.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/lru"
	"github.com/pkgscope/pkgscope/internal/mcp"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/upstream"
	"github.com/pkgscope/pkgscope/internal/version"
	"github.com/pkgscope/pkgscope/internal/webdocs"
)

// Options configure the HTTP layer.
type Options struct {
	// MaxBodyBytes caps a request body (413 beyond it), except on the
	// OwnBodyLimit routes (route patterns), which set their own.
	MaxBodyBytes int64
	OwnBodyLimit []string
	Logger       *slog.Logger
	// AccessLog logs a line at info for every request (--access-log).
	AccessLog bool
	// Observe runs after request ids, recovery and the access line and
	// before the body limit, so it sees the requests the limit refuses
	// too: the metrics (nil: none).
	Observe echo.MiddlewareFunc
	// Middleware runs, in order, after request ids, logging, Observe and
	// the body limit, before every route (auth, then rate limits). A
	// middleware refusing a request returns an error for handleError,
	// e.g. an *echo.HTTPError with 429 after setting Retry-After.
	Middleware []echo.MiddlewareFunc
	// WebDocs serves POST /v1/webdocs and the explore_web_docs MCP tool
	// (webdocs.go); nil leaves both out.
	WebDocs *webdocs.Service
	// ReadTimeout is the server's read-timeout, which a request body's
	// read error names when it passed (BodyErrors).
	ReadTimeout time.Duration
	// StallTimeout bounds each write of a raw file streamed to a client
	// (--stalled-client-timeout); 0 leaves only the server's write-timeout,
	// which a body held in memory always has.
	StallTimeout time.Duration
	// RawAnswerBytes bounds the raw reads of exact versions' files held
	// ready to write (Server.held, --raw-answer-bytes): their bodies,
	// header values and URLs, summed; 0 holds none.
	RawAnswerBytes int64
	// DiffPageBytes is the REST diff's page when the request gives no
	// maxBytes: max-answer-bytes, the largest page, since a program, not a
	// model, reads it. 0 is the explore service's default answer size.
	DiffPageBytes int
	// Projects answers explore requests that name a project and no
	// package (internal/project), on /v1/explore and /mcp; nil refuses
	// them.
	Projects explore.ProjectExplorer
	// MCP configures /mcp beyond what the fields above give it: the
	// registered projects a session may bind itself to (?project=) and
	// whether answers carry structuredContent by default.
	MCP MCPOptions
}

// MCPOptions are /mcp's own options (mcp.Options).
type MCPOptions struct {
	Projects   mcp.Projects
	Structured bool
}

// Server holds the handlers' dependencies.
type Server struct {
	svc *explore.Service
	// ex is svc answering project requests as well (Options.Projects).
	ex    explore.Explorer
	ready store.VersionReader
	log   *slog.Logger
	stall time.Duration
	// accessLog is Options.AccessLog: without it, handleError logs the
	// refusals a shared mirror's operator looks for.
	accessLog bool
	// diffPage is Options.DiffPageBytes.
	diffPage int
	// held answers a plain read of an exact version's file from the
	// answer written to the same URL before, without splitting the URL,
	// opening the version, finding the file and its body or formatting
	// its headers again: a third of a warm raw read's own work (issue
	// 27). Nil when Options.RawAnswerBytes is 0.
	held *lru.Cache[string, heldRead]
}

// New returns the Echo instance serving every route. Middleware goes in
// Options.Middleware: the chain is composed once (composed), so one added
// later with the instance's Use would never run.
func New(svc *explore.Service, ready store.VersionReader, opt Options) *echo.Echo {
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{svc: svc, ex: explore.WithProjects(svc, opt.Projects), ready: ready, log: log, stall: opt.StallTimeout, accessLog: opt.AccessLog, diffPage: opt.DiffPageBytes}
	if opt.RawAnswerBytes > 0 {
		// A sixteenth of the budget at most for one file: a large one
		// cannot flush the rest.
		s.held = lru.New[string, heldRead](opt.RawAnswerBytes, lru.Options{MaxEntryCost: opt.RawAnswerBytes / 16})
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	// Before any route: every GET route, here or added later (the web
	// page, warm, projects, /metrics), answers HEAD too.
	e.OnAddRouteHandler = headAsGet(e)
	e.JSONSerializer = jsonSerializer{}
	mw := []echo.MiddlewareFunc{
		SecurityHeaders, // first, so refusals carry them too
		// The caller's own X-Request-Id when it sends one, else a new
		// one (requestID).
		middleware.RequestIDWithConfig(middleware.RequestIDConfig{Generator: requestID}),
	}
	// A panic in a handler (a bug) answers that request with the 500 the
	// error handler writes (its message hidden, the panic and stack
	// logged with the request id) instead of dropping the connection.
	mw = append(mw, middleware.RecoverWithConfig(middleware.RecoverConfig{
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			log.Error("handler panicked", "id", c.Response().Header().Get(echo.HeaderXRequestID), "err", err, "stack", string(stack))
			return err
		},
	}))
	if opt.AccessLog {
		mw = append(mw, accessLog(log))
	}
	if opt.Observe != nil {
		mw = append(mw, opt.Observe)
	}
	// Inside the body limit's reader, so its 413 passes through.
	mw = append(mw, BodyErrors(opt.ReadTimeout), middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{
		Limit: strconv.FormatInt(opt.MaxBodyBytes, 10) + "B",
		// Routes that carry larger bodies apply their own limit. A
		// request without a body (every GET) has nothing to limit: it
		// skips the pooled reader's get, wrap and put (issue 27).
		Skipper: func(c echo.Context) bool {
			return c.Request().Body == http.NoBody || slices.Contains(opt.OwnBodyLimit, c.Path())
		},
	}))
	e.Use(composed(append(mw, opt.Middleware...)...))

	// healthz says which build answers (version and commit) beside its
	// status: an operator rolling out a release sees each replica's. It
	// needs no token, so it leaves out the Go release, which would tell
	// anyone which of Go's published vulnerabilities to try.
	build := version.Get()
	build.Go = ""
	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, struct {
			Status string `json:"status"`
			version.Info
		}{"ok", build})
	})
	e.GET("/readyz", s.readyz)
	e.POST("/v1/explore", s.explore)
	e.GET("/v1/npm/*", s.npm)
	registerJSDelivr(e, svc, opt.StallTimeout) // /v1/packages/npm/*, /npm/*
	registerWebDocs(e, opt.WebDocs)            // /v1/webdocs
	e.Any("/mcp", echo.WrapHandler(mcp.HTTPHandler(s.ex, mcp.Options{
		Logger: log, Version: build.Version, Limits: mcp.Limits{MaxHTTPBodyBytes: opt.MaxBodyBytes}, WebDocs: mcpWebDocs(opt.WebDocs),
		Projects: opt.MCP.Projects, Structured: opt.MCP.Structured,
	})))
	return e
}

// accessLog is the access line: one record at info for every request,
// its id, method, path, status and latency (--access-log).
func accessLog(log *slog.Logger) echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogMethod: true, LogURIPath: true, LogStatus: true, LogLatency: true, LogRequestID: true,
		// An error from further in is answered (handleError) before the
		// line is written, so the line gives the status sent, not 200.
		HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			// The record goes straight to the handler: Logger.LogAttrs
			// would walk the stack for a source line the handlers do
			// not print, on every request.
			ctx, h := c.Request().Context(), log.Handler()
			if !h.Enabled(ctx, slog.LevelInfo) {
				return nil
			}
			// Stamped when the latency was measured, the request's end:
			// a clock read fewer.
			r := slog.NewRecord(v.StartTime.Add(v.Latency), slog.LevelInfo, "request", 0)
			r.AddAttrs(slog.String("id", v.RequestID), slog.String("method", v.Method),
				slog.String("path", v.URIPath), slog.Int("status", v.Status),
				slog.Duration("latency", v.Latency))
			_ = h.Handle(ctx, r) // as Logger.LogAttrs, which drops the error
			return nil
		},
	})
}

// composed is mw as one Echo middleware, chained once. Echo v4 chains its
// middleware anew for every request (applyMiddleware in Echo.ServeHTTP):
// a dozen closures allocated per request, a sixth of a warm read's
// allocations (issue 27). The chain ends in the route's handler, which
// Echo's router set on the context (c.Handler()): what Echo passes as next
// to its first middleware, so the returned middleware ignores next.
func composed(mw ...echo.MiddlewareFunc) echo.MiddlewareFunc {
	h := func(c echo.Context) error { return c.Handler()(c) }
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return func(echo.HandlerFunc) echo.HandlerFunc { return h }
}

// readyz answers 200 when the store answers a query. It looks up a version
// that cannot exist: ErrNotFound proves the store's query path works.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if _, err := s.ready.Version(ctx, "-readyz-probe", "0.0.0"); err != nil && !errors.Is(err, store.ErrNotFound) {
		return &unready{err: err}
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}

type unready struct{ err error }

func (u *unready) Error() string { return "store not reachable: " + u.err.Error() }

// errorBody is the one error shape: {"error":{"code","message"}}.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// StatusClientClosedRequest is the status recorded (in /metrics, and in
// the access line with --access-log) for a request whose client went
// away before its answer: nginx's 499, not a standard HTTP status, and
// never sent.
const StatusClientClosedRequest = 499

// handleError maps every error to a status and the JSON shape, and logs
// server-side failures once, with the request id.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	if errors.Is(err, context.Canceled) && c.Request().Context().Err() != nil {
		// The client went away before its answer (a closed connection,
		// an agent that gave up): nothing failed on this side and nobody
		// reads the answer. Recorded as nginx's 499 (/metrics counts it,
		// the access line says so with the id), not as a 500 that would
		// page someone: under load every client that stops mid-request
		// logged an ERROR.
		c.Response().Status = StatusClientClosedRequest
		return
	}
	var body errorBody
	status := http.StatusInternalServerError
	var he *echo.HTTPError
	var ur *unready
	switch {
	case errors.As(err, &he):
		status = he.Code
		body.Error.Code = httpCode(status)
		// A refusal that has a code of its own (warm.PoolFullError)
		// says which resource was full, not just "internal".
		var coded interface{ ErrorCode() string }
		if errors.As(err, &coded) {
			body.Error.Code = coded.ErrorCode()
		}
		body.Error.Message = fmt.Sprint(he.Message)
		if status == http.StatusRequestEntityTooLarge && body.Error.Message == http.StatusText(status) {
			// Echo's body limit, which does not say which one.
			body.Error.Message = "request body too large (setting max-body-bytes)"
		}
	case errors.As(err, &ur):
		// The detail (a connection error names user, database and host)
		// goes to the log only: /readyz answers without a token.
		status = http.StatusServiceUnavailable
		body.Error.Code, body.Error.Message = "not_ready", "the store is not reachable"
		c.Response().Header().Set("Retry-After", "5")
	default:
		class := explore.Classify(err)
		status, body.Error.Code = class.Status, class.Code
		body.Error.Message = err.Error()
		if class.RetryAfter > 0 {
			c.Response().Header().Set("Retry-After", strconv.Itoa(int(class.RetryAfter.Seconds()+0.5)))
		}
	}
	if raw, ok := c.Get(bodyFailedKey).(error); ok && status < 500 {
		// BodyErrors replaced the transport's error (which names
		// addresses) in the message; the log keeps it.
		s.log.Info("request body failed", "id", c.Response().Header().Get(echo.HeaderXRequestID), "err", raw)
		var ne net.Error
		if errors.As(raw, &ne) && ne.Timeout() {
			status, body.Error.Code = http.StatusRequestTimeout, httpCode(http.StatusRequestTimeout)
		}
	}
	if refused := status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusTooManyRequests; refused && !s.accessLog {
		// Without the access line (--access-log) a refusal is still seen,
		// with its id: a guessed token, a probed package or host, a
		// caller throttled. Info: nothing failed here.
		r := c.Request()
		s.log.Info("request refused", "id", c.Response().Header().Get(echo.HeaderXRequestID),
			"method", r.Method, "path", r.URL.Path, "status", status)
	}
	if status >= 500 {
		id := c.Response().Header().Get(echo.HeaderXRequestID)
		s.log.Error("request failed", "id", id, "status", status, "err", err, "detail", upstream.Detail(err))
		switch {
		case status == http.StatusInternalServerError:
			body.Error.Message = "internal error (request id " + id + ")"
		case body.Error.Code == "store_unavailable", body.Error.Code == "timeout":
			// The detail names the database's user, name and address:
			// it goes to the log above, not to the caller.
			body.Error.Message = "the mirror's store is not answering; retry shortly (request id " + id + ")"
		}
	}
	// A HEAD gets the same headers (Content-Type, Content-Length) as its
	// GET: net/http drops the body.
	_ = c.JSON(status, body)
}

// headAsGet is an Echo OnAddRouteHandler that registers each GET route
// for HEAD too, with the same handler and route middleware, so HEAD passes
// the same token check and rate limit (the global middleware) and gets
// GET's status and headers; net/http drops the body it writes, and
// http.ServeContent (the raw files) reads none. Without it Echo's router
// answers HEAD of a GET route 405, which breaks curl -I and HTTP caches.
// A route that registers HEAD itself (e.Any, e.Match) replaces this one:
// it is added after its GET.
func headAsGet(e *echo.Echo) func(host string, r echo.Route, h echo.HandlerFunc, mw []echo.MiddlewareFunc) {
	return func(host string, r echo.Route, h echo.HandlerFunc, mw []echo.MiddlewareFunc) {
		// No route is registered per host; e.Add would put one there
		// on the default router.
		if r.Method == http.MethodGet && host == "" {
			e.Add(http.MethodHead, r.Path, h, mw...)
		}
	}
}

func httpCode(status int) string {
	switch status {
	case http.StatusNotFound:
		return "not_found"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusRequestEntityTooLarge:
		return "body_too_large"
	case http.StatusUnprocessableEntity:
		// A request over a limit the handler names (a project's
		// max-project-packages), as explore's limit errors are coded.
		return "limit_exceeded"
	case http.StatusRequestTimeout:
		return "body_timeout"
	case http.StatusBadRequest:
		return "bad_request"
	case http.StatusUnsupportedMediaType:
		return "unsupported_media_type"
	case http.StatusTooManyRequests:
		return "rate_limited"
	case http.StatusUnauthorized:
		return "unauthorized"
	}
	if status >= 500 {
		return "internal"
	}
	return "error"
}
