package api

import (
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/auth"
	"github.com/pkgscope/pkgscope/internal/store"
)

// cacheControl says how long an answer may be cached: a year, immutable,
// for an exact version; five minutes for a range or tag, which move. An
// answer to an authenticated request is "private": a shared cache in
// front of the mirror must not hand it to callers without a token.
func cacheControl(c echo.Context, immutable bool) string {
	_, private := auth.FromContext(c)
	switch {
	case private && immutable:
		return "private, max-age=31536000, immutable"
	case private:
		return "private, max-age=300"
	case immutable:
		return "public, max-age=31536000, immutable"
	}
	return "public, max-age=300"
}

// serveFile writes a package file with the headers both raw-file routes
// (/v1/npm and jsDelivr's /npm) use, from a stream it closes, answering
// Range requests (http.ServeContent). versionHeader names the header
// carrying the resolved version; "" sends none (an exact version's URL
// names it already). Each write must finish within stall
// (--stalled-client-timeout): a client that stops reading gives its
// stream, and its share of max-body-bytes-in-flight, back then, not at
// write-timeout.
func serveFile(c echo.Context, versionHeader, version string, f store.File, body store.BlobStream, exact bool, stall time.Duration) error {
	defer body.Close()
	// Keys in their canonical form, assigned rather than Set: a warm read
	// is a few microseconds of work, and canonicalizing seven keys was a
	// measurable part of it (issue 27). The per-file values share one
	// backing array, each a full slice.
	h := c.Response().Header()
	vals := []string{version, etag(f.Hash), cacheControl(c, exact), contentType(f.Path, f.Binary), ""}
	if versionHeader != "" {
		h[versionHeader] = vals[0:1:1]
	}
	h["Etag"] = vals[1:2:2]
	h["X-Content-Type-Options"] = nosniff
	// Package files are untrusted: never let an HTML or SVG file run
	// script in the mirror's origin.
	h["Content-Security-Policy"] = sandboxCSP
	h["Cache-Control"] = vals[2:3:3]
	h["Content-Type"] = vals[3:4:4]
	if b, ok := body.(interface{ Bytes() []byte }); ok && plainRead(c.Request()) {
		// A body already in memory (one the cache holds) asked for
		// whole: what ServeContent answers, written at once, without
		// its copy through a fresh buffer. One write, so one deadline,
		// set here without stallWriter's two allocations.
		//
		//
		// A read of an exact version's file (no version header) leaves
		// out ServeContent's Accept-Ranges: a Range request is still
		// answered 206 (plainRead), the header only advertises it, and
		// a body too large to be held, which is streamed, keeps it. A
		// HEAD answers as its GET (headAsGet). The answer's header map
		// holds 8 keys this way, Go's small map: at 9 or more net/http
		// builds a hashed table for it and again for the copy
		// WriteHeader takes, ~6 µs of a warm read's ~43 under load
		// (docs/BENCHMARKS.md, "Load"). An answer with a version header
		// has 9 already.
		if versionHeader != "" {
			h["Accept-Ranges"] = acceptRanges
		}
		vals[4] = strconv.Itoa(len(b.Bytes()))
		h["Content-Length"] = vals[4:5:5]
		w := c.Response()
		w.WriteHeader(http.StatusOK)
		if c.Request().Method != http.MethodHead {
			if stall > 0 {
				// An error means the server cannot set deadlines (a
				// test recorder): write-timeout still applies.
				_ = http.NewResponseController(w.Writer).SetWriteDeadline(time.Now().Add(stall))
			}
			_, _ = w.Write(b.Bytes())
		}
		return nil
	}
	w := http.ResponseWriter(c.Response())
	if stall > 0 {
		w = &stallWriter{ResponseWriter: w, rc: http.NewResponseController(c.Response().Writer), stall: stall}
	}
	// ServeContent answers If-None-Match with 304 (the ETag is set) and
	// Range with 206; no modification time is known.
	http.ServeContent(w, c.Request(), "", time.Time{}, body)
	return nil
}

// Header values every raw file carries, shared by all answers: nothing
// appends to or edits a header value in place (Add would copy a full
// slice).
var (
	nosniff      = []string{"nosniff"}
	sandboxCSP   = []string{"default-src 'none'; sandbox"}
	acceptRanges = []string{"bytes"}
)

// plainRead reports whether http.ServeContent would answer r with the
// whole body and status 200: a GET or HEAD with no Range and no
// validator it checks. With no modification time, it ignores
// If-Modified-Since and If-Unmodified-Since, and If-Range goes only with
// Range.
func plainRead(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	for _, k := range [...]string{"Range", "If-Match", "If-None-Match"} {
		if _, ok := r.Header[k]; ok {
			return false
		}
	}
	return true
}

// etag is a file's entity tag: its body's sha256.
func etag(h store.Hash) string {
	var b [len(`"sha256-"`) + 2*len(h)]byte
	n := copy(b[:], `"sha256-`)
	hex.Encode(b[n:], h[:])
	b[len(b)-1] = '"'
	return string(b[:])
}

// stallWriter gives each write its own deadline.
type stallWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
}

func (s *stallWriter) Write(p []byte) (int, error) {
	// An error means the server cannot set deadlines (a test recorder):
	// write-timeout still applies.
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.stall))
	return s.ResponseWriter.Write(p)
}
