package faultproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echoServer answers each line with the same line until the client hangs up.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

func newProxy(t *testing.T) *Proxy {
	t.Helper()
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func dial(t *testing.T, p *Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, line string) {
	t.Helper()
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		t.Fatalf("writing %q: %v", line, err)
	}
	got, err := r.ReadString('\n')
	if err != nil || got != line+"\n" {
		t.Fatalf("echo of %q = %q, %v", line, got, err)
	}
}

func TestPassForwardsBothWays(t *testing.T) {
	p := newProxy(t)
	c, r := dial(t, p)
	// Every byte is forwarded twice: to the server and back. The proxy
	// counts a chunk once it has written it, so the echo may reach this
	// test before the last count: wait for the count, then check it is
	// not more.
	const want = 2 * (5 + 6 + 100<<10 + 1)
	counted := p.After(want)
	for _, line := range []string{"PING", "hello", string(make([]byte, 100<<10))} {
		roundTrip(t, c, r, line)
	}
	<-counted
	if s := p.Stats(); s.Forwarded != want || s.Swallowed != 0 {
		t.Errorf("stats %+v", s)
	}
}

// silenceDeadline is how long a test listens to a blackholed connection to
// see it stay silent. It is not a bound on anything the code does; a
// longer value only makes the test slower.
const silenceDeadline = 50 * time.Millisecond

func TestBlackholeNeitherAnswersNorResets(t *testing.T) {
	p := newProxy(t)
	c, r := dial(t, p)
	roundTrip(t, c, r, "before")
	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}
	// An open connection: the request is swallowed.
	if _, err := io.WriteString(c, "held\n"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(silenceDeadline))
	if _, err := r.ReadString('\n'); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read during blackhole: %v, want a timeout (no answer, no reset)", err)
	}
	// A new connection is accepted, and silent too.
	c2, r2 := dial(t, p)
	io.WriteString(c2, "new\n")
	c2.SetReadDeadline(time.Now().Add(silenceDeadline))
	if _, err := r2.ReadString('\n'); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read on a connection opened during blackhole: %v, want a timeout", err)
	}
	if p.Mode() != Blackholed {
		t.Fatalf("mode %v", p.Mode())
	}
	// The chunk on the open connection and the new connection.
	if s := p.Stats(); s.Swallowed != 2 {
		t.Errorf("swallowed %d, want 2", s.Swallowed)
	}

	// Resume delivers what was held back, on both connections.
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Time{})
	c2.SetReadDeadline(time.Time{})
	if got, err := r.ReadString('\n'); err != nil || got != "held\n" {
		t.Fatalf("after resume: %q, %v", got, err)
	}
	if got, err := r2.ReadString('\n'); err != nil || got != "new\n" {
		t.Fatalf("after resume, new connection: %q, %v", got, err)
	}
	roundTrip(t, c, r, "after")
}

func TestKillCutsAndRefusesThenResumeListensAgain(t *testing.T) {
	p := newProxy(t)
	c, r := dial(t, p)
	roundTrip(t, c, r, "before")
	p.Kill()
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("an open connection survived Kill")
	}
	if c, err := net.Dial("tcp", p.Addr()); err == nil {
		c.Close()
		t.Fatal("Kill left the address accepting connections")
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	c2, r2 := dial(t, p)
	roundTrip(t, c2, r2, "after")
}

func TestBlackholeAfterKillListensButStaysSilent(t *testing.T) {
	p := newProxy(t)
	p.Kill()
	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}
	c, r := dial(t, p) // accepted: a blackhole is not a refusal
	io.WriteString(c, "x\n")
	c.SetReadDeadline(time.Now().Add(silenceDeadline))
	if _, err := r.ReadString('\n'); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read: %v, want a timeout", err)
	}
}

func TestCloseEndsStalledConnections(t *testing.T) {
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := dial(t, p)
	p.Blackhole()
	io.WriteString(c, "stalled\n")
	// Close must not wait forever on the stalled pipe (goleak checks that
	// its goroutines are gone).
	p.Close()
	if err := p.Resume(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Resume after Close: %v", err)
	}
}
