package topology

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/redistest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// mirrorBinary builds cmd/mirror once per test run and returns its path.
func mirrorBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pkgscope-topology-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "mirror")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/pkgscope/pkgscope/cmd/mirror").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/mirror: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// deployment is what the replicas share: a Postgres schema, a Redis key
// prefix, a fake registry, and the settings given to every process.
type deployment struct {
	t      *testing.T
	reg    *fakeregistry.Registry
	prefix string
	env    []string
}

// newDeployment prepares a deployment whose replicas reach Redis at
// redisAddr (the server, or a fault proxy in front of it).
func newDeployment(t *testing.T, redisAddr string, settings ...string) *deployment {
	t.Helper()
	reg := fakeregistry.New(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "npmrc")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	prefix := redistest.Prefix(t)
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"PKGSCOPE_ADDR=127.0.0.1:0",
		"PKGSCOPE_PROJECT_DIR=" + dir,
		"PKGSCOPE_DATABASE_URL=" + pgtest.URL(t),
		"PKGSCOPE_REDIS_URL=redis://" + redisAddr + "/0",
		"PKGSCOPE_REDIS_PREFIX=" + prefix,
		"npm_config_registry=" + reg.URL(),
		"NPM_CONFIG_USERCONFIG=" + empty,
		"NPM_CONFIG_GLOBALCONFIG=" + empty,
	}
	return &deployment{t: t, reg: reg, prefix: prefix, env: append(env, settings...)}
}

// replica is one running mirror process.
type replica struct {
	url string
	cmd *exec.Cmd
	log *syncBuffer

	mu       sync.Mutex
	watchers []lineWatcher
}

// lineWatcher is a waitFor waiting for its line.
type lineWatcher struct {
	re *regexp.Regexp
	ch chan struct{}
}

// waitFor returns a channel closed once a log line matching re comes.
func (r *replica) waitFor(re *regexp.Regexp) <-chan struct{} {
	ch := make(chan struct{})
	r.mu.Lock()
	r.watchers = append(r.watchers, lineWatcher{re, ch})
	r.mu.Unlock()
	return ch
}

// notify closes the channels of the watchers line matches.
func (r *replica) notify(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := r.watchers[:0]
	for _, w := range r.watchers {
		if w.re.MatchString(line) {
			close(w.ch)
			continue
		}
		kept = append(kept, w)
	}
	r.watchers = kept
}

// syncBuffer is a log shared by the reader goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) add(line string) { s.mu.Lock(); s.b.WriteString(line + "\n"); s.mu.Unlock() }
func (s *syncBuffer) String() string  { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

var listening = regexp.MustCompile(`msg="pkgscope listening" .*\baddr=(http://\S+)`)

// start runs n replicas. The first starts alone, so that it alone applies
// the schema migrations; the others start together once it listens.
func (d *deployment) start(n int) []*replica {
	d.t.Helper()
	rs := []*replica{d.startOne()}
	var wg sync.WaitGroup
	more := make([]*replica, n-1)
	for i := range more {
		wg.Go(func() { more[i] = d.startOne() })
	}
	wg.Wait()
	for _, r := range more {
		if r == nil {
			d.t.FailNow()
		}
	}
	return append(rs, more...)
}

// startOne runs a mirror process, with the deployment's settings and then
// env's (a later one wins), and waits for the line announcing its address
// (it listens on a free port). The process gets SIGTERM when the test
// ends, and its log is shown if the test failed.
func (d *deployment) startOne(env ...string) *replica {
	t := d.t
	cmd := exec.Command(mirrorBinary(t))
	cmd.Env = append(slices.Clip(d.env), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Error(err)
		return nil
	}
	if err := cmd.Start(); err != nil {
		t.Error(err)
		return nil
	}
	r := &replica{cmd: cmd, log: &syncBuffer{}}
	addr := make(chan string, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			r.log.add(sc.Text())
			r.notify(sc.Text())
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	exited := make(chan error, 1)
	go func() {
		<-drained // Wait closes the pipe: read it to the end first
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("log of mirror %s:\n%s", r.url, r.log)
		}
	})
	select {
	case r.url = <-addr:
		return r
	case err := <-exited:
		exited <- err
		t.Errorf("mirror exited before listening: %v\n%s", err, r.log)
		return nil
	case <-time.After(60 * time.Second):
		t.Errorf("mirror did not listen within 60s:\n%s", r.log)
		return nil
	}
}

// get fetches url with a deadline, returning the status and body.
func get(ctx context.Context, hc *http.Client, url string, deadline time.Duration) (int, string, error) {
	return send(ctx, hc, http.MethodGet, url, "", deadline)
}

// send sends a request (a JSON body unless empty) with a deadline,
// returning the status and body.
func send(ctx context.Context, hc *http.Client, method, url, body string, deadline time.Duration) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func redistestAddr(t *testing.T) string { return redistest.Addr(t) }
