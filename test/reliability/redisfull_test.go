package reliability

import (
	"bufio"
	"context"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pkgscope/pkgscope/internal/config"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// fullRedis starts a Redis server of the test's own (the shared one must
// not be filled) with maxmemory 2 MiB and no eviction, and fills it until
// writes fail with OOM, as a Redis at its memory limit does. Killed and
// blackholed Redis are test/topology's.
func fullRedis(t *testing.T) string {
	t.Helper()
	// The port is picked free, then closed for redis-server to bind: a
	// parallel test may take it in between, and redis-server then exits
	// ("Address already in use"). A few tries on fresh ports cover that.
	var port string
	for try := 1; ; try++ {
		port = freePort(t)
		ok, log := startRedis(t, port)
		if ok {
			break
		}
		if try == 5 {
			t.Fatalf("redis-server exited before it was ready, 5 times; last output:\n%s", log)
		}
	}
	addr := "127.0.0.1:" + port
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	topUp(t, rdb, 64<<10)
	return addr
}

// topUp writes values of size bytes until Redis refuses one with OOM.
// Redis refuses a write only while it is over maxmemory, and it frees
// memory of its own (a closed client's buffers), so a few small writes
// may pass afterwards until one takes it over again.
func topUp(t *testing.T, rdb *redis.Client, size int) {
	t.Helper()
	filler := strings.Repeat("x", size)
	for i := 0; ; i++ {
		err := rdb.Set(context.Background(), "filler:"+strconv.Itoa(size)+":"+strconv.Itoa(i), filler, 0).Err()
		if err != nil && strings.Contains(err.Error(), "OOM") {
			return
		}
		if err != nil {
			t.Fatalf("filling Redis: %v", err)
		}
		if i == 1000 {
			t.Fatal("1000 values written and Redis is not full: maxmemory not applied")
		}
	}
}

// TestRedisFull: with Redis at its memory limit (every write refused with
// OOM), cold and warm requests are answered right (from the store when
// Redis has nothing), the cache counts the refused writes, and the mirror
// stays up.
func TestRedisFull(t *testing.T) {
	addr := fullRedis(t)
	m := newMirror(t, func(c *config.Config) {
		c.RedisURL, c.RedisPrefix = "redis://"+addr+"/0", "full:"
		c.CacheLocalBytes = 0 // every read goes through Redis
		c.RawAnswerBytes = 0
	})
	files := map[string]string{"package.json": `{"name":"p"}`, "a.js": "a\n", "b.js": "b\n"}
	m.reg.Publish("p", "1.0.0", tb.Package(t, files))
	// Over the limit again once the filling client is gone (its buffers
	// freed) and the mirror has connected: the writes below are refused.
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	topUp(t, rdb, 64)
	for i := range 10 {
		for _, f := range []string{"a.js", "b.js"} {
			if a := m.get("/v1/npm/p@1.0.0/" + f); a.status != 200 || string(a.body) != files[f] {
				t.Fatalf("read %d of %s with Redis full: %v", i, f, a)
			}
		}
	}
	// Writes are refused (OOM); a few small ones may still fit as Redis
	// frees memory around its limit, so hits are possible, errors certain.
	if s := m.app.Cache.Stats(); s.Redis.Errors == 0 {
		t.Errorf("cache stats %+v: want the refused writes counted as Redis errors", s)
	}
	whole(t, m.app.Store, "p", "1.0.0")
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// startRedis starts redis-server with maxmemory 2 MiB and no eviction on
// port, and reports whether it became ready, with its output when not.
func startRedis(t *testing.T, port string) (bool, string) {
	t.Helper()
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--maxmemory", "2mb", "--maxmemory-policy", "noeviction", "--logfile", "")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server (installed with the Redis the tests use): %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ready := make(chan bool, 1)
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "Ready to accept connections") {
				ready <- true
				break
			}
			log.WriteString(sc.Text() + "\n")
		}
		close(ready)
		io.Copy(io.Discard, out)
	}()
	select {
	case ok := <-ready:
		if !ok {
			return false, log.String()
		}
		return true, ""
	case <-time.After(30 * time.Second):
		t.Fatal("redis-server not ready within 30s")
	}
	return false, ""
}
