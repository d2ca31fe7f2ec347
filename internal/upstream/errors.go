package upstream

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// ErrTooLarge means a packument or tarball exceeded its byte limit
// (Config.MaxPackumentBytes, Config.MaxTarballBytes). Retrying does not
// help, so it is not an *unavailable.Error.
var ErrTooLarge = errors.New("larger than the configured limit")

// ErrInvalidName means the package name cannot be an npm package name, so
// it was never sent to the registry.
var ErrInvalidName = errors.New("invalid npm package name")

// ErrTarballURL means dist.tarball was refused: not http(s), or on a host
// that is neither the package's registry nor in Config.AllowedTarballHosts.
// Following it could make pkgscope fetch from internal addresses (SSRF).
var ErrTarballURL = errors.New("tarball URL refused")

// defaultRetryAfter is the Retry-After given to callers when the registry
// sends none: long enough not to hammer a registry that is struggling,
// short enough that an agent retries within its session.
const defaultRetryAfter = 30 * time.Second

// send runs req and returns its answer when it is a 200; the caller
// closes the body with drainClose. A failed request is transportError's
// error (caller is the context whose end is the caller giving up), any
// other status statusError's.
func (c *Client) send(caller context.Context, req *http.Request, what string) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, transportError(caller, what, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer drainClose(resp.Body)
		return nil, statusError(resp, what, c.cfg.Clock())
	}
	return resp, nil
}

// statusError maps a non-200 answer to ErrNotFound (404 only) or an
// *unavailable.Error. what names the request ("packument lodash").
func statusError(resp *http.Response, what string, now time.Time) error {
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	msg := fmt.Sprintf("%s: registry answered %s", what, resp.Status)
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		// Some registries answer 403 or 401 for a missing private package
		// too, but so they do for an expired token; a false "not found"
		// would be cached by callers, a false "unavailable" is retried.
		msg += "; check the npm auth token for this registry in .npmrc (//host/:_authToken)"
	}
	return &unavailable.Error{
		Source:     unavailable.Registry,
		Status:     resp.StatusCode,
		RetryAfter: retryAfter(resp.Header.Get("Retry-After"), now),
		Err:        errors.New(msg),
	}
}

// transportError wraps a failed request or body read. A caller's own
// cancellation, a size limit and a refused redirect are returned as they
// are; everything else, including this client's own timeouts, is the
// registry being unavailable.
func transportError(caller context.Context, what string, err error) error {
	if caller.Err() != nil {
		return fmt.Errorf("%s: %w", what, caller.Err())
	}
	if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrTarballURL) {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the refusal, without the URL it was for
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	return &unavailable.Error{Source: unavailable.Registry, RetryAfter: defaultRetryAfter, Err: fmt.Errorf("%s: %w", what, InWords(err))}
}

// failure is a transport error said in words. net/http's errors name the
// URL (with a token, for a registry that takes it in the path), the
// address dialled and, for a failed lookup, the resolver's: answers and
// notes never carry those (issue 11), so Error says only what failed, and
// Detail keeps the whole text for the log.
type failure struct {
	msg   string
	cause error
}

func (f *failure) Error() string { return f.msg }
func (f *failure) Unwrap() error { return f.cause }

// InWords wraps a transport error in one whose message says what failed
// (refused, timed out, a failed lookup, a cut answer) without the URL and
// addresses net/http's errors name; errors.Is and errors.As still see the
// original, and Detail returns its text for the log. The jsDelivr and MDN
// clients use it too, so it names no upstream: the caller's wrapping says
// which one ("MDN unreachable: its host name does not resolve").
func InWords(err error) error {
	var (
		dns    *net.DNSError
		cert   *tls.CertificateVerificationError
		op     *net.OpError
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
		msg    string
	)
	switch {
	case errors.As(err, &syntax), errors.As(err, &typ):
		return err // about the body, naming no address
	case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
		msg = "timed out"
	case errors.As(err, &dns) && dns.IsNotFound:
		msg = "its host name does not resolve"
	case errors.As(err, &dns):
		msg = "looking up its host name failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		msg = "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		msg = "the connection closed before the answer was complete"
	case errors.As(err, &cert):
		msg = "its TLS certificate is not trusted"
	case errors.As(err, &op):
		msg = "the connection failed (" + op.Op + ")"
	default:
		msg = "the request failed"
	}
	return &failure{msg: msg, cause: err}
}

// Detail returns the full text of the transport failure in err's chain,
// URL and addresses included, for the log only; "" when there is none.
func Detail(err error) string {
	var f *failure
	if errors.As(err, &f) {
		return f.cause.Error()
	}
	return ""
}

// retryAfter reads a registry's Retry-After: ParseRetryAfter, or
// defaultRetryAfter when the header is missing or unreadable.
func retryAfter(h string, now time.Time) time.Duration {
	if d, ok := ParseRetryAfter(h, now); ok {
		return d
	}
	return defaultRetryAfter
}

// ParseRetryAfter parses a Retry-After header, delay-seconds or an
// HTTP-date (a date already past gives 0), capped at maxRetryAfter. ok is
// false when the header is missing, negative or unreadable. Every client
// of an upstream (the registry, jsDelivr, a remote pkgscope) reads it here.
func ParseRetryAfter(h string, now time.Time) (d time.Duration, ok bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter, true
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d.Round(time.Second), maxRetryAfter), true
		}
		return 0, true
	}
	return 0, false
}

// maxRetryAfter caps what a registry may ask for: beyond a day the number
// means nothing to a caller except "broken", and it must not overflow.
const maxRetryAfter = 24 * time.Hour
