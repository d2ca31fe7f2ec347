package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/popular"
	"github.com/pkgscope/pkgscope/internal/redistest"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/version"
	"github.com/pkgscope/pkgscope/internal/warm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// cli runs indexer commands against a fake registry and one store.
type cli struct {
	t    *testing.T
	reg  *fakeregistry.Registry
	env  map[string]string
	data string
}

func newCLI(t *testing.T, postgres bool) *cli {
	t.Helper()
	reg := fakeregistry.New(t)
	c := &cli{t: t, reg: reg, data: t.TempDir(), env: reg.Env()}
	maps.Copy(c.env, map[string]string{
		"PKGSCOPE_PROJECT_DIR": t.TempDir(),
		// Short delays, so a failing package is reported in milliseconds.
		"PKGSCOPE_WARM_RETRY_BASE":    "5ms",
		"PKGSCOPE_WARM_RETRY_MAX":     "20ms",
		"PKGSCOPE_WARM_POLL_INTERVAL": "20ms",
		"PKGSCOPE_WARM_MAX_ATTEMPTS":  "2",
	})
	if postgres {
		c.env["PKGSCOPE_DATABASE_URL"] = pgtest.URL(t)
	}
	return c
}

func (c *cli) publish(name, version string) {
	c.reg.Publish(name, version, tarballtest.Package(c.t, map[string]string{
		"package.json": `{"name":"` + name + `","version":"` + version + `"}`,
		"index.js":     "module.exports = 1;\n",
	}))
}

// run runs the indexer with args (and --data-dir) and returns its exit
// code and output.
func (c *cli) run(args ...string) (int, string) {
	c.t.Helper()
	out, err := os.CreateTemp(c.t.TempDir(), "stdout")
	if err != nil {
		c.t.Fatal(err)
	}
	defer out.Close()
	args = append(args, "--data-dir", c.data)
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	code := run(c.t.Context(), args, func(k string) string { return c.env[k] }, log, out, out)
	b, err := os.ReadFile(out.Name())
	if err != nil {
		c.t.Fatal(err)
	}
	return code, string(b)
}

func TestWarmCommand(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pg, redis bool
	}{{"sqlite", false, false}, {"pg", true, false}, {"pg+redis", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCLI(t, tc.pg)
			if tc.redis {
				// The mirror's fill lock joins the chain.
				c.env["PKGSCOPE_REDIS_URL"] = redistest.ServerURL()
				c.env["PKGSCOPE_REDIS_PREFIX"] = redistest.Prefix(t) // fails the test when Redis is down
			}
			c.publish("alpha", "1.0.0")
			c.publish("alpha", "1.2.0")
			c.publish("@s/beta", "2.0.0")
			// Mirror flags (--max-files) and the indexer's (--workers)
			// mix with the specs.
			code, out := c.run("warm", "alpha@^1", "--workers", "2", "@s/beta", "--max-files=1000", "--no-progress")
			if code != exitOK || !strings.Contains(out, "warmed              2") {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			for _, want := range []string{"warm 2/2", "job time (2 fetched here", "download"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			code, out = c.run("warm", "alpha@1.2.0", "missing@1.0.0", "--no-progress")
			if code != exitFailed || !strings.Contains(out, "already present     1") || !strings.Contains(out, "missing@1.0.0: ") {
				t.Errorf("a failed package: exit %d, want %d, with the present one and the failure listed:\n%s", code, exitFailed, out)
			}
			if n := c.reg.TarballDownloads("alpha", "1.2.0"); n != 1 {
				t.Errorf("alpha@1.2.0 downloaded %d times, want 1", n)
			}
		})
	}
}

func TestWarmLockfileCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t, false)
	dir := t.TempDir()
	lock := `{"name":"app","lockfileVersion":3,"requires":true,"packages":{
		"":{"name":"app","dependencies":{"ms":"2.1.3","local":"file:../local"}},
		"node_modules/ms":{"version":"2.1.3","resolved":"x","integrity":"sha512-x"},
		"node_modules/local":{"resolved":"../local","link":true}}}`
	if err := os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(lock), 0o600); err != nil {
		t.Fatal(err)
	}
	c.publish("ms", "2.1.3")
	c.publish("ms", "3.0.0")
	code, out := c.run("warm", "--lockfile", dir, "--no-progress")
	if code != exitOK || !strings.Contains(out, "warmed              1") || !strings.Contains(out, "skipped             1") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if c.reg.TarballDownloads("ms", "3.0.0") != 0 || c.reg.TarballDownloads("ms", "2.1.3") != 1 {
		t.Error("warmed something other than the locked ms@2.1.3")
	}
}

func TestDetachAndWorker(t *testing.T) {
	t.Parallel()
	c := newCLI(t, false)
	c.publish("gamma", "1.0.0")
	code, out := c.run("warm", "--detach", "gamma@1.0.0")
	id := strings.TrimSpace(out)
	if code != exitOK || len(id) != 32 {
		t.Fatalf("detach: exit %d, output %q, want a request id", code, out)
	}
	code, out = c.run("status", id)
	if code != exitOK || !strings.Contains(out, "still pending       1") {
		t.Errorf("status before a worker ran: exit %d:\n%s", code, out)
	}
	// A worker runs the job; stopping it (as SIGTERM does) ends it.
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int)
	go func() {
		out, _ := os.CreateTemp(t.TempDir(), "worker")
		defer out.Close()
		log := slog.New(slog.NewTextHandler(out, nil))
		done <- run(ctx, []string{"worker", "--data-dir", c.data}, func(k string) string { return c.env[k] }, log, out, out)
	}()
	// `warm` of the same version joins the queued job rather than adding
	// one, and returns when the worker has run it.
	code, out = c.run("warm", "gamma@1.0.0", "--no-progress", "--workers", "1")
	// The detached request settles when the worker's job is recorded
	// done, which may come after the joined `warm` returned: wait for it
	// before stopping the worker.
	if wcode, wout := c.run("status", "--wait", id); wcode != exitOK || !strings.Contains(wout, "warmed              1") {
		t.Errorf("status --wait: exit %d:\n%s", wcode, wout)
	}
	cancel()
	if got := <-done; got != exitOK {
		t.Errorf("worker exit %d", got)
	}
	if code != exitOK || c.reg.TarballDownloads("gamma", "1.0.0") != 1 {
		t.Errorf("exit %d, %d downloads:\n%s", code, c.reg.TarballDownloads("gamma", "1.0.0"), out)
	}
	if code, out := c.run("status", id); code != exitOK || !strings.Contains(out, "warmed              1") {
		t.Errorf("status after: exit %d:\n%s", code, out)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	c := newCLI(t, false)
	for _, args := range [][]string{
		{"frobnicate"},
		{"warm"},
		{"warm", "x", "--lockfile", "y"},
		{"warm", "x", "--workers", "0"},
		{"warm", "x", "--job-timeout", "1m"}, // not above fill-timeout
		{"warm", "x", "--rescue-margin", "0s"},
		{"warm", "x", "--no-such-flag", "1"},
		{"popular", "--top", "0"},
		{"popular", "refresh", "--from-downloads", "x.tsv"}, // no --date
		{"reindex", "--format", "99"},
		{"reindex", "--ingest-format", "99"},
		{"status"},
	} {
		if code, out := c.run(args...); code == exitOK {
			t.Errorf("%q: exit 0:\n%s", args, out)
		}
	}
}

func TestPopularRefreshFromDownloads(t *testing.T) {
	t.Parallel()
	c := newCLI(t, false)
	dir := t.TempDir()
	tsv := filepath.Join(dir, "index.tsv")
	if err := os.WriteFile(tsv, []byte("name\tversion\tdownloads_a_month\nb\t1.0.0\t5\na\t1.0.0\t9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "popular.json")
	if code, msg := c.run("popular", "refresh", "--from-downloads", tsv, "--date", "2026-11-30", "--out", out); code != exitOK {
		t.Fatalf("exit %d: %s", code, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	l, err := popular.Parse(b)
	if err != nil || strings.Join(l.Top(5), ",") != "a,b" || l.Date != "2026-11-30" || l.Source != "index.tsv" {
		t.Errorf("wrote %s (%v)", b, err)
	}
	// From the registry's search: the fake registry's search knows no
	// package here, and the error says so.
	code, msg := c.run("popular", "refresh", "--out", out)
	if code == exitOK || !strings.Contains(msg, "search") {
		t.Errorf("refresh from a registry without search: exit %d: %s", code, msg)
	}
}

func TestPopularCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t, false)
	l, err := popular.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range l.Top(2) {
		c.publish(name, "1.0.0")
	}
	code, out := c.run("popular", "--top", "2", "--no-progress")
	if code != exitOK || !strings.Contains(out, "warmed              2") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestReindexDryRun(t *testing.T) {
	t.Parallel()
	c := newCLI(t, false)
	c.publish("delta", "1.0.0")
	if code, out := c.run("warm", "delta@1.0.0", "--no-progress"); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, out := c.run("reindex", "--dry-run")
	if code != exitOK || !strings.Contains(out, fmt.Sprintf("0 versions stored under an ingest format older than %d; 0 without a search index of format", warm.IngestFormat)) {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestGCCommand: `indexer gc` deletes a body nothing names once older than
// the grace (one left by a failed ingest, aged in the file directly) and
// keeps the warmed version's bodies and index, which then still greps.
func TestGCCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t, false)
	c.publish("gamma", "1.0.0")
	if code, out := c.run("warm", "gamma@1.0.0", "--no-progress"); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	ctx := t.Context()
	st, err := sqlite.Open(ctx, c.data, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	orphan := []byte("left by an ingest that failed")
	if err := st.PutBlobs(ctx, []store.Blob{{Hash: store.HashOf(orphan), Data: orphan}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().ExecContext(ctx, `UPDATE blob_written SET written_at = written_at - ?`, (48 * time.Hour).Microseconds()); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	code, out := c.run("gc")
	if code != exitOK || !strings.Contains(out, " 1 deleted (") {
		t.Fatalf("gc: exit %d, want 1 blob deleted:\n%s", code, out)
	}
	if code, out := c.run("gc"); code != exitOK || !strings.Contains(out, " 0 deleted (") {
		t.Errorf("second gc: exit %d, want nothing deleted:\n%s", code, out)
	}
	// The warmed version's files and search index are whole.
	if code, out := c.run("reindex", "--dry-run"); code != exitOK || !strings.Contains(out, "0 without a search index") {
		t.Errorf("reindex after gc: exit %d:\n%s", code, out)
	}
	st, err = sqlite.Open(ctx, c.data, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	files, err := st.Files(ctx, "gamma", "1.0.0")
	if err != nil || len(files) == 0 {
		t.Fatalf("Files after gc = %d, %v", len(files), err)
	}
	for _, f := range files {
		if _, err := st.Blob(ctx, f.Hash); err != nil {
			t.Errorf("%s after gc: %v", f.Path, err)
		}
	}
	rec, err := st.Index(ctx, "gamma", "1.0.0", index.FormatVersion)
	if err != nil {
		t.Fatalf("Index after gc: %v", err)
	}
	for _, h := range rec.Chunks {
		if _, err := st.Blob(ctx, h); err != nil {
			t.Errorf("index chunk %x after gc: %v", h[:4], err)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"version", "--version"} {
		out, err := os.CreateTemp(t.TempDir(), "stdout")
		if err != nil {
			t.Fatal(err)
		}
		code := run(t.Context(), []string{arg}, func(string) string { return "" }, slog.New(slog.DiscardHandler), out, out)
		out.Close()
		b, err := os.ReadFile(out.Name())
		if err != nil {
			t.Fatal(err)
		}
		if want := version.Get().Lines(version.IndexerName); code != exitOK || string(b) != want {
			t.Errorf("indexer %s: exit %d\n%s\nwant exit 0\n%s", arg, code, b, want)
		}
	}
}
