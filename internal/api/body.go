package api

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// bodyFailedKey is the echo.Context key under which BodyErrors records a
// request body that did not arrive, for handleError's status.
const bodyFailedKey = "pkgscope.api.body-failed"

// BodyErrors is middleware that replaces the errors of reading a request's
// body with ones that say what happened in words: the transport's own
// ("read tcp 10.0.3.7:7878->10.0.3.1:51234: i/o timeout") names the
// mirror's and the caller's addresses, and every handler quotes its read
// error (the explore and warm decoders, MCP's "failed to read body"). A
// body that did not arrive within the server's read-timeout answers 408
// (handleError) rather than 400: nothing in it was wrong but its pace.
// The real error goes to the log with the request id.
func BodyErrors(readTimeout time.Duration) echo.MiddlewareFunc {
	within := "the time the server gives it"
	if readTimeout > 0 {
		within = readTimeout.String()
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.Body == nil || r.Body == http.NoBody {
				return next(c)
			}
			r.Body = &bodyReader{ReadCloser: r.Body, c: c, timeout: within}
			return next(c)
		}
	}
}

// bodyReader is a request body whose read errors name no address.
type bodyReader struct {
	io.ReadCloser
	c       echo.Context
	timeout string
}

// bodyCutError is a body the connection ended before its end.
type bodyCutError struct{}

func (bodyCutError) Error() string { return "the connection ended before the whole body arrived" }

// Quotable lets strictjson.ReadBody quote it: it names no address.
func (bodyCutError) Quotable() {}

// errBodyCut is a body the connection ended before its end.
var errBodyCut error = bodyCutError{}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == nil || err == io.EOF {
		return n, err
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return n, err
	}
	b.c.Set(bodyFailedKey, err) // handleError logs the transport's words
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return n, &bodyTimeoutError{timeout: b.timeout}
	}
	return n, errBodyCut
}

// bodyTimeoutError is a body that did not arrive within read-timeout.
type bodyTimeoutError struct{ timeout string }

// Quotable lets strictjson.ReadBody quote it: it names no address.
func (e *bodyTimeoutError) Quotable() {}

func (e *bodyTimeoutError) Error() string {
	return "the body did not arrive within " + e.timeout + " (setting read-timeout): send it whole, at a steady pace"
}
