package api

import (
	"encoding/hex"
	"net/http"
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
	scope := "public"
	if _, ok := auth.FromContext(c); ok {
		scope = "private"
	}
	if immutable {
		return scope + ", max-age=31536000, immutable"
	}
	return scope + ", max-age=300"
}

// serveFile writes a package file with the headers both raw-file routes
// (/v1/npm and jsDelivr's /npm) use, from a stream it closes, answering
// Range requests (http.ServeContent). versionHeader names the header
// carrying the resolved version. Each write must finish within stall
// (--stalled-client-timeout): a client that stops reading gives its
// stream, and its share of max-body-bytes-in-flight, back then, not at
// write-timeout.
func serveFile(c echo.Context, versionHeader, version string, f store.File, body store.BlobStream, exact bool, stall time.Duration) error {
	defer body.Close()
	h := c.Response().Header()
	h.Set(versionHeader, version)
	h.Set("ETag", `"sha256-`+hex.EncodeToString(f.Hash[:])+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	// Package files are untrusted: never let an HTML or SVG file run
	// script in the mirror's origin.
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", cacheControl(c, exact))
	h.Set("Content-Type", contentType(f.Path, f.Binary))
	w := http.ResponseWriter(c.Response())
	if stall > 0 {
		w = &stallWriter{ResponseWriter: w, rc: http.NewResponseController(c.Response().Writer), stall: stall}
	}
	// ServeContent answers If-None-Match with 304 (the ETag is set) and
	// Range with 206; no modification time is known.
	http.ServeContent(w, c.Request(), "", time.Time{}, body)
	return nil
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
