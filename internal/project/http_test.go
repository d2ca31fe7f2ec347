package project_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// watchedBody is a request body that records whether it was read.
type watchedBody struct {
	*strings.Reader
	read bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.read = true
	return b.Reader.Read(p)
}

func (b *watchedBody) Close() error { return nil }

// TestPostProjectReadsItsBodyBeforeTheSlot: POST /v1/projects reads its
// body within the lockfile body budget (max-lockfile-bytes-in-flight,
// shared with POST /v1/warm) and only then waits for a parse slot
// (max-lockfile-parses): a body sent slowly holds no slot. One whose
// caller gives up while the slots are busy is a 503 naming the setting,
// its body's bytes given back. With a free slot it registers and gives
// back both.
func TestPostProjectReadsItsBodyBeforeTheSlot(t *testing.T) {
	st, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	slots := warm.NewParseSlots(1)
	bodies := warm.DefaultBodyBudget()
	e := echo.New()
	project.NewHandlers(project.New(st, noWarm{}, nil, project.DefaultLimits(), slots), bodies).Register(e)
	lock := `{"lockfile":{"name":"package-lock.json","content":"{\"lockfileVersion\": 3, \"packages\": {\"\": {}, \"node_modules/a\": {\"version\": \"1.0.0\"}}}"}}`
	post := func(ctx context.Context) (*httptest.ResponseRecorder, *watchedBody) {
		body := &watchedBody{Reader: strings.NewReader(lock)}
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/projects", body)
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec, body
	}

	if err := slots.Acquire(t.Context()); err != nil { // a warm POST's parse
		t.Fatal(err)
	}
	gaveUp, cancel := context.WithCancel(t.Context())
	cancel() // the caller left while every slot was busy
	rec, body := post(gaveUp)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "max-lockfile-parses") || rec.Header().Get("Retry-After") == "" {
		t.Errorf("POST with every parse slot taken: %d %q, want 503 naming max-lockfile-parses with Retry-After", rec.Code, rec.Body)
	}
	if !body.read || bodies.Held() != 0 {
		t.Errorf("POST waiting for a slot: body read %v, %d bytes of the budget held; want read, none held", body.read, bodies.Held())
	}
	slots.Release()

	rec, body = post(t.Context())
	if rec.Code != http.StatusCreated || !body.read {
		t.Fatalf("POST with a free slot: %d %q, want 201", rec.Code, rec.Body)
	}
	if len(slots) != 0 || bodies.Held() != 0 {
		t.Errorf("the registration kept its parse slot (%d) or %d bytes of the body budget", len(slots), bodies.Held())
	}
	// Registered already: answered from the store, the slot given back too.
	if rec, _ = post(t.Context()); rec.Code != http.StatusOK || len(slots) != 0 {
		t.Errorf("POST again: %d %q, slots held %d; want 200 and none held", rec.Code, rec.Body, len(slots))
	}
}
