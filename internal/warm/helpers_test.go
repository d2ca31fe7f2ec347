package warm

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/resolve"
	"github.com/pkgscope/pkgscope/internal/search"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/postgres"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// backend names a store kind; each test runs on both.
type backend string

const (
	// pgBackend is short because the test name becomes the schema name,
	// which River's notification channels cap at 46 bytes.
	pgBackend     backend = "pg"
	sqliteBackend backend = "sqlite"
)

var backends = []backend{sqliteBackend, pgBackend}

// location is where a test's store lives, so a second "process" can open
// the same database.
type location struct {
	kind backend
	url  string // Postgres
	dir  string // SQLite
}

func newLocation(t *testing.T, kind backend) location {
	t.Helper()
	if kind == pgBackend {
		return location{kind: kind, url: pgtest.URL(t)}
	}
	return location{kind: kind, dir: t.TempDir()}
}

// open opens a store at loc, closed when the test ends.
func (loc location) open(t *testing.T) store.Store {
	t.Helper()
	st, _ := loc.openClosable(t)
	return st
}

// openClosable is open, with a function that closes the store early (as
// a killed process's connections close); it is not closed again.
func (loc location) openClosable(t *testing.T) (store.Store, func()) {
	t.Helper()
	var st store.Store
	var err error
	if loc.kind == pgBackend {
		st, err = postgres.Open(t.Context(), loc.url, postgres.Options{})
	} else {
		st, err = sqlite.Open(t.Context(), loc.dir, sqlite.Options{})
	}
	if err != nil {
		t.Fatalf("opening the %s store: %v", loc.kind, err)
	}
	var once sync.Once
	closeFn := func() { once.Do(func() { st.Close() }) }
	t.Cleanup(closeFn)
	return st, closeFn
}

// testConfig is DefaultConfig with delays short enough for tests.
func testConfig() Config {
	c := DefaultConfig()
	c.Workers = 4
	c.MaxAttempts = 3
	c.RetryBase = 5 * time.Millisecond
	c.RetryMax = 20 * time.Millisecond
	c.PollInterval = 50 * time.Millisecond
	return c
}

// worker is one "process": its own upstream client, fill chain (so its own
// single-flight) and River client, on a shared store.
type worker struct {
	t  *testing.T
	st store.Store
	up *upstream.Client
	q  *Queue
}

// newWorker wires a worker against reg on st. rt, when not nil, wraps the
// HTTP transport (tests use it to see requests arrive).
func newWorker(t *testing.T, reg *fakeregistry.Registry, st store.Store, cfg Config, rt func(http.RoundTripper) http.RoundTripper) *worker {
	t.Helper()
	env := reg.Env()
	npm, err := npmrc.Load(t.TempDir(), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var transport http.RoundTripper = http.DefaultTransport.(*http.Transport).Clone()
	if rt != nil {
		transport = rt(transport)
	}
	up := upstream.New(npm, upstream.Config{}, &http.Client{Transport: transport})
	reg2 := TimeRegistry(up)
	// The chain the indexer builds: indexing included, in memory here.
	searcher, err := search.New(st.(search.Store), search.DefaultOptions(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { searcher.Close() })
	ix := TimeIndexer(searcher)
	f := fill.New(TimeStore(st), reg2, fill.Options{Timeout: time.Minute, Ingest: ingest.DefaultLimits(), Index: ix})
	q, err := open(t.Context(), st, Deps{Store: st, Fill: f, Resolve: resolve.New(reg2, st), Index: ix, Logger: testLogger(t)}, cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return &worker{t: t, st: st, up: up, q: q}
}

// start starts the worker's queue and stops it when the test ends.
func (w *worker) start() {
	w.t.Helper()
	if err := w.q.Start(w.t.Context()); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := w.q.Stop(ctx); err != nil {
			w.t.Errorf("stopping the queue: %v", err)
		}
	})
}

// submit submits specs and waits for the request to finish.
func (w *worker) warm(wants ...Want) Progress {
	w.t.Helper()
	id, err := w.q.Submit(w.t.Context(), "test", wants)
	if err != nil {
		w.t.Fatal(err)
	}
	return w.wait(id)
}

func (w *worker) wait(id string) Progress {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.t.Context(), 5*time.Minute) // a hang guard, not a deadline
	defer cancel()
	p, err := w.q.Wait(ctx, id, nil)
	if err != nil {
		w.t.Fatalf("waiting for request %s: %v (progress %+v)", id, err, p)
	}
	return p
}

// specs turns "name@spec" strings into wants.
func specs(args ...string) []Want {
	var out []Want
	for _, a := range args {
		out = append(out, ParseSpecArg(a))
	}
	return out
}

// publish publishes name@version with a small package.json and index.js.
func publish(t *testing.T, reg *fakeregistry.Registry, name, version string) {
	t.Helper()
	reg.Publish(name, version, tarballtest.Package(t, map[string]string{
		"package.json": `{"name":"` + name + `","version":"` + version + `"}`,
		"index.js":     "module.exports = " + `"` + name + "@" + version + `";` + "\n",
	}))
}

// item finds the item for name in p.
func item(t *testing.T, p Progress, name string) Item {
	t.Helper()
	for _, it := range p.Items {
		if it.Name == name {
			return it
		}
	}
	t.Fatalf("no item %q in %+v", name, p.Items)
	return Item{}
}

// testLogger logs at warn and above to the test log, so River's errors
// show next to the failing test.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
