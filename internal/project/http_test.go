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

// TestPostProjectTakesTheSlotBeforeTheBody: POST /v1/projects waits for a
// parse slot (max-lockfile-parses, shared with POST /v1/warm) before it
// reads its body, so uploads queued behind busy slots hold no lockfile in
// memory; one whose caller gives up meanwhile is a 503 naming the setting,
// its body never read. With a free slot it registers and gives it back.
func TestPostProjectTakesTheSlotBeforeTheBody(t *testing.T) {
	st, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	slots := warm.NewParseSlots(1)
	e := echo.New()
	project.NewHandlers(project.New(st, noWarm{}, nil, project.DefaultLimits(), slots)).Register(e)
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
	if body.read {
		t.Errorf("POST read its body before it had a parse slot")
	}
	slots.Release()

	rec, body = post(t.Context())
	if rec.Code != http.StatusCreated || !body.read {
		t.Fatalf("POST with a free slot: %d %q, want 201", rec.Code, rec.Body)
	}
	if len(slots) != 0 {
		t.Errorf("the registration kept its parse slot")
	}
	// Registered already: answered from the store, the slot given back too.
	if rec, _ = post(t.Context()); rec.Code != http.StatusOK || len(slots) != 0 {
		t.Errorf("POST again: %d %q, slots held %d; want 200 and none held", rec.Code, rec.Body, len(slots))
	}
}
