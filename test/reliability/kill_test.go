package reliability

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
)

// processEnv is the whole environment of a mirror or indexer process: the
// fake registry, a home and npm configuration of its own, nothing of the
// machine's.
func processEnv(t testing.TB, reg *fakeregistry.Registry, settings ...string) []string {
	t.Helper()
	dir := t.TempDir()
	empty := filepath.Join(dir, "npmrc")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"PKGSCOPE_ADDR=127.0.0.1:0",
		"PKGSCOPE_PROJECT_DIR=" + dir,
		"PKGSCOPE_MDN_BASE_URL=",
		"npm_config_registry=" + reg.URL(),
		"NPM_CONFIG_USERCONFIG=" + empty,
		"NPM_CONFIG_GLOBALCONFIG=" + empty,
	}
	return append(env, settings...)
}

// TestSIGKILLMidIngestPostgres kills the mirror process (SIGKILL: no
// shutdown, no deferred cleanup) while it writes a 24 MiB version's
// bodies to Postgres — after 12 MiB of store traffic, as the fault proxy
// in front of Postgres tells — then starts it again: nothing of the
// version was visible meanwhile, and the same request then ingests it
// whole.
func TestSIGKILLMidIngestPostgres(t *testing.T) {
	t.Parallel()
	proxied, direct, proxy := viaProxy(t)
	reg := fakeregistry.New(t)
	tgz, files := bigPackage(t, 2, 48, 512<<10)
	reg.Publish("big", "1.0.0", tgz)
	env := processEnv(t, reg, "PKGSCOPE_DATABASE_URL="+proxied)
	mir := startMirror(t, env)
	st := openDirect(t, direct)

	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	proxy.HoldAfter(12 << 20) // the kill lands mid-write, however slow the machine
	mid := proxy.After(12 << 20)
	answered := make(chan answer, 1)
	go func() {
		answered <- do(t.Context(), hc, http.MethodGet, mir.url+"/v1/npm/big@1.0.0/-/files", "", time.Minute)
	}()
	select {
	case <-mid:
		mir.sigkill()
		if a := <-answered; a.err == nil {
			t.Fatalf("a killed mirror answered: %v", a)
		}
	case a := <-answered:
		// Answered from the verified download before the store's
		// writes (docs/ARCHITECTURE.md "The miss path"), which go on:
		// 24 MiB of random bodies, held after 12.
		if a.status != http.StatusOK {
			t.Fatalf("before the kill: %v", a)
		}
		<-mid
		mir.sigkill()
	}
	noPartial(t, st, "big", "1.0.0", len(files))
	if _, err := st.Version(t.Context(), "big", "1.0.0"); err == nil {
		t.Fatalf("a version row exists after a kill mid-write")
	}
	if err := proxy.Resume(); err != nil {
		t.Fatal(err)
	}

	mir = startMirror(t, env)
	ingested := mir.waitFor(ingestedLine("big"))
	a := do(t.Context(), hc, http.MethodGet, mir.url+"/v1/npm/big@1.0.0/-/files", "", time.Minute)
	if a.status != http.StatusOK {
		t.Fatalf("after restart: %v", a)
	}
	<-ingested
	checkWhole(t, st, "big", "1.0.0", files)
	if n := reg.TarballDownloads("big", "1.0.0"); n != 2 {
		t.Errorf("%d tarball downloads, want 2 (one per process)", n)
	}
}

// TestSIGKILLMidFillEmbedded does the same on the embedded store (SQLite
// in WAL mode, a version already committed), killing the mirror while its
// tarball download is in flight: the restarted process opens the database
// the killed one left, and the request completes.
func TestSIGKILLMidFillEmbedded(t *testing.T) {
	t.Parallel()
	reg := fakeregistry.New(t)
	gate := newGate(t, reg)
	tgz, files := bigPackage(t, 3, 8, 64<<10)
	// Tarballs are fetched through the gate too, which is the registry's
	// host as far as the mirror knows.
	reg.Publish("warm", "1.0.0", tgz, fakeregistry.WithTarballURL(gate.url+"warm/-/warm-1.0.0.tgz"))
	reg.Publish("big", "1.0.0", tgz, fakeregistry.WithTarballURL(gate.url+"big/-/big-1.0.0.tgz"))
	data := t.TempDir()
	env := processEnv(t, reg, "PKGSCOPE_DATA_DIR="+data)
	env = append(env, "npm_config_registry="+gate.url) // the last one wins
	mir := startMirror(t, env)
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	ingested := mir.waitFor(ingestedLine("warm"))
	if a := do(t.Context(), hc, http.MethodGet, mir.url+"/v1/npm/warm@1.0.0/-/files", "", time.Minute); a.status != 200 {
		t.Fatalf("warm: %v", a)
	}
	<-ingested
	gate.hold("/big/-/big-1.0.0.tgz")
	answered := make(chan answer, 1)
	go func() {
		answered <- do(t.Context(), hc, http.MethodGet, mir.url+"/v1/npm/big@1.0.0/-/files", "", time.Minute)
	}()
	select {
	case <-gate.arrived:
	case a := <-answered:
		t.Fatalf("answered before the tarball was asked for: %v", a)
	}
	mir.sigkill()
	<-answered
	gate.open()

	mir = startMirror(t, env)
	ingested = mir.waitFor(ingestedLine("big"))
	if a := do(t.Context(), hc, http.MethodGet, mir.url+"/v1/npm/big@1.0.0/-/files", "", time.Minute); a.status != 200 {
		t.Fatalf("after restart: %v", a)
	}
	<-ingested
	mir.stop()
	st, err := sqlite.Open(t.Context(), data, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	checkWhole(t, st, "big", "1.0.0", files)
	checkWhole(t, st, "warm", "1.0.0", files)
}

// gate stands in front of a fake registry: it forwards every request,
// except that a request for the held path reports its arrival and waits
// until the gate opens (or its client goes away).
type gate struct {
	url     string
	arrived chan struct{}

	mu     sync.Mutex
	held   string
	opened chan struct{}
}

func newGate(t *testing.T, reg *fakeregistry.Registry) *gate {
	target, err := url.Parse(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{arrived: make(chan struct{}, 1), opened: make(chan struct{})}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		held, opened := g.held, g.opened
		g.mu.Unlock()
		if held != "" && r.URL.Path == held {
			select {
			case g.arrived <- struct{}{}:
			default:
			}
			select {
			case <-opened:
			case <-r.Context().Done():
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { g.open(); srv.Close() })
	g.url = srv.URL + "/"
	return g
}

func (g *gate) hold(path string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held, g.opened = path, make(chan struct{})
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held != "" {
		close(g.opened)
		g.held = ""
	}
}

// checkWhole checks name@version holds exactly files (path → body).
// ingestedLine matches the log line of name@1.0.0's commit. An answer may
// come from the verified download before it (docs/ARCHITECTURE.md "The
// miss path"), so a test that checks the store after an answer waits
// for it.
func ingestedLine(name string) *regexp.Regexp {
	return regexp.MustCompile(`msg=ingested package=` + regexp.QuoteMeta(name) + ` version=1\.0\.0`)
}

func checkWhole(t *testing.T, st store.Reader, name, version string, files map[string]string) {
	t.Helper()
	got := whole(t, st, name, version)
	if len(got) != len(files) {
		t.Fatalf("%s@%s has %d files, want %d", name, version, len(got), len(files))
	}
	for _, f := range got {
		b, _ := st.Blob(t.Context(), f.Hash)
		if string(b) != files[f.Path] {
			t.Errorf("%s@%s %s: stored body differs from the tarball's", name, version, f.Path)
		}
	}
}

// TestSIGKILLIndexerWorkerMidJob kills `indexer worker` (SIGKILL) while
// its warm job writes a 24 MiB version to Postgres, and starts another
// worker: the job is taken up again and the version is whole. River sees
// a killed worker's job only by its age: the new worker, once it holds
// River's leadership (the killed leader's lease lapses 10 to 15 s after
// the kill, and a follower tries every 5 s), rescues the job if it has
// been running job-timeout + rescue-margin, looking at once and then
// every 30 s. This test sets fill-timeout to 10 s (a loaded machine takes
// more than 5 s to store and index 24 MiB), job-timeout to 12 s and
// rescue-margin to 1 s, so the job is usually old enough by the time the
// new worker first looks: it is rescued 10 to 20 s after the kill (at
// worst 30 s later). With the defaults (6 minutes + 1 minute) a job
// whose worker died waits 7 to 7.5 minutes.
func TestSIGKILLIndexerWorkerMidJob(t *testing.T) {
	t.Parallel() // mostly waiting for River's leadership and rescuer: overlap it with the other waits
	proxied, direct, proxy := viaProxy(t)
	reg := fakeregistry.New(t)
	tgz, files := bigPackage(t, 4, 48, 512<<10)
	reg.Publish("big", "1.0.0", tgz)
	env := processEnv(t, reg, "PKGSCOPE_DATABASE_URL="+proxied,
		"PKGSCOPE_FILL_TIMEOUT=10s", "PKGSCOPE_WRITE_TIMEOUT=11s",
		"PKGSCOPE_WARM_JOB_TIMEOUT=12s", "PKGSCOPE_WARM_RESCUE_MARGIN=1s",
		"PKGSCOPE_WARM_POLL_INTERVAL=100ms", "PKGSCOPE_WARM_RETRY_BASE=100ms",
		// Each attempt that runs out of fill-timeout on a loaded
		// machine keeps the bodies it stored, so the next goes further:
		// attempts enough that load cannot exhaust them.
		"PKGSCOPE_WARM_MAX_ATTEMPTS=10")
	bin := binary(t, "cmd/indexer")
	submit := exec.Command(bin, "warm", "--detach", "big@1.0.0")
	submit.Env = env
	if out, err := submit.CombinedOutput(); err != nil {
		t.Fatalf("indexer warm --detach: %v\n%s", err, out)
	}
	st := openDirect(t, direct)

	// The proxy holds the worker's traffic at 12 MiB, so the kill lands
	// mid-write however slow the machine is.
	proxy.HoldAfter(12 << 20)
	mid := proxy.After(12 << 20)
	worker := startProc(t, bin, env, "worker")
	select {
	case <-mid:
	case err := <-worker.exited:
		worker.exited <- err
		t.Fatalf("worker exited before the kill: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatalf("the worker wrote less than 12 MiB in 2 minutes (proxy %+v)", proxy.Stats())
	}
	worker.sigkill()
	killed := time.Now()
	noPartial(t, st, "big", "1.0.0", len(files))
	if err := proxy.Resume(); err != nil {
		t.Fatal(err)
	}

	worker = startProc(t, bin, env, "worker")
	rescued := worker.waitFor(regexp.MustCompile(`msg="maintenance.JobRescuer: Ran successfully".* num_jobs_retry_scheduled=(\d+)`))
	done := worker.waitFor(regexp.MustCompile(`msg="warm job done" package=big .*state=(\S+)`))
	select {
	case state := <-done:
		select {
		case <-rescued:
		default:
			t.Errorf("the job ended %q without River's rescuer taking it up", state)
		}
		t.Logf("the job ended %s %s after the kill", state, time.Since(killed).Round(time.Second))
		// done: the rescued attempt filled it; present: an earlier attempt
		// of the same job did (each is bounded by job-timeout, which a
		// loaded machine can pass) — either way after the kill, which left
		// nothing (noPartial above).
		if state != "done" && state != "present" {
			t.Errorf("the job ended %q, want done or present", state)
		}
	case <-time.After(4 * time.Minute):
		t.Fatalf("the job of the killed worker did not complete within 4 minutes")
	}
	checkWhole(t, st, "big", "1.0.0", files)
}
