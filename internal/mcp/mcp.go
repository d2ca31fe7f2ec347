// Package mcp serves the explore_npm tool over the Model Context Protocol:
// on stdio for one developer's agent (`mirror mcp`) and as streamable HTTP
// at /mcp on the shared service. It is a transport like internal/api: the
// tool takes exactly /v1/explore's fields and answers the same result
// objects, produced by the same explore code (locally, or on a remote
// pkgscope through internal/client), so the two never drift apart.
//
// What it adds over the JSON API is for a model's context window: every
// result comes with a text rendering a model reads directly (within the
// same byte budget as the JSON, explore/page.go), ending with the next
// request when the answer was cut, and, with a Project, a call without a
// version uses the version the project locks.
package mcp

import (
	"bufio"
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkgscope/pkgscope/internal/explore"
)

// Explorer is what the tool calls: the local *explore.Service or a remote
// pkgscope through internal/client.
type Explorer = explore.Explorer

// Limits bound what the MCP layer answers beyond the service's own caps.
type Limits struct {
	// MaxHTTPBodyBytes caps one streamable-HTTP request body. A call's
	// arguments are a few hundred bytes; the largest legitimate one is
	// max-glob-patterns (64) patterns of max-glob-pattern-bytes (512),
	// 32 KiB, so 1 MiB (the API's max-body-bytes default) is ample.
	MaxHTTPBodyBytes int64
}

// DefaultLimits returns the defaults explained on Limits.
func DefaultLimits() Limits {
	return Limits{MaxHTTPBodyBytes: 1 << 20}
}

// Options configure the MCP server.
type Options struct {
	// Limits; zero fields take their defaults.
	Limits Limits
	// Project, when set, supplies the version of a call that names none:
	// what the project's lockfile locks, else what its package.json
	// declares. Nil (the shared HTTP service) means latest.
	Project *Project
	// Logger receives server-side failures; nil discards them. On stdio it
	// must not write to stdout, which carries the protocol.
	Logger *slog.Logger
	// Version is reported to clients as the server's version.
	Version string
	// AllowAnyHost turns off the SDK's DNS-rebinding guard on HTTPHandler,
	// which refuses (403) a request that reaches a loopback address with a
	// Host header that is not a loopback name. Keep it off for a mirror on a
	// developer's machine; turn it on when a reverse proxy on the same host
	// forwards the public Host header (Caddy does by default).
	AllowAnyHost bool
	// WebDocs, when set, adds the explore_web_docs tool (webdocs.go).
	WebDocs WebDocs
	// LocalProject, when set (stdio), registers the local project and
	// returns its id: a list, glob, read or grep call with neither
	// packageName nor project explores the local project's node_modules
	// tree. Registering unchanged files again is one lookup.
	LocalProject func(ctx context.Context) (string, error)
	// Projects, when set, lets an HTTP session bind itself to a registered
	// project (/mcp?project=<id> or the Pkgscope-Project header,
	// bound.go): a call without a version answers the version the
	// project locks, as a Project does on stdio.
	Projects Projects
	// Structured adds the tool's outputSchema and every answer's
	// structuredContent (the /v1/explore JSON) beside the text, for
	// clients that hand the model JSON. Off by default: the JSON repeated
	// the text 2.36x over 70 calls, and a client that prefers
	// structuredContent (Claude Code) then never shows the model the
	// text. Over HTTP, /mcp?structured=1 turns it on per connection.
	Structured bool
	// bindable is true for the HTTP server variant that answers requests
	// bound to a project: its description words the version default as
	// stdio's does.
	bindable bool
}

// projectAware reports whether a call without a version gets a
// project's version rather than latest.
func (o Options) projectAware() bool { return o.Project != nil || o.bindable }

func (o Options) withDefaults() Options {
	def := DefaultLimits()
	o.Limits.MaxHTTPBodyBytes = cmp.Or(o.Limits.MaxHTTPBodyBytes, def.MaxHTTPBodyBytes)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	return o
}

// ToolName is the name of the one tool the server offers.
const ToolName = "explore_npm"

// NewServer returns an MCP server offering the explore_npm tool over ex.
// Run it on any transport (`mirror mcp` runs it on stdin/stdout), or
// mount HTTPHandler.
func NewServer(ex Explorer, opt Options) *sdk.Server {
	opt = opt.withDefaults()
	srv := sdk.NewServer(&sdk.Implementation{Name: "pkgscope", Title: "pkgscope npm explorer", Version: opt.Version}, &sdk.ServerOptions{
		Instructions: instructionsFor(opt),
		// The SDK logs every session start and end at Info: one line per
		// HTTP request in stateless mode. Only its warnings are news.
		Logger: slog.New(minLevel{opt.Logger.Handler(), slog.LevelWarn}),
		// Only tools: no logging capability (the SDK's default), and no
		// list-changed notifications since the one tool never changes.
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	t := newTool(ex, opt)
	srv.AddTool(t.definition(), shaped(opt.Structured, recovered(opt.Logger, t.handle)))
	if opt.WebDocs != nil {
		w := newWebDocsTool(opt.WebDocs, opt)
		srv.AddTool(w.definition(), shaped(opt.Structured, recovered(opt.Logger, w.handle)))
	}
	return srv
}

// shaped drops a result's structuredContent unless structured: the text
// alone carries the header, notes and next request (render.go).
func shaped(structured bool, h sdk.ToolHandler) sdk.ToolHandler {
	if structured {
		return h
	}
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := h(ctx, req)
		if res != nil {
			res.StructuredContent = nil
		}
		return res, err
	}
}

// recovered answers a call whose handler panicked (a bug) with an internal
// tool error, logged with its stack, instead of letting the panic end the
// process: the SDK runs handlers in its own goroutines, where nothing else
// recovers, and one agent's request must not take the shared service
// down for every other.
func recovered(log *slog.Logger, h sdk.ToolHandler) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				log.Error("tool call panicked", "tool", req.Params.Name, "panic", p, "stack", string(debug.Stack()))
				res, err = toolError(ErrorBody{Error: ErrorDetail{Code: "internal", Message: "internal error (logged by pkgscope)"}}, explore.Class{}, ""), nil
			}
		}()
		return h(ctx, req)
	}
}

// HTTPHandler serves the MCP streamable HTTP transport for ex, to be
// mounted at /mcp on the shared service, behind its auth and rate limits.
// It is stateless: every POST is answered on its own, with a JSON body, so
// any replica behind a load balancer can take any request and no session
// state is kept (GET and DELETE answer 405, which clients accept as "no
// server-initiated stream").
//
// Two per-connection options ride on the URL, which is what an agent's
// MCP configuration holds: ?project=<id> (or the Pkgscope-Project
// header) binds every call to a registered project (bound.go), and
// ?structured=1 (or 0) overrides Options.Structured.
func HTTPHandler(ex Explorer, opt Options) http.Handler {
	opt = opt.withDefaults()
	// One server per variant of what tools/list says (the version
	// default's wording, the output schema), built on first use.
	var servers [2][2]func() *sdk.Server
	for _, bound := range []bool{false, true} {
		for _, structured := range []bool{false, true} {
			o := opt
			o.Structured, o.bindable = structured, bound
			servers[b2i(bound)][b2i(structured)] = sync.OnceValue(func() *sdk.Server { return NewServer(ex, o) })
		}
	}
	pick := func(r *http.Request) *sdk.Server {
		c := connectionFrom(r.Context(), opt)
		return servers[b2i(c.project != nil)][b2i(c.structured)]()
	}
	return refuseBatches(withConnection(opt, sdk.NewStreamableHTTPHandler(pick, &sdk.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		Logger:                     slog.New(minLevel{opt.Logger.Handler(), slog.LevelWarn}),
		MaxRequestBodyBytes:        opt.Limits.MaxHTTPBodyBytes,
		DisableLocalhostProtection: opt.AllowAnyHost,
	})))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// refuseBatches answers a JSON-RPC batch (a body that is a JSON array)
// with 400 before the SDK runs it. The SDK would run every call of a
// batch: one HTTP request, which the rate limit counts once, carried
// thousands of greps or diffs in max-body-bytes. MCP dropped batches in
// its 2025-06-18 revision and clients send one message per POST.
func refuseBatches(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			br := bufio.NewReader(r.Body)
			for {
				b, err := br.ReadByte()
				if err != nil {
					break // empty or unreadable: the SDK answers it
				}
				if b == ' ' || b == '\t' || b == '\r' || b == '\n' {
					continue
				}
				_ = br.UnreadByte()
				if b == '[' {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusBadRequest)
					_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not accepted: send one message per request"}}`)
					return
				}
				break
			}
			r.Body = struct {
				io.Reader
				io.Closer
			}{br, r.Body}
		}
		next.ServeHTTP(w, r)
	})
}

// minLevel drops records below level.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.level}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.level}
}

const instructions = "pkgscope serves the files of published npm packages (the registry tarball: " +
	"dist bundles, .d.ts types, README) without installing them. Use the explore_npm tool to read " +
	"a dependency's real source and types instead of guessing its API."
