package warm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/lockfile"
)

// TestInvalidWantRefusesTheWholeRequest: a NUL byte, invalid UTF-8 or a
// name that is not a package's, among valid wants, fails Submit with
// ErrInvalidWant and leaves no request, item or job behind. On Postgres a
// NUL used to fail the items' insert with a 500 after the valid wants'
// jobs were queued.
func TestInvalidWantRefusesTheWholeRequest(t *testing.T) {
	for _, kind := range backends {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			w := newWorker(t, fakeregistry.New(t), newLocation(t, kind).open(t), testConfig(), nil)
			for name, bad := range map[string]Want{
				"NUL in a name":     {Name: "a\x00b", Spec: "1.0.0"},
				"NUL in a spec":     {Name: "alpha", Spec: "1.0.0\x00"},
				"NUL in a skip":     {Name: "gitdep", Spec: "git://h/r\x00", Skip: "git: git dependency"},
				"invalid UTF-8":     {Name: "alpha", Spec: "\xff"},
				"not a name":        {Name: "Bad Name", Spec: "1.0.0"},
				"a dot-dot name":    {Name: "@s/../x", Spec: "1.0.0"},
				"an upper scope":    {Name: "@PRIV/x", Spec: "1.0.0"},
				"an empty name":     {Name: "", Spec: "1.0.0"},
				"a name with space": {Name: " alpha", Spec: "1.0.0"},
			} {
				wants := []Want{{Name: "alpha", Spec: "1.0.0"}, {Name: "beta", Spec: "^2"}, bad}
				if _, err := w.q.Submit(t.Context(), "test", wants); !errors.Is(err, ErrInvalidWant) || !strings.Contains(err.Error(), "package 3 of 3") {
					t.Errorf("%s: Submit = %v, want ErrInvalidWant naming package 3", name, err)
				}
			}
			for _, table := range []string{"warm_requests", "warm_items", "river_job"} {
				var n int
				if err := w.q.db.queryRow(t.Context(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != 0 {
					t.Errorf("%d rows left in %s after refused requests", n, table)
				}
			}
		})
	}
}

// TestLockfileParsesWaitForASlot: with every parse slot taken, a POST
// waits, and one whose client gives up gets 503 with Retry-After without
// its body being read; once a slot frees, a POST goes through.
func TestLockfileParsesWaitForASlot(t *testing.T) {
	t.Parallel()
	var submitted int
	h := NewHandlers(requestsFunc(func() { submitted++ }), lockfile.DefaultLimits(), NewParseSlots(1))
	e := echo.New()
	h.Register(e)
	post := func(ctx context.Context) *httptest.ResponseRecorder {
		body := &readCounter{r: strings.NewReader(`{"specs":["alpha@1.0.0"]}`)}
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/warm", body)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code == http.StatusServiceUnavailable && body.n != 0 {
			t.Errorf("a POST waiting for a slot read %d bytes of its body", body.n)
		}
		return rec
	}
	h.parses <- struct{}{} // another parse holds the one slot
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if rec := post(gone); rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" ||
		!strings.Contains(rec.Body.String(), "max-lockfile-parses") {
		t.Errorf("POST with every slot taken: %d %q, want 503 naming max-lockfile-parses", rec.Code, rec.Body)
	}
	<-h.parses
	if rec := post(t.Context()); rec.Code != http.StatusAccepted || submitted != 1 {
		t.Errorf("POST with a free slot: %d %q, want 202", rec.Code, rec.Body)
	}
	if len(h.parses) != 0 {
		t.Error("the POST kept its parse slot")
	}
}

type requestsFunc func()

func (f requestsFunc) Submit(context.Context, string, []Want) (string, error) { f(); return "id", nil }
func (f requestsFunc) Progress(context.Context, string) (Progress, error)     { return Progress{}, nil }

type readCounter struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (c *readCounter) Read(p []byte) (int, error) { n, err := c.r.Read(p); c.n += n; return n, err }
