package warm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

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
// waits once its body has arrived, and one whose client gives up gets 503
// with Retry-After and gives its body's bytes back; once a slot frees, a
// POST goes through.
func TestLockfileParsesWaitForASlot(t *testing.T) {
	t.Parallel()
	var submitted int
	bodies := DefaultBodyBudget()
	h := NewHandlers(requestsFunc(func() { submitted++ }), lockfile.DefaultLimits(), NewParseSlots(1), bodies)
	e := echo.New()
	h.Register(e)
	post := func(ctx context.Context) *httptest.ResponseRecorder {
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/warm", strings.NewReader(`{"specs":["alpha@1.0.0"]}`))
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	h.parses <- struct{}{} // another parse holds the one slot
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if rec := post(gone); rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" ||
		!strings.Contains(rec.Body.String(), "max-lockfile-parses") {
		t.Errorf("POST with every slot taken: %d %q, want 503 naming max-lockfile-parses", rec.Code, rec.Body)
	}
	if n := bodies.Held(); n != 0 {
		t.Errorf("the refused POST kept %d bytes of the body budget", n)
	}
	<-h.parses
	if rec := post(t.Context()); rec.Code != http.StatusAccepted || submitted != 1 {
		t.Errorf("POST with a free slot: %d %q, want 202", rec.Code, rec.Body)
	}
	if len(h.parses) != 0 || bodies.Held() != 0 {
		t.Errorf("the POST kept its parse slot (%d) or %d bytes of the body budget", len(h.parses), bodies.Held())
	}
}

// TestSlowBodyHoldsNoParseSlot: a POST whose body stops arriving holds
// only the bytes it sent, never a parse slot, so another POST is parsed
// meanwhile. Before, the slot was taken before the body was read: two
// clients sending a byte at a time kept every warm request and project
// registration waiting until read-timeout, and again after.
func TestSlowBodyHoldsNoParseSlot(t *testing.T) {
	t.Parallel()
	bodies := NewBodyBudget(BodyLimits{Total: 64 << 10, MaxBody: 32 << 10})
	h := NewHandlers(requestsFunc(func() {}), lockfile.DefaultLimits(), NewParseSlots(1), bodies)
	e := echo.New()
	h.Register(e)
	slow := &stalledBody{first: []byte(`{"specs":["alpha@1.0.0"`), sent: make(chan struct{}), rest: make(chan struct{})}
	slowDone := make(chan int, 1)
	go func() {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v1/warm", slow)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		slowDone <- rec.Code
	}()
	<-slow.sent // its first bytes are in; the rest does not come
	// Bounded by the test's context only if the fix is missing: the
	// parse slot would be the slow POST's until its body ends.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/warm", strings.NewReader(`{"specs":["beta@1.0.0"]}`))
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Errorf("a POST while another's body stalls: %d %q, want 202", rec.Code, rec.Body)
	}
	if held := bodies.Held(); held != minBodyBuffer {
		t.Errorf("the stalled body holds %d bytes of the budget, want its first buffer, %d", held, minBodyBuffer)
	}
	close(slow.rest)
	if code := <-slowDone; code != http.StatusAccepted {
		t.Errorf("the stalled POST once its body ended: %d, want 202", code)
	}
	if held := bodies.Held(); held != 0 {
		t.Errorf("%d bytes of the budget held after both POSTs", held)
	}
}

// TestBodyBudgetBoundsBodiesInFlight: bodies hold at most the budget; a
// POST that finds it spent waits, and one whose client gives up meanwhile
// is a 503 naming max-lockfile-bytes-in-flight.
func TestBodyBudgetBoundsBodiesInFlight(t *testing.T) {
	t.Parallel()
	bodies := NewBodyBudget(BodyLimits{Total: 8 << 10, MaxBody: 8 << 10})
	h := NewHandlers(requestsFunc(func() {}), lockfile.DefaultLimits(), NewParseSlots(1), bodies)
	e := echo.New()
	h.Register(e)
	// A body of 5 KiB, stalled: it holds a buffer of 8 KiB once its
	// first 4 KiB are in.
	big := `{"specs":["alpha@1.0.0"],"x":"` + strings.Repeat("a", 5<<10)
	slow := &stalledBody{first: []byte(big), sent: make(chan struct{}), rest: make(chan struct{})}
	go func() {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v1/warm", slow)
		e.ServeHTTP(httptest.NewRecorder(), req)
	}()
	<-slow.sent
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	req := httptest.NewRequestWithContext(gone, http.MethodPost, "/v1/warm", strings.NewReader(`{"specs":["beta@1.0.0"]}`))
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "max-lockfile-bytes-in-flight") || rec.Header().Get("Retry-After") == "" {
		t.Errorf("a POST with the body budget spent: %d %q, want 503 naming max-lockfile-bytes-in-flight", rec.Code, rec.Body)
	}
	close(slow.rest)
}

// stalledBody sends first, then blocks until rest is closed (then EOF),
// closing sent once first has been read.
type stalledBody struct {
	first      []byte
	sent, rest chan struct{}
	once       sync.Once
}

func (s *stalledBody) Read(p []byte) (int, error) {
	if len(s.first) > 0 {
		n := copy(p, s.first)
		s.first = s.first[n:]
		return n, nil
	}
	s.once.Do(func() { close(s.sent) })
	<-s.rest
	return copy(p, "]}"), io.EOF
}

type requestsFunc func()

func (f requestsFunc) Submit(context.Context, string, []Want) (string, error) { f(); return "id", nil }
func (f requestsFunc) Progress(context.Context, string) (Progress, error)     { return Progress{}, nil }

// TestBodyChargesUpToItsLength: a body of declared length holds at most
// that much of the budget (its buffer stops growing there), not the next
// power of two; the declared length alone charges nothing.
func TestBodyChargesUpToItsLength(t *testing.T) {
	t.Parallel()
	bodies := NewBodyBudget(BodyLimits{Total: 1 << 20, MaxBody: 1 << 20})
	h := NewHandlers(requestsFunc(func() {}), lockfile.DefaultLimits(), NewParseSlots(1), bodies)
	e := echo.New()
	h.Register(e)
	first := `{"specs":["alpha@1.0.0"],"x":"` + strings.Repeat("a", 33<<10)
	slow := &stalledBody{first: []byte(first), sent: make(chan struct{}), rest: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v1/warm", slow)
		req.ContentLength = int64(len(first) + len("]}"))
		e.ServeHTTP(httptest.NewRecorder(), req)
	}()
	<-slow.sent
	if held, want := bodies.Held(), int64(len(first)+len("]}")+1); held != want {
		t.Errorf("a body of %d bytes holds %d bytes of the budget, want %d (its length and one)", len(first)+2, held, want)
	}
	close(slow.rest)
	<-done
	// Declared, not sent: nothing but the first buffer.
	slow = &stalledBody{first: []byte(`{`), sent: make(chan struct{}), rest: make(chan struct{})}
	done = make(chan struct{})
	go func() {
		defer close(done)
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v1/warm", slow)
		req.ContentLength = 1 << 20
		e.ServeHTTP(httptest.NewRecorder(), req)
	}()
	<-slow.sent
	if held := bodies.Held(); held != minBodyBuffer {
		t.Errorf("a body declaring 1 MiB and sending 1 byte holds %d bytes of the budget, want %d", held, minBodyBuffer)
	}
	close(slow.rest)
	<-done
}

// TestOneCallerCannotHoldTheUploadPool: a caller whose slow uploads hold
// its share of the budget waits for its own, while another caller's small
// POST goes through at once (before: two slow 34 MB uploads of one caller
// made another's 150-byte POST /v1/warm wait 26 s, issue 25 §2). A body
// that cannot get its bytes is a 503 coded upload_pool_full.
func TestOneCallerCannotHoldTheUploadPool(t *testing.T) {
	t.Parallel()
	// Room for 8 KiB + 1 of one caller and 6 KiB more: a's first body
	// holds 8 KiB of its share, its second waits; on a budget without
	// shares the second would take 4 KiB and leave b too little.
	bodies := NewBodyBudget(BodyLimits{Total: 14 << 10, PerCaller: 8<<10 + 1, MaxBody: 8 << 10})
	waits := make(chan string, 4)
	bodies.onWait = func(setting string) { waits <- setting }
	h := NewHandlers(requestsFunc(func() {}), lockfile.DefaultLimits(), NewParseSlots(2), bodies)
	e := echo.New()
	h.Register(e)
	post := func(ctx context.Context, from string, body io.Reader) *httptest.ResponseRecorder {
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/warm", body)
		req.RemoteAddr = from
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	big := `{"specs":["alpha@1.0.0"` + strings.Repeat(" ", 5<<10) // stalledBody ends it with "]}"
	var slow [2]*stalledBody
	done := make(chan int, 2)
	for i := range slow {
		slow[i] = &stalledBody{first: []byte(big), sent: make(chan struct{}), rest: make(chan struct{})}
		go func() { done <- post(t.Context(), "198.51.100.1:1000", slow[i]).Code }()
		if i == 0 {
			<-slow[0].sent // holds 8 KiB of a's share
		}
	}
	select {
	case setting := <-waits:
		if setting != "max-lockfile-bytes-per-caller" {
			t.Fatalf("a's second upload waits for %s, want its own share", setting)
		}
	case <-slow[1].sent:
		t.Fatal("a's second upload was read while its first held a's share: callers have no shares")
	}
	// Bounded by the test's context only if the shares are missing.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if rec := post(ctx, "198.51.100.2:1000", strings.NewReader(`{"specs":["beta@1.0.0"]}`)); rec.Code != http.StatusAccepted {
		t.Errorf("b's small POST while a holds its share: %d %q, want 202", rec.Code, rec.Body)
	}
	// A third upload of a's, whose client gives up, is refused with the
	// share named.
	gone, stop := context.WithCancel(t.Context())
	stop()
	if rec := post(gone, "198.51.100.1:1000", strings.NewReader(`{"specs":["gamma@1.0.0"]}`)); rec.Code != http.StatusServiceUnavailable ||
		rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "max-lockfile-bytes-per-caller") {
		t.Errorf("a's upload past its share: %d %q, want 503 naming max-lockfile-bytes-per-caller, with Retry-After", rec.Code, rec.Body)
	}
	close(slow[0].rest)
	<-slow[1].sent // a's first upload ended: its second goes on
	close(slow[1].rest)
	for range slow {
		if code := <-done; code != http.StatusAccepted {
			t.Errorf("a's upload once its body ended: %d, want 202", code)
		}
	}
	if held := bodies.Held(); held != 0 {
		t.Errorf("%d bytes held after every upload ended", held)
	}
}

// TestSlowUploadIsCut: a body arriving slower than MinRate, once
// uploadGrace has passed, is cut with 408 naming
// min-upload-bytes-per-second and gives its bytes back (before: only
// read-timeout, 30 s, cut it however slow). The clock advances a second
// per read.
func TestSlowUploadIsCut(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	bodies := NewBodyBudget(BodyLimits{Total: 1 << 20, MaxBody: 1 << 20, MinRate: 1 << 10, Clock: func() time.Time { return now }})
	h := NewHandlers(requestsFunc(func() {}), lockfile.DefaultLimits(), NewParseSlots(1), bodies)
	e := echo.New()
	h.Register(e)
	body := tickingReader{r: strings.NewReader(`{"specs":["alpha@1.0.0"]` + strings.Repeat(" ", 100) + `}`), tick: func() { now = now.Add(time.Second) }}
	req := httptest.NewRequest(http.MethodPost, "/v1/warm", &body)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestTimeout || !strings.Contains(rec.Body.String(), "min-upload-bytes-per-second") {
		t.Errorf("a body at 10 bytes a second: %d %q, want 408 naming min-upload-bytes-per-second", rec.Code, rec.Body)
	}
	if held := bodies.Held(); held != 0 {
		t.Errorf("the cut body kept %d bytes", held)
	}
	// At the minimum rate, the same body goes through.
	body = tickingReader{r: strings.NewReader(`{"specs":["alpha@1.0.0"]` + strings.Repeat(" ", 100) + `}`), tick: func() { now = now.Add(time.Millisecond) }}
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/warm", &body))
	if rec.Code != http.StatusAccepted {
		t.Errorf("a body at 10 bytes a millisecond: %d %q, want 202", rec.Code, rec.Body)
	}
}

// tickingReader reads 10 bytes at a time, calling tick before each read.
type tickingReader struct {
	r    io.Reader
	tick func()
}

func (t *tickingReader) Read(p []byte) (int, error) {
	t.tick()
	return t.r.Read(p[:min(len(p), 10)])
}
