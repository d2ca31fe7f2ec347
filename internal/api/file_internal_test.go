package api

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/store"
)

// inMemory is a body the cache holds whole: serveFile writes it at once.
type inMemory struct {
	*bytes.Reader
	b []byte
}

func (m *inMemory) Close() error     { return nil }
func (m *inMemory) Size() int64      { return int64(len(m.b)) }
func (m *inMemory) Footprint() int64 { return int64(len(m.b)) }
func (m *inMemory) Bytes() []byte    { return m.b }

// streamed is the same body without Bytes (an embedded interface
// promotes only its own methods): serveFile hands it to
// http.ServeContent.
type streamed struct{ store.BlobStream }

// TestServeFileWholeAsServeContent: a body in memory, written at once,
// gets what http.ServeContent answers the same request with — status,
// every header and the bytes — for plain GETs and HEADs, and the requests
// ServeContent answers otherwise (Range, validators) still go to it. One
// difference: a read answered at once with no version header (an exact
// version's URL) does not advertise Accept-Ranges, which the Range case
// shows is answered; left out, its header map stays Go's small map
// (serveFile).
func TestServeFileWholeAsServeContent(t *testing.T) {
	body := []byte(strings.Repeat("export const a = 1; // <x> & y\n", 90))
	f := store.File{Path: "dist/index.js", Hash: store.HashOf(body), Size: int64(len(body))}
	tag := etag(f.Hash)
	if want := `"sha256-` + hex.EncodeToString(f.Hash[:]) + `"`; tag != want {
		t.Fatalf("etag %s, want %s", tag, want)
	}
	serve := func(method string, header http.Header, b store.BlobStream, versionHeader string, stall bool) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(method, "/v1/npm/p@1.0.0/dist/index.js", nil)
		for k, v := range header {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		c := echo.New().NewContext(req, rec)
		var d time.Duration
		if stall {
			d = time.Second
		}
		serveFile(c, versionHeader, "1.0.0", f, b, true, d)
		return rec
	}
	for _, c := range []struct {
		name   string
		method string
		header http.Header
		// atOnce: answered whole without ServeContent (plainRead).
		atOnce bool
	}{
		{"GET", http.MethodGet, nil, true},
		{"HEAD", http.MethodHead, nil, true},
		{"Range", http.MethodGet, http.Header{"Range": {"bytes=7-12"}}, false},
		{"If-None-Match hit", http.MethodGet, http.Header{"If-None-Match": {tag}}, false},
		{"If-None-Match miss", http.MethodGet, http.Header{"If-None-Match": {`"other"`}}, false},
		{"If-Match miss", http.MethodGet, http.Header{"If-Match": {`"other"`}}, false},
		{"If-Modified-Since", http.MethodGet, http.Header{"If-Modified-Since": {"Mon, 02 Jan 2006 15:04:05 GMT"}}, true},
		{"If-Range alone", http.MethodGet, http.Header{"If-Range": {`"other"`}}, true},
	} {
		for _, vh := range []string{"X-Pkgscope-Version", ""} {
			for _, stall := range []bool{false, true} {
				name := fmt.Sprintf("%s (version header %q, stall %v)", c.name, vh, stall)
				m := serve(c.method, c.header, &inMemory{bytes.NewReader(body), body}, vh, stall)
				s := serve(c.method, c.header, streamed{&inMemory{bytes.NewReader(body), body}}, vh, stall)
				if m.Code != s.Code || !bytes.Equal(m.Body.Bytes(), s.Body.Bytes()) {
					t.Errorf("%s: in memory %d, %d bytes; streamed %d, %d bytes", name, m.Code, m.Body.Len(), s.Code, s.Body.Len())
				}
				want := s.Header().Clone()
				if c.atOnce && vh == "" {
					if s.Header().Get("Accept-Ranges") != "bytes" || m.Header().Get("Accept-Ranges") != "" {
						t.Errorf("%s: Accept-Ranges in memory %q, streamed %q; want none, bytes", name, m.Header().Get("Accept-Ranges"), s.Header().Get("Accept-Ranges"))
					}
					delete(want, "Accept-Ranges")
				}
				if !headersEqual(m.Header(), want) {
					t.Errorf("%s: headers\nin memory %v\nstreamed  %v", name, m.Header(), s.Header())
				}
				if _, ok := m.Header()["X-Pkgscope-Version"]; ok != (vh != "") {
					t.Errorf("%s: X-Pkgscope-Version sent %v", name, ok)
				}
			}
		}
	}
}

func headersEqual(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
