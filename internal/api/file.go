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
func cacheControl(c echo.Context, immutable bool) string { return cacheControlValue(c, immutable)[0] }

// cacheControlValue is cacheControl as a header value, shared by every
// answer like the constant headers below.
func cacheControlValue(c echo.Context, immutable bool) []string {
	_, private := auth.FromContext(c)
	switch {
	case private && immutable:
		return privateImmutable
	case private:
		return privateShort
	case immutable:
		return publicImmutable
	}
	return publicShort
}

var (
	privateImmutable = []string{"private, max-age=31536000, immutable"}
	privateShort     = []string{"private, max-age=300"}
	publicImmutable  = []string{"public, max-age=31536000, immutable"}
	publicShort      = []string{"public, max-age=300"}
)

// serveFile writes a package file with the headers both raw-file routes
// (/v1/npm and jsDelivr's /npm) use, from a stream it closes, answering
// Range requests (http.ServeContent). versionHeader names the header
// carrying the resolved version; "" sends none (an exact version's URL
// names it already). Each write of a stream must finish within stall
// (--stalled-client-timeout): a client that stops reading gives its
// stream, and its share of max-body-bytes-in-flight, back then, not at
// write-timeout.
//
// A body already in memory (one the cache holds) asked for whole is
// answered by a heldFile, which serveFile returns so that the caller may
// keep it for the next request (Server.held); otherwise it returns nil.
func serveFile(c echo.Context, versionHeader, version string, f store.File, body store.BlobStream, exact bool, stall time.Duration) *heldFile {
	defer body.Close()
	if b, ok := body.(interface{ Bytes() []byte }); ok && plainRead(c.Request()) {
		a := newHeldFile(f, b.Bytes())
		a.write(c, versionHeader, version, exact)
		return a
	}
	newFileHeaders(f).set(c, versionHeader, version, exact)
	w := http.ResponseWriter(c.Response())
	if stall > 0 {
		w = &stallWriter{ResponseWriter: w, rc: http.NewResponseController(c.Response().Writer), stall: stall}
	}
	// ServeContent answers If-None-Match with 304 (the ETag is set) and
	// Range with 206; no modification time is known.
	http.ServeContent(w, c.Request(), "", time.Time{}, body)
	return nil
}

// heldFile is a raw file's whole answer made ready to write: a body held
// in memory and the header values that follow from the file alone, each
// its own full slice, shared by every answer written from it (nothing
// appends to or edits a header value in place). Kept by Server.held, it
// answers the next plain read of the same exact-version URL without the
// look-ups that found it (issue 27).
type heldFile struct {
	fileHeaders
	body          []byte
	contentLength []string
}

func newHeldFile(f store.File, body []byte) *heldFile {
	return &heldFile{fileHeaders: newFileHeaders(f), body: body, contentLength: []string{strconv.Itoa(len(body))}}
}

// cost is what a held answer counts against raw-answer-bytes: its body
// and header values, and the key (the URL path) it is held under.
func (a *heldFile) cost(key string) int64 {
	return int64(len(a.body) + len(a.etag[0]) + len(a.contentType[0]) + len(a.contentLength[0]) + len(key) + 200)
}

// fileHeaders are the header values that follow from a package file: its
// ETag and Content-Type, each its own full slice.
type fileHeaders struct{ etag, contentType []string }

func newFileHeaders(f store.File) fileHeaders {
	return fileHeaders{etag: []string{etag(f.Hash)}, contentType: []string{contentType(f.Path, f.Binary)}}
}

// set gives the answer the headers every raw file carries: the version
// header when versionHeader names one, the ETag, the sandbox CSP,
// Cache-Control (immutable for an exact version, private to a verified
// caller) and Content-Type. Keys in their canonical form, assigned rather
// than Set: canonicalizing them was a measurable part of a warm read
// (issue 27).
func (fh fileHeaders) set(c echo.Context, versionHeader, version string, exact bool) {
	h := c.Response().Header()
	if versionHeader != "" {
		h[versionHeader] = []string{version}
	}
	h["Etag"] = fh.etag
	// Package files are untrusted: never let an HTML or SVG file run
	// script in the mirror's origin. (SecurityHeaders sets nosniff.)
	h["Content-Security-Policy"] = sandboxCSP
	h["Cache-Control"] = cacheControlValue(c, exact)
	h["Content-Type"] = fh.contentType
}

// write answers with status 200 and the whole body (none for HEAD), what
// http.ServeContent answers a plain read with, written at once without
// its copy through a fresh buffer. The caller checked plainRead.
//
// The write has write-timeout, as every answer held in memory (JSON, MCP)
// has, and not --stalled-client-timeout: that one releases a stream, and
// its share of max-body-bytes-in-flight, from a client that stopped
// reading, and a held body is neither. Its deadline was two clock reads
// and a timer change on every warm read (issue 27).
//
// A read of an exact version's file (no version header) leaves out
// ServeContent's Accept-Ranges: a Range request is still answered 206
// (plainRead), the header only advertises it, and a body too large to be
// held, which is streamed, keeps it. A HEAD answers as its GET
// (headAsGet). The answer's header map holds 8 keys this way, Go's small
// map: at 9 or more net/http builds a hashed table for it and again for
// the copy WriteHeader takes, ~6 µs of a warm read's ~43 under load
// (docs/BENCHMARKS.md, "Load"). An answer with a version header has 9
// already.
func (a *heldFile) write(c echo.Context, versionHeader, version string, exact bool) {
	a.set(c, versionHeader, version, exact)
	h := c.Response().Header()
	if versionHeader != "" {
		h["Accept-Ranges"] = acceptRanges
	}
	h["Content-Length"] = a.contentLength
	w := c.Response()
	w.WriteHeader(http.StatusOK)
	if c.Request().Method != http.MethodHead {
		_, _ = w.Write(a.body)
	}
}

// Header values every raw file carries, shared by all answers: nothing
// appends to or edits a header value in place (Add would copy a full
// slice).
var (
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
