package api

import (
	"encoding/hex"
	"net/http"

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

// serveFile writes a package file's bytes with the headers both raw-file
// routes (/v1/npm and jsDelivr's /npm) use. versionHeader names the header
// carrying the resolved version.
func serveFile(c echo.Context, versionHeader, version string, f store.File, body []byte, exact bool) error {
	h := c.Response().Header()
	h.Set(versionHeader, version)
	h.Set("ETag", `"sha256-`+hex.EncodeToString(f.Hash[:])+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	// Package files are untrusted: never let an HTML or SVG file run
	// script in the mirror's origin.
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", cacheControl(c, exact))
	if match := c.Request().Header.Get("If-None-Match"); match != "" && match == h.Get("ETag") {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, contentType(f.Path, f.Binary), body)
}
