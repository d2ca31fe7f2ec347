package reliability

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/app"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
)

func TestMain(m *testing.M) {
	// The parallel tests here spend most of their time waiting — on a
	// process's start or kill, River's leadership and rescuer, the store's
	// QueryTimeout — so run up to parallelTests of them at once rather
	// than GOMAXPROCS (2 on the CI machine), unless -parallel was given.
	// Tests that measure this process's heap stay sequential: parallel
	// tests start only once every sequential test has finished.
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(max(parallelTests, runtime.GOMAXPROCS(0))))
	}
	code := m.Run()
	cleanupBinaries()
	if code == 0 {
		// chroma's regexp2 (the web page's highlighting) keeps one
		// process-wide clock goroutine for its match timeouts; it sleeps
		// until the last deadline has passed, then ends.
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/dlclark/regexp2/v2.runClock")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// parallelTests is how many parallel tests run at once by default: the
// SIGKILL, Postgres-fault, stalled-client and index-cost tests.
const parallelTests = 4

// answerBound is the client deadline every request of this suite runs
// under: an answer (right, or a clear error) must come before it. It is a
// bound on hanging, enforced by the client's context, not a latency
// measurement; a warm answer takes milliseconds.
const answerBound = 5 * time.Second

// mirror is a mirror wired in-process (app.New) on an httptest server, in
// front of a fake registry, so a test can also look at its store.
type mirror struct {
	t   testing.TB
	reg *fakeregistry.Registry
	app *app.App
	url string
	hc  *http.Client
	log *syncBuffer
}

// npmEnv points npm's configuration at registryURL and nothing else: no
// user or global .npmrc is read.
func npmEnv(t testing.TB, registryURL string) map[string]string {
	t.Helper()
	return fakeregistry.IsolatedEnv(t, registryURL)
}

// baseConfig is the configuration every in-process mirror starts from:
// the embedded store in a temporary directory, nothing that reaches the
// network besides the fake registry.
func baseConfig(t testing.TB) config.Config {
	cfg := config.Default()
	cfg.DataDir, cfg.ProjectDir = t.TempDir(), t.TempDir()
	cfg.MDNBaseURL = ""
	return cfg
}

// newMirror wires a mirror against a new fake registry; tweak adjusts the
// configuration first.
func newMirror(t testing.TB, tweak ...func(*config.Config)) *mirror {
	t.Helper()
	return newMirrorFor(t, fakeregistry.New(t), tweak...)
}

func newMirrorFor(t testing.TB, reg *fakeregistry.Registry, tweak ...func(*config.Config)) *mirror {
	t.Helper()
	cfg := baseConfig(t)
	for _, f := range tweak {
		f(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	env := npmEnv(t, reg.URL())
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := app.New(t.Context(), cfg, log, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	hc := &http.Client{}
	t.Cleanup(func() {
		hc.CloseIdleConnections()
		srv.Close()
		a.Close()
		if t.Failed() {
			t.Logf("mirror log:\n%s", logs)
		}
	})
	return &mirror{t: t, reg: reg, app: a, url: srv.URL, hc: hc, log: logs}
}

// answer is one HTTP answer.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error // transport error, or the client deadline
}

// errorBody is the API's one error shape.
type errorBody struct {
	Error struct{ Code, Message string } `json:"error"`
}

func (a answer) code() string {
	var e errorBody
	json.Unmarshal(a.body, &e)
	return e.Error.Code
}

func (a answer) String() string {
	if a.err != nil {
		return "error: " + a.err.Error()
	}
	b := a.body
	if len(b) > 300 {
		b = append(b[:300:300], "…"...)
	}
	return fmt.Sprintf("%d %s", a.status, b)
}

// do sends one request under a client deadline of bound.
func do(ctx context.Context, hc *http.Client, method, url, body string, bound time.Duration) answer {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return answer{err: err}
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

// explore posts body to /v1/explore within answerBound.
func (m *mirror) explore(body string) answer {
	return do(m.t.Context(), m.hc, http.MethodPost, m.url+"/v1/explore", body, answerBound)
}

// get fetches path within answerBound.
func (m *mirror) get(path string) answer {
	return do(m.t.Context(), m.hc, http.MethodGet, m.url+path, "", answerBound)
}

// syncBuffer is a log written by the mirror and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// stored returns once name@version, which the mirror has answered for, is
// committed to its store: an answer may come from the verified download
// before the commit (docs/ARCHITECTURE.md "The miss path"). EnsureIndex
// waits for the commit before it builds the full index.
func (m *mirror) stored(t *testing.T, name, version string) {
	t.Helper()
	if err := m.app.EnsureIndex(t.Context(), name, version); err != nil {
		t.Fatalf("waiting for %s@%s to be stored: %v", name, version, err)
	}
}
