package api_test

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/api"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
)

// countingStore is a real embedded store that counts the reads a raw
// read makes of it: file lists and bodies.
type countingStore struct {
	store.Reader
	reads atomic.Int64
}

func (s *countingStore) Files(ctx context.Context, name, version string) ([]store.File, error) {
	s.reads.Add(1)
	return s.Reader.Files(ctx, name, version)
}

func (s *countingStore) Blob(ctx context.Context, h store.Hash) ([]byte, error) {
	s.reads.Add(1)
	return s.Reader.Blob(ctx, h)
}

// exactResolver resolves every spec to 1.0.0, the one version stored.
type exactResolver struct{}

func (exactResolver) Resolve(context.Context, string, npmspec.Spec) (string, error) {
	return "1.0.0", nil
}

type denyKey struct{}

// TestHeldRawReads: a plain read of an exact version's file is answered
// the second time from the answer held (raw-answer-bytes), without
// reading the store, with the same status, headers and bytes; the access
// check still runs for every caller. Range and conditional requests, and
// URLs that do not spell the exact version, take the whole path, and a
// budget of 0 holds nothing.
func TestHeldRawReads(t *testing.T) {
	ctx := context.Background()
	sq, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	body := []byte(strings.Repeat("export const a = 1;\n", 100))
	h := store.HashOf(body)
	if err := sq.PutBlobs(ctx, []store.Blob{{Hash: h, Data: body}}); err != nil {
		t.Fatal(err)
	}
	if err := sq.CommitVersion(ctx, store.NewVersion{Name: "pkg", Version: "1.0.0", Integrity: "sha512-x",
		Files: []store.File{{Path: "index.js", Size: int64(len(body)), Hash: h}}}); err != nil {
		t.Fatal(err)
	}
	// A request carrying X-Deny is from a caller who may not read pkg.
	deny := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if c.Request().Header.Get("X-Deny") != "" {
				c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), denyKey{}, true)))
			}
			return next(c)
		}
	}
	access := func(ctx context.Context, name string) error {
		if ctx.Value(denyKey{}) != nil {
			return &explore.ForbiddenError{Name: name, Why: "the test says so"}
		}
		return nil
	}
	for _, budget := range []int64{1 << 20, 0} {
		st := &countingStore{Reader: sq}
		svc := explore.New(explore.Options{Store: st, Resolver: exactResolver{}, Access: access})
		e := api.New(svc, nil, api.Options{RawAnswerBytes: budget, Middleware: []echo.MiddlewareFunc{deny}})
		do := func(method, url string, header ...string) (*httptest.ResponseRecorder, int64) {
			t.Helper()
			req := httptest.NewRequest(method, url, nil)
			for i := 0; i < len(header); i += 2 {
				req.Header.Set(header[i], header[i+1])
			}
			rec := httptest.NewRecorder()
			before := st.reads.Load()
			e.ServeHTTP(rec, req)
			return rec, st.reads.Load() - before
		}
		const url = "/v1/npm/pkg@1.0.0/index.js"
		first, reads := do(http.MethodGet, url)
		if first.Code != http.StatusOK || first.Body.String() != string(body) || reads == 0 {
			t.Fatalf("budget %d: first GET: %d, %d bytes, %d store reads", budget, first.Code, first.Body.Len(), reads)
		}
		held := budget > 0
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			rec, reads := do(method, url)
			if (reads == 0) != held {
				t.Errorf("budget %d: %s again read the store %d times", budget, method, reads)
			}
			want := string(body)
			if method == http.MethodHead {
				want = ""
			}
			if rec.Code != http.StatusOK || rec.Body.String() != want {
				t.Errorf("budget %d: %s again: %d, %d bytes", budget, method, rec.Code, rec.Body.Len())
			}
			got, orig := rec.Header().Clone(), first.Header().Clone()
			for _, hdr := range []http.Header{got, orig} {
				hdr.Del("X-Request-Id") // each request's own
			}
			if !maps.EqualFunc(got, orig, slices.Equal[[]string]) {
				t.Errorf("budget %d: %s again: headers\n%v\nfirst GET's\n%v", budget, method, got, orig)
			}
		}
		// The caller's access is checked before the held answer is sent.
		if rec, _ := do(http.MethodGet, url, "X-Deny", "1"); rec.Code != http.StatusForbidden || strings.Contains(rec.Body.String(), "export") {
			t.Errorf("budget %d: a caller who may not read pkg: %d %s, want 403", budget, rec.Code, rec.Body)
		}
		// Range and validators are ServeContent's, from the store.
		if rec, reads := do(http.MethodGet, url, "Range", "bytes=7-11"); rec.Code != http.StatusPartialContent || rec.Body.String() != string(body[7:12]) || reads == 0 {
			t.Errorf("budget %d: Range: %d %q, %d store reads; want 206 %q from the store", budget, rec.Code, rec.Body, reads, body[7:12])
		}
		if rec, _ := do(http.MethodGet, url, "If-None-Match", first.Header().Get("Etag")); rec.Code != http.StatusNotModified {
			t.Errorf("budget %d: If-None-Match with the ETag: %d, want 304", budget, rec.Code)
		}
		// A URL that does not spell the version the answer is of says
		// which it is, every time, and is never held.
		for range 2 {
			rec, reads := do(http.MethodGet, "/v1/npm/pkg@v1.0.0/index.js")
			if rec.Code != http.StatusOK || rec.Header().Get("X-Pkgscope-Version") != "1.0.0" || reads == 0 {
				t.Errorf("budget %d: GET pkg@v1.0.0: %d, version %q, %d store reads", budget, rec.Code, rec.Header().Get("X-Pkgscope-Version"), reads)
			}
		}
	}
}
