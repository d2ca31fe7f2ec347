// Package client calls a remote pkgscope's /v1/explore: the same list,
// glob, read and grep as *explore.Service, over HTTP. `mirror mcp --remote`
// uses it so one developer's agent reads through the org's shared mirror
// instead of an embedded store.
//
// Errors the remote answers with its JSON body {"error":{"code","message"}}
// come back as *Error, keeping the code, message, status and Retry-After,
// so the MCP tool reports exactly what the shared service said.
package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// Options configure a Client.
type Options struct {
	// Token, when set, is sent as "Authorization: Bearer <Token>".
	Token string
	// Timeout bounds one call. The default (6 minutes) outlasts the
	// server's default fill-timeout (5 minutes): a cold version makes the
	// remote fetch and ingest the tarball before it answers.
	Timeout time.Duration
	// MaxResponseBytes caps a response body. The default (64 MiB) is far
	// above the largest answer a default-configured server gives: a list
	// of max-files (100,000) paths of ~100 bytes is ~10 MiB, a read at
	// most max-read-bytes (512 KiB) of content.
	MaxResponseBytes int64
	// HTTPClient is used for requests; nil means a client with no timeout
	// of its own (Timeout applies per call).
	HTTPClient *http.Client
	// UserAgent is sent with every request.
	UserAgent string
}

// DefaultOptions returns the defaults explained on Options.
func DefaultOptions() Options {
	return Options{Timeout: 6 * time.Minute, MaxResponseBytes: 64 << 20, UserAgent: "pkgscope-mcp"}
}

// Client is an HTTP client of one remote pkgscope. It is safe for
// concurrent use.
type Client struct {
	endpoint string
	projects string // POST /v1/projects
	opt      Options
	hc       *http.Client
}

// New returns a client of the pkgscope at baseURL (e.g.
// "https://pkgscope.example.internal"); /v1/explore is appended. Zero
// fields of opt take their defaults.
func New(baseURL string, opt Options) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("remote %q: want an http:// or https:// URL of a pkgscope server", baseURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("remote %q: put credentials in the token, not the URL", u.Redacted())
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/explore"
	u.RawQuery, u.Fragment = "", ""
	def := DefaultOptions()
	opt.Timeout = cmp.Or(opt.Timeout, def.Timeout)
	opt.MaxResponseBytes = cmp.Or(opt.MaxResponseBytes, def.MaxResponseBytes)
	opt.UserAgent = cmp.Or(opt.UserAgent, def.UserAgent)
	hc := opt.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	projects := *u
	projects.Path = strings.TrimSuffix(projects.Path, "/v1/explore") + "/v1/projects"
	return &Client{endpoint: u.String(), projects: projects.String(), opt: opt, hc: hc}, nil
}

// RegisterProject registers a project with the remote (POST
// /v1/projects) and returns its answer: the id to explore it by.
func (c *Client) RegisterProject(ctx context.Context, u project.Upload) (*project.Registered, error) {
	b, err := json.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("encoding the project: %w", err)
	}
	var reg project.Registered
	if err := c.post(ctx, c.projects, b, &reg); err != nil {
		return nil, err
	}
	return &reg, nil
}

// Endpoint is the URL requests are posted to.
func (c *Client) Endpoint() string { return c.endpoint }

// List answers the remote's list of r.
func (c *Client) List(ctx context.Context, r explore.Request) (*explore.ListResult, error) {
	var res explore.ListResult
	r.Action = "list"
	return &res, c.call(ctx, r, &res)
}

// Glob answers the remote's glob of r. Empty patterns are passed on as
// they are: the remote answers that they are missing.
func (c *Client) Glob(ctx context.Context, r explore.Request) (*explore.ListResult, error) {
	var res explore.ListResult
	r.Action = "glob"
	return &res, c.call(ctx, r, &res)
}

// Read answers the remote's read of r.
func (c *Client) Read(ctx context.Context, r explore.Request) (*explore.ReadResult, error) {
	var res explore.ReadResult
	r.Action = "read"
	return &res, c.call(ctx, r, &res)
}

// Grep answers the remote's grep of r.
func (c *Client) Grep(ctx context.Context, r explore.Request) (*explore.GrepResult, error) {
	var res explore.GrepResult
	r.Action = "grep"
	return &res, c.call(ctx, r, &res)
}

// Diff answers a diff page, as the remote's diff.
func (c *Client) Diff(ctx context.Context, r explore.Request) (*explore.DiffResult, error) {
	var res explore.DiffResult
	r.Action = "diff"
	err := c.call(ctx, r, &res)
	return &res, err
}

// ExploreProject forwards a project request (explore.ProjectExplorer),
// decoded as the remote's project explorer answered it.
func (c *Client) ExploreProject(ctx context.Context, r explore.Request) (any, error) {
	var res any
	switch r.Action {
	case "list", "glob":
		res = &project.ListAnswer{}
	case "grep":
		res = &project.GrepAnswer{}
	case "read":
		res = &explore.ReadResult{}
	default:
		var raw json.RawMessage
		res = &raw
	}
	if err := c.call(ctx, r, res); err != nil {
		return nil, err
	}
	return res, nil
}

// call posts body, the API's own request type (so the client cannot drift
// from the server: empty fields are left out), and decodes the answer.
func (c *Client) call(ctx context.Context, body explore.Request, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encoding the %s request: %w", body.Action, err)
	}
	return c.post(ctx, c.endpoint, b, out)
}

// post posts b to endpoint and decodes a 200 or 201 answer into out.
func (c *Client) post(ctx context.Context, endpoint string, b []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("building the request to %s: %w", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.opt.UserAgent)
	if c.opt.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opt.Token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			// Our own deadline or the caller giving up: keep the context
			// error so explore.Classify reports a timeout, not a failure.
			return fmt.Errorf("calling pkgscope at %s: %w", endpoint, context.Cause(ctx))
		}
		return &Error{Status: http.StatusBadGateway, Code: CodeUnreachable,
			Message: fmt.Sprintf("cannot reach pkgscope at %s: %v", endpoint, err), Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.opt.MaxResponseBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("reading the answer of %s: %w", endpoint, context.Cause(ctx))
		}
		return &Error{Status: http.StatusBadGateway, Code: CodeUnreachable,
			Message: fmt.Sprintf("reading the answer of %s: %v", endpoint, err), Err: err}
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		// An error body over the cap is quoted in part, never decoded whole.
		return decodeError(resp, data)
	}
	if int64(len(data)) > c.opt.MaxResponseBytes {
		return &Error{Status: http.StatusBadGateway, Code: CodeBadAnswer,
			Message: fmt.Sprintf("the answer of %s is over %d bytes (setting max-response-bytes)", endpoint, c.opt.MaxResponseBytes)}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &Error{Status: http.StatusBadGateway, Code: CodeBadAnswer,
			Message: fmt.Sprintf("the answer of %s is not the expected JSON: %v", endpoint, err), Err: err}
	}
	return nil
}

// Codes this client gives errors that the remote did not answer itself.
const (
	// CodeUnreachable: no answer (connection refused, reset, TLS failure).
	CodeUnreachable = "remote_unreachable"
	// CodeBadAnswer: an answer that is not a pkgscope answer (a proxy's
	// HTML error page, a body over MaxResponseBytes, invalid JSON).
	CodeBadAnswer = "remote_bad_answer"
)

// maxQuotedBody bounds how much of a non-JSON error body an Error repeats.
const maxQuotedBody = 300

func decodeError(resp *http.Response, data []byte) error {
	e := &Error{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &body) == nil && body.Error.Code != "" {
		e.Code, e.Message = body.Error.Code, body.Error.Message
		return e
	}
	// Not our error shape: something between us and pkgscope answered.
	e.Code = CodeBadAnswer
	text := strings.TrimSpace(string(data))
	if len(text) > maxQuotedBody {
		text = strings.ToValidUTF8(text[:maxQuotedBody], "") + "…"
	}
	e.Message = fmt.Sprintf("%s answered %s: %s", resp.Request.URL.Host, resp.Status, text)
	return e
}

// retryAfter parses Retry-After in seconds or as an HTTP date; 0 if absent
// or unreadable.
func retryAfter(v string) time.Duration {
	d, _ := upstream.ParseRetryAfter(v, time.Now())
	return d
}

// Error is a failure answered by (or on the way to) the remote pkgscope.
type Error struct {
	// Status is the HTTP status the remote answered (502 for
	// CodeUnreachable and CodeBadAnswer).
	Status int
	// Code and Message are the remote's error body, verbatim.
	Code, Message string
	// RetryAfter is the remote's Retry-After, 0 when it sent none.
	RetryAfter time.Duration
	// Err is the transport error behind CodeUnreachable, if any.
	Err error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the transport error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Class reports the error as the remote classified it, so the MCP tool
// answers with the same code a local service would have.
func (e *Error) Class() explore.Class {
	return explore.Class{Status: e.Status, Code: e.Code, RetryAfter: e.RetryAfter}
}
