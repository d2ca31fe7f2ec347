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
	"github.com/pkgscope/pkgscope/internal/auth"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// countingStore is a real embedded store that counts the reads a raw
// read makes of it: file lists, bodies and streams.
type countingStore struct {
	*sqlite.Store
	reads atomic.Int64
}

func (s *countingStore) Files(ctx context.Context, name, version string) ([]store.File, error) {
	s.reads.Add(1)
	return s.Store.Files(ctx, name, version)
}

func (s *countingStore) Blob(ctx context.Context, h store.Hash) ([]byte, error) {
	s.reads.Add(1)
	return s.Store.Blob(ctx, h)
}

func (s *countingStore) OpenBlob(ctx context.Context, h store.Hash) (store.BlobStream, error) {
	s.reads.Add(1)
	return s.Store.OpenBlob(ctx, h)
}

// TestHeldRawReads: a plain read of an exact version's file is answered
// the second time from the answer held (raw-answer-bytes), without
// reading the store, with the same status, headers and bytes, whichever
// way the URL escapes a scoped name; each caller's access is checked for
// the package the answer is of, and Cache-Control says "private" to a
// caller with a token. Range and conditional requests, URLs that do not
// spell the version or the file's own path, and bodies streamed from the
// store take the whole path every time, and a budget of 0 holds nothing.
func TestHeldRawReads(t *testing.T) {
	ctx := context.Background()
	sq, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	const whole = 2048 // bodies over it are streamed
	small := strings.Repeat("export const a = 1;\n", 100)
	large := strings.Repeat("export const b = 2;\n", 200)
	other := "module.exports = 3;\n"
	for name, files := range map[string]map[string]string{
		"@s/pkg": {"index.js": small, "large.js": large},
		"lib":    {"index.js": small, "other.js": other},
	} {
		if _, err := ingest.Ingest(ctx, sq, name, "1.0.0", "sha512-x", tarballtest.Package(t, files), ingest.DefaultLimits()); err != nil {
			t.Fatal(err)
		}
	}
	// "all" may read every package, "scoped" only @s's: the app's
	// scopeAccess without private registries.
	tokens, err := auth.ParseList("tok-all,tok-scoped:@s")
	if err != nil {
		t.Fatal(err)
	}
	set, err := auth.NewSet(tokens)
	if err != nil {
		t.Fatal(err)
	}
	access := func(ctx context.Context, name string) error {
		if id, ok := auth.IdentityFrom(ctx); ok && !id.Allows(name) {
			return &explore.ForbiddenError{Name: name, Why: "not in its scopes"}
		}
		return nil
	}
	for _, c := range []struct {
		name   string
		tokens bool
		budget int64
	}{
		{"tokens", true, 1 << 20},
		{"no tokens", false, 1 << 20},
		{"budget 0", false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &countingStore{Store: sq}
			svc := explore.New(explore.Options{Store: st, Access: access,
				Streams: st, WholeBodyBytes: whole, MaxBodyBytesInFlight: 1 << 20})
			var mw []echo.MiddlewareFunc
			token, wantCC := "", "public, max-age=31536000, immutable"
			if c.tokens {
				mw = append(mw, auth.Middleware(set, auth.Options{}))
				token, wantCC = "tok-all", "private, max-age=31536000, immutable"
			}
			e := api.New(svc, nil, api.Options{RawAnswerBytes: c.budget, Middleware: mw})
			// do answers method url for token with the headers given in
			// pairs, and counts the store reads it made.
			do := func(method, url, token string, header ...string) (*httptest.ResponseRecorder, int64) {
				t.Helper()
				req := httptest.NewRequest(method, url, nil)
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				for i := 0; i < len(header); i += 2 {
					req.Header.Set(header[i], header[i+1])
				}
				rec := httptest.NewRecorder()
				before := st.reads.Load()
				e.ServeHTTP(rec, req)
				return rec, st.reads.Load() - before
			}
			held := c.budget > 0
			const url = "/v1/npm/@s/pkg@1.0.0/index.js"
			first, reads := do(http.MethodGet, url, token)
			if first.Code != http.StatusOK || first.Body.String() != small || reads == 0 {
				t.Fatalf("first GET: %d, %d bytes, %d store reads", first.Code, first.Body.Len(), reads)
			}
			if cc := first.Header().Get("Cache-Control"); cc != wantCC {
				t.Errorf("first GET: Cache-Control %q, want %q", cc, wantCC)
			}
			// Again, as GET and HEAD, and with the scope's slash escaped:
			// the same answer, from what is held.
			for _, again := range []struct{ method, url string }{
				{http.MethodGet, url}, {http.MethodHead, url}, {http.MethodGet, "/v1/npm/@s%2fpkg@1.0.0/index.js"},
			} {
				rec, reads := do(again.method, again.url, token)
				if (reads == 0) != held {
					t.Errorf("%s %s again read the store %d times", again.method, again.url, reads)
				}
				want := small
				if again.method == http.MethodHead {
					want = ""
				}
				if rec.Code != http.StatusOK || rec.Body.String() != want {
					t.Errorf("%s %s again: %d, %d bytes", again.method, again.url, rec.Code, rec.Body.Len())
				}
				got, orig := rec.Header().Clone(), first.Header().Clone()
				for _, h := range []http.Header{got, orig} {
					h.Del("X-Request-Id") // each request's own
				}
				if !maps.EqualFunc(got, orig, slices.Equal[[]string]) {
					t.Errorf("%s %s again: headers\n%v\nfirst GET's\n%v", again.method, again.url, got, orig)
				}
			}
			if c.tokens {
				// Each caller's access is checked, for the package the
				// held answer is of: the scoped token reads @s/pkg's held
				// answer and is refused lib's.
				for range 2 {
					if rec, _ := do(http.MethodGet, "/v1/npm/lib@1.0.0/index.js", "tok-all"); rec.Code != http.StatusOK {
						t.Fatalf("GET lib@1.0.0 with tok-all: %d %s", rec.Code, rec.Body)
					}
				}
				if rec, _ := do(http.MethodGet, "/v1/npm/lib@1.0.0/index.js", "tok-scoped"); rec.Code != http.StatusForbidden || strings.Contains(rec.Body.String(), "export") {
					t.Errorf("GET lib@1.0.0 with a token scoped to @s: %d %s, want 403", rec.Code, rec.Body)
				}
				if rec, reads := do(http.MethodGet, url, "tok-scoped"); rec.Code != http.StatusOK || rec.Body.String() != small || reads != 0 {
					t.Errorf("GET %s with a token scoped to @s: %d, %d bytes, %d store reads; want the held answer", url, rec.Code, rec.Body.Len(), reads)
				}
			}
			// A HEAD's answer, held, answers the GET after it.
			if rec, reads := do(http.MethodHead, "/v1/npm/lib@1.0.0/other.js", token); rec.Code != http.StatusOK || reads == 0 {
				t.Errorf("first HEAD of other.js: %d, %d store reads", rec.Code, reads)
			}
			if rec, reads := do(http.MethodGet, "/v1/npm/lib@1.0.0/other.js", token); rec.Code != http.StatusOK || rec.Body.String() != other || (reads == 0) != held {
				t.Errorf("GET of other.js after its HEAD: %d %q, %d store reads", rec.Code, rec.Body, reads)
			}
			// Taken whole every time: Range and validators
			// (ServeContent's), a URL that spells the version otherwise
			// (it says which version it answered), a path that is not
			// the file's own, a body streamed from the store.
			for _, whole := range []struct {
				what, url string
				header    []string
				status    int
				body      string
				version   string
			}{
				{"Range", url, []string{"Range", "bytes=7-11"}, http.StatusPartialContent, small[7:12], ""},
				{"If-None-Match", url, []string{"If-None-Match", first.Header().Get("Etag")}, http.StatusNotModified, "", ""},
				{"v1.0.0", "/v1/npm/@s/pkg@v1.0.0/index.js", nil, http.StatusOK, small, "1.0.0"},
				{"./index.js", "/v1/npm/@s/pkg@1.0.0/./index.js", nil, http.StatusOK, small, ""},
				{"streamed", "/v1/npm/@s/pkg@1.0.0/large.js", nil, http.StatusOK, large, ""},
			} {
				for range 2 {
					rec, reads := do(http.MethodGet, whole.url, token, whole.header...)
					if rec.Code != whole.status || rec.Body.String() != whole.body || reads == 0 {
						t.Errorf("%s: %d, %d bytes, %d store reads; want %d, %d bytes, from the store", whole.what, rec.Code, rec.Body.Len(), reads, whole.status, len(whole.body))
					}
					if v := rec.Header().Get("X-Pkgscope-Version"); v != whole.version {
						t.Errorf("%s: X-Pkgscope-Version %q, want %q", whole.what, v, whole.version)
					}
				}
			}
		})
	}
}
