package reliability

import (
	"bufio"
	"fmt"
	"io"
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
)

// commands are the binaries the process tests run, built together (one
// go build links them in parallel) the first time a test asks for one.
var commands = []string{"cmd/mirror", "cmd/indexer"}

var (
	binMu    sync.Mutex
	binDir   string
	binErr   error
	binBuilt bool
)

// binary returns the path of the command pkg (e.g. "cmd/mirror", one of
// commands), building all of them once per run.
func binary(t testing.TB, pkg string) string {
	t.Helper()
	if !slices.Contains(commands, pkg) {
		t.Fatalf("binary(%q): add it to commands", pkg)
	}
	binMu.Lock()
	defer binMu.Unlock()
	if !binBuilt {
		binBuilt = true
		binDir, binErr = os.MkdirTemp("", "pkgscope-reliability-")
		if binErr == nil {
			args := []string{"build", "-o", binDir + string(filepath.Separator)}
			for _, c := range commands {
				args = append(args, "github.com/pkgscope/pkgscope/"+c)
			}
			if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
				binErr = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
	}
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, filepath.Base(pkg))
}

func cleanupBinaries() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}

// proc is one run of a built binary, whose stderr is kept as its log.
type proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	log    *syncBuffer
	exited chan error // receives Wait's result once
	url    string     // the mirror's address, once it listens
}

var listening = regexp.MustCompile(`msg="pkgscope listening" .*\baddr=(http://\S+)`)

// startMirror runs the mirror binary with env (no other environment) and
// waits for the line announcing its address. It is stopped with SIGTERM
// when the test ends, unless it was killed before.
func startMirror(t testing.TB, env []string, args ...string) *proc {
	t.Helper()
	p := startProc(t, binary(t, "cmd/mirror"), env, args...)
	select {
	case p.url = <-p.waitFor(listening):
		return p
	case err := <-p.exited:
		p.exited <- err
		t.Fatalf("mirror exited before listening: %v\n%s", err, p.log)
	case <-time.After(time.Minute):
		t.Fatalf("mirror did not listen within a minute:\n%s", p.log)
	}
	return nil
}

// startProc starts bin and returns at once.
func startProc(t testing.TB, bin string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, log: &syncBuffer{}, exited: make(chan error, 1)}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.log.Write([]byte(sc.Text() + "\n"))
			p.notify(sc.Text())
		}
		io.Copy(io.Discard, stderr)
	}()
	go func() {
		<-drained // Wait closes the pipe: read it to the end first
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("log of %s:\n%s", filepath.Base(bin), p.log)
		}
	})
	return p
}

var (
	watchMu  sync.Mutex
	watchers = map[*proc][]watcher{}
)

type watcher struct {
	re   *regexp.Regexp
	ch   chan string
	left int // matches still to see before ch receives the last
}

// waitFor returns a channel that receives the first submatch (or the
// whole match) of the next log line matching re.
func (p *proc) waitFor(re *regexp.Regexp) <-chan string { return p.waitForN(re, 1) }

// waitForN is waitFor for the n-th next line matching re.
func (p *proc) waitForN(re *regexp.Regexp, n int) <-chan string {
	ch := make(chan string, 1)
	watchMu.Lock()
	watchers[p] = append(watchers[p], watcher{re, ch, n})
	watchMu.Unlock()
	return ch
}

func (p *proc) notify(line string) {
	watchMu.Lock()
	defer watchMu.Unlock()
	ws := watchers[p]
	kept := ws[:0]
	for _, w := range ws {
		if m := w.re.FindStringSubmatch(line); m != nil {
			if w.left--; w.left <= 0 {
				w.ch <- m[len(m)-1]
				continue
			}
		}
		kept = append(kept, w)
	}
	watchers[p] = kept
}

// sigkill kills the process at once, as the OOM killer or a lost node
// does, and waits for it to be gone.
func (p *proc) sigkill() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatalf("SIGKILL: %v", err)
	}
	err := <-p.exited
	p.exited <- err
}

// stop sends SIGTERM and waits, then SIGKILL after 30s.
func (p *proc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		p.exited <- err
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		err := <-p.exited
		p.exited <- err
	}
	watchMu.Lock()
	delete(watchers, p)
	watchMu.Unlock()
}
