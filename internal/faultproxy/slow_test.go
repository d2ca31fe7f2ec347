package faultproxy

import (
	"io"
	"strings"
	"testing"
	"time"
)

// A delay can only make a round trip longer, so the lower bound below is
// deterministic; nothing here bounds how fast the proxy is.
func TestSetLatencyDelaysEachWay(t *testing.T) {
	p := newProxy(t)
	c, r := dial(t, p)
	roundTrip(t, c, r, "warm") // connected before the delay starts
	const d = 20 * time.Millisecond
	p.SetLatency(d)
	start := time.Now()
	roundTrip(t, c, r, "slow")
	if took := time.Since(start); took < 2*d {
		t.Errorf("round trip took %v with %v each way", took, d)
	}
	p.SetLatency(0)
	roundTrip(t, c, r, "fast again")
	if p.Mode() != Pass {
		t.Errorf("mode %v, want pass: latency is not a mode", p.Mode())
	}
}

func TestKillAfterCutsMidTransfer(t *testing.T) {
	p := newProxy(t)
	c, r := dial(t, p)
	roundTrip(t, c, r, "before")
	// The first line's round trip forwards 128 KiB; the mark falls in the
	// second line's echo, at least 24 KiB before its end (chunks are at
	// most 32 KiB, the last one delivered).
	const line = 64 << 10
	p.KillAfter(200 << 10)
	roundTrip(t, c, r, strings.Repeat("a", line-1))
	if _, err := io.WriteString(c, strings.Repeat("b", line-1)+"\n"); err == nil {
		if got, err := r.ReadString('\n'); err == nil {
			t.Fatalf("a whole line of %d bytes came back after the kill mark", len(got))
		}
	}
	if p.Mode() != Killed {
		t.Fatalf("mode %v after the mark, want killed", p.Mode())
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	c2, r2 := dial(t, p)
	roundTrip(t, c2, r2, "after resume")
	// Disarmed once fired: more traffic does not kill again.
	roundTrip(t, c2, r2, strings.Repeat("c", 200<<10))
	if p.Mode() != Pass {
		t.Errorf("mode %v, want pass", p.Mode())
	}
}

func TestAfterFiresMidTransfer(t *testing.T) {
	p := newProxy(t)
	c, r := dial(t, p)
	first, later := p.After(10), p.After(1<<20)
	roundTrip(t, c, r, strings.Repeat("x", 100))
	<-first
	select {
	case <-later:
		t.Fatal("the 1 MiB mark fired after 202 bytes")
	default:
	}
	roundTrip(t, c, r, strings.Repeat("y", 600<<10))
	<-later
}

// HoldAfter stalls a transfer at its mark, before After's channel for the
// same mark is closed, so a test acting on that channel acts mid-transfer.
func TestHoldAfterStallsMidTransferUntilResume(t *testing.T) {
	p := newProxy(t)
	c, r := dial(t, p)
	roundTrip(t, c, r, "before")
	const line = 64 << 10
	p.HoldAfter(100 << 10)
	mark := p.After(100 << 10)
	done := make(chan error, 1)
	go func() {
		if _, err := io.WriteString(c, strings.Repeat("a", line-1)+"\n"+strings.Repeat("b", line-1)+"\n"); err != nil {
			done <- err
			return
		}
		for range 2 {
			if _, err := r.ReadString('\n'); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	<-mark
	if p.Mode() != Blackholed {
		t.Fatalf("mode %v when the mark fired, want blackholed", p.Mode())
	}
	select {
	case err := <-done:
		t.Fatalf("both lines came back while held (err %v)", err)
	default:
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("after Resume: %v", err)
	}
}
