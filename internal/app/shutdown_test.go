package app

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// TestCloseEndsFillsInFlight: a fill a request started, still downloading
// when the app closes, is cancelled once the shutdown grace passed, before
// Close closes the store and the warm queue it writes to: the request is
// answered 503 saying the mirror is shutting down, its warm job is in the
// queue, nothing logs an error about a closed queue or store, and no
// goroutine outlives the test. Not parallel: goleak sees every goroutine.
func TestCloseEndsFillsInFlight(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, kind := range []storeKind{embedded, pg} {
		t.Run(string(kind), func(t *testing.T) {
			cfg := config.Default()
			cfg.DataDir, cfg.ProjectDir = t.TempDir(), t.TempDir()
			if kind == pg {
				cfg.DatabaseURL = pgtest.URL(t)
			}
			// The held download never ends by itself: Close waits this
			// long for it, then cancels it.
			cfg.ShutdownTimeout = time.Millisecond
			// Were Close to leave the fill running, it would end here.
			cfg.FillTimeout = 10 * time.Second
			logs := &syncBuffer{}
			a, answered := heldFill(t, cfg, slog.New(slog.NewJSONHandler(logs, nil)))
			if err := a.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			// Answered once the fill ended: at once, as Close cancelled
			// it. (Before, the fill went on until fill-timeout, then
			// failed into the closed store and queue.)
			if got := <-answered; got.status != http.StatusServiceUnavailable || !strings.Contains(got.body, "shutting down") {
				t.Errorf("the request whose fill was cancelled: %d %s, want 503 saying the mirror is shutting down", got.status, got.body)
			}
			// The version is still wanted: its warm job went into the
			// queue while it was open, for the next start.
			st, err := openStore(t.Context(), cfg, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			q, err := warm.Open(t.Context(), st, warm.Deps{}, warm.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			if n, err := q.Depth(t.Context()); n != 1 || err != nil {
				t.Errorf("warm jobs queued after Close: %d, %v; want the cancelled fill's", n, err)
			}
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var r struct{ Level, Msg string }
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("log line %q: %v", line, err)
				}
				// The 503 is logged as a failed request, once.
				if r.Level == "ERROR" && r.Msg != "request failed" {
					t.Errorf("logged: %s", line)
				}
			}
		})
	}
}

// TestShutdownIsOneDeadline: Close keeps the deadline Serve set when the
// shutdown began (closeBy) instead of giving the fills a whole
// shutdown-timeout of their own after the requests took theirs, which
// let a shutdown take twice the setting, past compose's grace before
// SIGKILL. Here the setting is an hour and the deadline already passed:
// the held fill is cancelled at once.
func TestShutdownIsOneDeadline(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir, cfg.ProjectDir = t.TempDir(), t.TempDir()
	cfg.ShutdownTimeout = time.Hour
	a, answered := heldFill(t, cfg, slog.New(slog.DiscardHandler))
	a.closeBy = time.Now() // what Serve sets; the requests spent it all
	closed := make(chan error, 1)
	go func() { closed <- a.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(time.Minute): // a liveness bound, not a speed: without closeBy, Close waits the hour
		t.Fatal("Close waited for the fill past the shutdown's deadline")
	}
	if got := <-answered; got.status != http.StatusServiceUnavailable {
		t.Errorf("the request whose fill was cancelled: %d %s, want 503", got.status, got.body)
	}
}

// answer is the status and body a request got.
type answer struct {
	status int
	body   string
}

// heldFill starts a mirror with cfg whose registry holds slow@1.0.0's tarball download until the test ends,
// asks it for a file of that version, and returns once the fill is
// downloading: the app, and where the request's answer will come.
func heldFill(t *testing.T, cfg config.Config, log *slog.Logger) (*App, <-chan answer) {
	t.Helper()
	reg := fakeregistry.New(t)
	reg.Publish("slow", "1.0.0", tarballtest.Package(t, map[string]string{"index.js": "module.exports = 1;\n"}))
	arrived, release := reg.HoldTarballs("slow")
	t.Cleanup(release)
	env := reg.Env()
	a, err := New(t.Context(), cfg, log, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	answered := make(chan answer, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL + "/v1/npm/slow@1.0.0/index.js")
		if err != nil {
			answered <- answer{body: err.Error()}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answered <- answer{resp.StatusCode, string(b)}
	}()
	<-arrived // the fill is downloading
	return a, answered
}
