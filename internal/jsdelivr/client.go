// Package jsdelivr talks to jsDelivr: its Data API (resolve a range, list a
// version's files) and its CDN (one file's bytes). The mirror uses it as a
// fallback when the registry cannot serve a version (Fallback), and its
// JSON shapes for the jsDelivr-compatible endpoints (internal/api).
//
// jsDelivr is a CDN in front of the public npm registry, not a registry:
// its hashes are sha256 of each file as it serves it, not npm's tarball
// integrity, so nothing it returns is ever written to the store.
//
// Errors: ErrNotFound only for a genuine 404; every other failure,
// including jsDelivr's 403 for packages over its 150 MB limit, is an
// *unavailable.Error.
package jsdelivr

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/pkgscope/pkgscope/internal/unavailable"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// Config configures a Client. A zero limit takes its value from
// DefaultConfig.
type Config struct {
	// DataURL is the base of the Data API (the part before /v1/...),
	// CDNURL the base of the CDN (the part before /npm/...).
	DataURL, CDNURL string
	// Timeout bounds one request, body included. jsDelivr answers a
	// listing it has cached in well under a second, but the first listing
	// of a large version makes it fetch the tarball itself; 20s covers a
	// 100 MB package on its side.
	Timeout time.Duration
	// MaxListingBytes caps a Data API answer. A flat listing costs about
	// 100 bytes per file; npm's largest versions hold about 100,000 files.
	MaxListingBytes int64
	// MaxFileBytes caps one file from the CDN. jsDelivr serves no package
	// over 150 MB, so no file is larger.
	MaxFileBytes int64
	// UserAgent is sent with every request; jsDelivr asks API users to
	// name their tool in it.
	UserAgent string
}

// DefaultConfig returns the limits; the base URLs are left to the caller.
func DefaultConfig() Config {
	return Config{
		Timeout:         20 * time.Second,
		MaxListingBytes: 32 << 20,
		MaxFileBytes:    64 << 20,
		UserAgent:       "pkgscope (+https://github.com/pkgscope/pkgscope)",
	}
}

// ErrNotFound is jsDelivr answering 404: no such package, version or file.
var ErrNotFound = errors.New("not found on jsDelivr")

// ErrPackageTooLarge is jsDelivr's 403 for a package over its size limit
// (150 MB for npm). It is wrapped in an *unavailable.Error: the package
// exists, jsDelivr just will not serve it.
var ErrPackageTooLarge = errors.New("package over jsDelivr's size limit")

// ErrTooLarge is an answer over Config.MaxListingBytes or MaxFileBytes.
var ErrTooLarge = errors.New("answer larger than the configured limit")

// Client calls jsDelivr. It is safe for concurrent use.
type Client struct {
	cfg  Config
	hc   *http.Client
	data *url.URL
	cdn  *url.URL
}

// New returns a client, or an error naming a base URL that is not an
// absolute http(s) URL.
func New(cfg Config, hc *http.Client) (*Client, error) {
	d := DefaultConfig()
	cfg.Timeout = cmp.Or(cfg.Timeout, d.Timeout)
	cfg.MaxListingBytes = cmp.Or(cfg.MaxListingBytes, d.MaxListingBytes)
	cfg.MaxFileBytes = cmp.Or(cfg.MaxFileBytes, d.MaxFileBytes)
	cfg.UserAgent = cmp.Or(cfg.UserAgent, d.UserAgent)
	if hc == nil {
		hc = &http.Client{}
	}
	data, err := baseURL("jsdelivr-data-url", cfg.DataURL)
	if err != nil {
		return nil, err
	}
	cdn, err := baseURL("jsdelivr-cdn-url", cfg.CDNURL)
	if err != nil {
		return nil, err
	}
	copied := *hc
	copied.CheckRedirect = checkRedirect(hc.CheckRedirect, data, cdn)
	return &Client{cfg: cfg, hc: &copied, data: data, cdn: cdn}, nil
}

// ErrRedirect means jsDelivr redirected to a host that is neither its
// Data API's nor its CDN's. Following it would let an answer point the
// mirror at any address, internal ones included (SSRF), as the registry
// client refuses for tarballs.
var ErrRedirect = errors.New("redirect to another host refused")

// checkRedirect follows redirects only within the two base URLs' scheme
// and host, at most 10 (net/http's default).
func checkRedirect(next func(*http.Request, []*http.Request) error, bases ...*url.URL) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if !slices.ContainsFunc(bases, func(b *url.URL) bool { return b.Scheme == req.URL.Scheme && b.Host == req.URL.Host }) {
			return ErrRedirect
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}

func baseURL(setting, raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s %q: want an absolute http(s) URL", setting, raw)
	}
	return u, nil
}

// MaxFileBytes is the configured cap on one CDN file.
func (c *Client) MaxFileBytes() int64 { return c.cfg.MaxFileBytes }

// Resolve returns the version jsDelivr resolves specifier (a range, a
// dist-tag or a version; "" means latest) to. When jsDelivr knows the
// package but no version matches it returns "" and a nil error, as the
// Data API answers {"version": null}.
func (c *Client) Resolve(ctx context.Context, name, specifier string) (string, error) {
	if specifier == "" {
		specifier = "latest"
	}
	u := c.dataURL(name+"/resolved", url.Values{"specifier": {specifier}})
	var out struct {
		Version *string `json:"version"`
	}
	if err := c.getJSON(ctx, u, "resolving "+name+"@"+specifier, &out); err != nil {
		return "", err
	}
	if out.Version == nil {
		return "", nil
	}
	return *out.Version, nil
}

// Listing returns the flat listing of name@version (an exact version).
// Its Files are as jsDelivr sent them; Listing.Check validates them.
func (c *Client) Listing(ctx context.Context, name, version string) (*Listing, error) {
	u := c.dataURL(name+"@"+version, url.Values{"structure": {"flat"}})
	var l Listing
	if err := c.getJSON(ctx, u, "listing "+name+"@"+version, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// File returns the bytes of path (no leading slash) in name@version from
// the CDN, at most maxBytes of them (0: Config.MaxFileBytes).
func (c *Client) File(ctx context.Context, name, version, path string, maxBytes int64) ([]byte, error) {
	if maxBytes <= 0 || maxBytes > c.cfg.MaxFileBytes {
		maxBytes = c.cfg.MaxFileBytes
	}
	// url.URL escapes Path itself, keeping "@" and "/" as jsDelivr's
	// URLs write them (/npm/@scope/name@1.0.0/dist/x.js).
	u := *c.cdn
	u.Path += "/npm/" + name + "@" + version + "/" + path
	u.RawPath = ""
	what := "fetching " + path + " of " + name + "@" + version + " from the CDN"
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	resp, err := c.do(ctx, u.String(), what)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readCapped(ctx, resp.Body, maxBytes, what)
}

func (c *Client) dataURL(rest string, q url.Values) string {
	u := *c.data
	u.Path += "/v1/packages/npm/" + rest
	u.RawPath = ""
	u.RawQuery = q.Encode()
	return u.String()
}

func (c *Client) getJSON(ctx context.Context, u, what string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	resp, err := c.do(ctx, u, what)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := readCapped(ctx, resp.Body, c.cfg.MaxListingBytes, what)
	if err != nil {
		return err
	}
	// The Data API once answered some errors with 200 and an error body
	// ({"status":403,"message":...}); treat those like the status.
	var e errorBody
	if json.Unmarshal(body, &e) == nil && e.Status >= 400 {
		return statusError(e.Status, e.Message, "", what)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return &unavailable.Error{Source: unavailable.JSDelivr, Status: resp.StatusCode, Err: fmt.Errorf("%s: undecodable answer: %w", what, err)}
	}
	return nil
}

// errorBody is the Data API's error shape: {"status":404,"message":"..."}.
type errorBody struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// do sends a GET and returns a 200 response; any other status is turned
// into an error here.
func (c *Client) do(ctx context.Context, u, what string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, transportError(ctx, what, err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	msg := strings.TrimSpace(string(b))
	var e errorBody
	if json.Unmarshal(b, &e) == nil && e.Message != "" {
		msg = e.Message
	}
	return nil, statusError(resp.StatusCode, msg, resp.Header.Get("Retry-After"), what)
}

// statusError maps a non-200 answer: 404 is ErrNotFound, 403 is the
// package-size refusal, everything else is unavailable.
func statusError(status int, msg, retryAfter, what string) error {
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	switch status {
	case http.StatusNotFound:
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	case http.StatusForbidden:
		return &unavailable.Error{Source: unavailable.JSDelivr, Status: status, Err: fmt.Errorf("%s: %s: %w", what, msg, ErrPackageTooLarge)}
	}
	ue := &unavailable.Error{Source: unavailable.JSDelivr, Status: status, Err: fmt.Errorf("%s: jsDelivr answered %d %s", what, status, msg)}
	ue.RetryAfter, _ = upstream.ParseRetryAfter(retryAfter, time.Now())
	return ue
}

// transportError wraps a failed request. The caller's own cancellation is
// returned as it is; everything else, this client's timeout included, is
// jsDelivr being unavailable.
func transportError(ctx context.Context, what string, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", what, cause)
	}
	if errors.Is(err, ErrRedirect) {
		return &unavailable.Error{Source: unavailable.JSDelivr, Err: fmt.Errorf("%s: %w", what, ErrRedirect)}
	}
	return &unavailable.Error{Source: unavailable.JSDelivr, Err: fmt.Errorf("%s: %w", what, upstream.InWords(err))}
}

// readCapped reads a body of at most max bytes.
func readCapped(ctx context.Context, r io.Reader, max int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, transportError(ctx, what, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: over %d bytes: %w", what, max, ErrTooLarge)
	}
	return b, nil
}
