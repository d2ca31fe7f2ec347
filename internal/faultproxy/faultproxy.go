// Package faultproxy is a TCP proxy for tests that stands between a client
// and a real server (Redis, Postgres) and fails on command: pass traffic
// through, kill the server (refuse connections, cut open ones), blackhole
// it (accept connections and swallow bytes, never answering and never
// resetting, as a dead host behind a firewall does), and resume.
//
// It exists so failure tests use the real server, never a mock, and need
// no sleeps: each mode change takes effect before the call returns.
// Beside the modes, SetLatency makes the server slow and KillAfter cuts
// it after a given amount of traffic, so a test can fail a transfer in
// its middle without timing it.
package faultproxy

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Mode is what the proxy does with traffic.
type Mode int

// Modes.
const (
	// Pass forwards bytes both ways.
	Pass Mode = iota
	// Killed refuses new connections and has closed the open ones.
	Killed
	// Blackholed accepts connections but forwards no byte, in either
	// direction, and closes nothing.
	Blackholed
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case Pass:
		return "pass"
	case Killed:
		return "killed"
	case Blackholed:
		return "blackholed"
	}
	return "unknown"
}

// Proxy is a controllable TCP proxy. It is safe for concurrent use.
type Proxy struct {
	target string
	addr   string // fixed after the first Listen, so clients keep it

	mu      sync.Mutex
	ln      net.Listener
	mode    Mode
	resumed chan struct{} // closed when a blackhole ends
	conns   map[net.Conn]struct{}
	closed  bool
	wg      sync.WaitGroup

	forwarded, swallowed atomic.Int64
	latency              atomic.Int64 // time.Duration added to each chunk
	killAt               atomic.Int64 // Forwarded count that triggers Kill; 0: none
	holdAt               atomic.Int64 // Forwarded count that triggers Blackhole; 0: none

	marksMu sync.Mutex
	marks   []mark // channels to close at Forwarded counts (After)
}

// mark is one After: ch is closed once Forwarded reaches at.
type mark struct {
	at int64
	ch chan struct{}
}

// Stats count traffic since New, so a test can tell that its client
// really reached the server, or the blackhole, before it moves on.
type Stats struct {
	// Forwarded is the bytes passed on, both ways.
	Forwarded int64
	// Swallowed counts what hit a blackhole: connections accepted and
	// chunks of bytes read while blackholed.
	Swallowed int64
}

// Stats returns the counters.
func (p *Proxy) Stats() Stats {
	return Stats{Forwarded: p.forwarded.Load(), Swallowed: p.swallowed.Load()}
}

// New starts a proxy on a free loopback port forwarding to target
// (host:port).
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, addr: ln.Addr().String(), ln: ln, conns: map[net.Conn]struct{}{}, resumed: make(chan struct{})}
	p.wg.Add(1)
	go p.accept(ln)
	return p, nil
}

// Addr is the proxy's host:port; it stays the same across Kill and Resume.
func (p *Proxy) Addr() string { return p.addr }

// Mode returns the current mode.
func (p *Proxy) Mode() Mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// Kill stops listening and closes every open connection, as a server
// process that died: new connections are refused, open ones see EOF.
func (p *Proxy) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == Killed || p.closed {
		return
	}
	p.endBlackhole()
	p.mode = Killed
	p.ln.Close()
	p.ln = nil
	p.closeConnsLocked()
}

// Blackhole makes the proxy swallow traffic: connections are still
// accepted, but nothing is forwarded either way (bytes are held back), and
// nothing is closed or reset, so clients see only their own timeouts.
func (p *Proxy) Blackhole() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return net.ErrClosed
	}
	if p.mode == Killed {
		if err := p.listenLocked(); err != nil {
			return err
		}
	}
	if p.mode != Blackholed {
		p.resumed = make(chan struct{})
	}
	p.mode = Blackholed
	return nil
}

// Resume passes traffic again: after Kill it listens on the same address;
// after Blackhole the stalled connections carry on (bytes held back are
// delivered; a client that timed out has usually closed its end already).
func (p *Proxy) Resume() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return net.ErrClosed
	}
	if p.mode == Killed {
		if err := p.listenLocked(); err != nil {
			return err
		}
	}
	p.endBlackhole()
	p.mode = Pass
	return nil
}

// Close stops the proxy and closes every connection, waiting for its
// goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.endBlackhole()
	if p.ln != nil {
		p.ln.Close()
	}
	p.closeConnsLocked()
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

// SetLatency delays every chunk of bytes passed on, either way, by d (0
// removes the delay), as a slow or distant server does. It applies at once,
// to open connections too.
func (p *Proxy) SetLatency(d time.Duration) { p.latency.Store(int64(d)) }

// KillAfter arms the proxy to Kill itself once n more bytes have been
// forwarded (counted as Stats.Forwarded, both ways), so a test can cut a
// transfer in its middle: a connection reset mid-ingest. n <= 0 disarms.
// The chunk that crosses the mark is delivered; Resume listens again.
func (p *Proxy) KillAfter(n int64) {
	if n <= 0 {
		p.killAt.Store(0)
		return
	}
	p.killAt.Store(p.forwarded.Load() + n)
}

// HoldAfter arms the proxy to Blackhole itself once n more bytes have been
// forwarded: the chunk that crosses the mark is delivered, the ones after
// it are held until Resume. A test that acts on After(n) with the same n
// then acts while the transfer is surely still in its middle, however
// slow the machine is. n <= 0 disarms.
func (p *Proxy) HoldAfter(n int64) {
	if n <= 0 {
		p.holdAt.Store(0)
		return
	}
	p.holdAt.Store(p.forwarded.Load() + n)
}

// After returns a channel closed once n more bytes have been forwarded,
// so a test can act (kill a process, say) in the middle of a transfer
// without timing it.
func (p *Proxy) After(n int64) <-chan struct{} {
	ch := make(chan struct{})
	p.marksMu.Lock()
	p.marks = append(p.marks, mark{at: p.forwarded.Load() + n, ch: ch})
	p.marksMu.Unlock()
	return ch
}

// reached closes the After channels whose mark total has passed.
func (p *Proxy) reached(total int64) {
	p.marksMu.Lock()
	defer p.marksMu.Unlock()
	kept := p.marks[:0]
	for _, m := range p.marks {
		if total >= m.at {
			close(m.ch)
			continue
		}
		kept = append(kept, m)
	}
	p.marks = kept
}

// endBlackhole releases connections stalled by a blackhole. p.mu held.
func (p *Proxy) endBlackhole() {
	if p.mode == Blackholed {
		close(p.resumed)
	}
}

func (p *Proxy) listenLocked() error {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.ln = ln
	p.wg.Add(1)
	go p.accept(ln)
	return nil
}

func (p *Proxy) closeConnsLocked() {
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *Proxy) accept(ln net.Listener) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return // listener closed by Kill or Close
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// track registers c so Kill and Close can cut it; false when the proxy is
// no longer passing connections.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.mode == Killed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	if !p.track(client) {
		return
	}
	defer p.untrack(client)
	// A connection accepted during a blackhole does not reach the server
	// until the blackhole ends: a dead host never completes anything.
	if p.Mode() == Blackholed {
		p.swallowed.Add(1)
	}
	if !p.gate() {
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	done := make(chan struct{}, 2)
	go func() { p.pipe(server, client); done <- struct{}{} }()
	go func() { p.pipe(client, server); done <- struct{}{} }()
	<-done
	// One direction ended: cut both, as a TCP proxy does.
	client.Close()
	server.Close()
	<-done
}

// gate waits while the proxy is blackholed. It returns false when the
// connection must be dropped (killed or closed meanwhile).
func (p *Proxy) gate() bool {
	for {
		p.mu.Lock()
		mode, resumed, closed := p.mode, p.resumed, p.closed
		p.mu.Unlock()
		switch {
		case closed || mode == Killed:
			return false
		case mode == Pass:
			return true
		}
		<-resumed
	}
}

// pipe copies src to dst, holding each chunk back while blackholed.
func (p *Proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if p.Mode() == Blackholed {
				p.swallowed.Add(1)
			}
			if !p.gate() {
				return
			}
			if d := time.Duration(p.latency.Load()); d > 0 {
				time.Sleep(d)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			total := p.forwarded.Add(int64(n))
			if h := p.holdAt.Load(); h > 0 && total >= h && p.holdAt.CompareAndSwap(h, 0) {
				p.Blackhole()
			}
			p.reached(total)
			if k := p.killAt.Load(); k > 0 && total >= k && p.killAt.CompareAndSwap(k, 0) {
				p.Kill()
				return
			}
		}
		if err != nil {
			return // EOF or a cut connection: serve closes both ends
		}
	}
}
