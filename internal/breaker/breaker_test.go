package breaker

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

var errDown = errors.New("connection refused")

// step is one call on a circuit at a time (seconds after the start).
// allow steps check whether the request is admitted (and as a probe) or
// refused with the given Wait; record steps report an outcome and check
// the change it made.
type step struct {
	at     int // seconds
	allow  bool
	admit  bool          // allow: want admitted
	probe  bool          // allow: want a probe slot; record: free one
	wait   time.Duration // allow, refused: want this Wait
	record Outcome
	opened bool // record: want Change.Opened
	closed bool // record: want Change.Closed
	outage time.Duration
}

func allow(at int, admit, probe bool, wait time.Duration) step {
	return step{at: at, allow: true, admit: admit, probe: probe, wait: wait}
}

func record(at int, probe bool, o Outcome) step { return step{at: at, probe: probe, record: o} }

func TestCircuit(t *testing.T) {
	opened := func(s step) step { s.opened = true; return s }
	closed := func(s step, outage time.Duration) step { s.closed, s.outage = true, outage; return s }
	tests := []struct {
		name  string
		opt   Options
		steps []step
	}{
		{"closed admits and neutral or success say nothing", Options{Failures: 1, Cooldown: 10 * time.Second}, []step{
			allow(0, true, false, 0), record(0, false, Success),
			allow(0, true, false, 0), record(0, false, Neutral),
			allow(1, true, false, 0),
		}},
		{"opens at the threshold, not before", Options{Failures: 3, Cooldown: 10 * time.Second}, []step{
			record(0, false, Failure), record(0, false, Failure), allow(0, true, false, 0),
			opened(record(1, false, Failure)),
			allow(1, false, false, 10*time.Second),
			allow(5, false, false, 6*time.Second),
		}},
		{"a success between failures starts the count again", Options{Failures: 2, Cooldown: time.Minute}, []step{
			record(0, false, Failure), record(0, false, Success), record(0, false, Failure),
			allow(0, true, false, 0),
		}},
		{"one probe after the cooldown; its success closes", Options{Failures: 1, Cooldown: 10 * time.Second}, []step{
			opened(record(0, false, Failure)),
			allow(9, false, false, time.Second),
			allow(10, true, true, 0),
			allow(10, false, false, 0), // the probe is in flight
			closed(record(12, true, Success), 12*time.Second),
			allow(12, true, false, 0),
		}},
		{"a failed probe opens for another cooldown, no new incident", Options{Failures: 2, Cooldown: 10 * time.Second}, []step{
			record(0, false, Failure), opened(record(0, false, Failure)),
			allow(10, true, true, 0),
			record(11, true, Failure),
			allow(11, false, false, 10*time.Second),
			allow(21, true, true, 0),
			closed(record(21, true, Success), 21*time.Second),
		}},
		{"a neutral probe frees its slot and keeps the circuit open", Options{Failures: 1, Cooldown: 10 * time.Second}, []step{
			opened(record(0, false, Failure)),
			allow(10, true, true, 0),
			record(10, true, Neutral),
			allow(10, true, true, 0),
		}},
		{"a failure while open extends the cooldown", Options{Failures: 1, Cooldown: 10 * time.Second}, []step{
			opened(record(0, false, Failure)),
			record(5, false, Failure), // a request admitted before the circuit opened
			allow(10, false, false, 5*time.Second),
		}},
		{"two probes at once", Options{Failures: 1, Cooldown: 10 * time.Second, Probes: 2}, []step{
			opened(record(0, false, Failure)),
			allow(10, true, true, 0), allow(10, true, true, 0), allow(10, false, false, 0),
		}},
		{"any number after the cooldown", Options{Failures: 1, Cooldown: 10 * time.Second, Probes: -1}, []step{
			opened(record(0, false, Failure)),
			allow(3, false, false, 7*time.Second),
			allow(10, true, false, 0), allow(10, true, false, 0), allow(10, true, false, 0),
			record(11, false, Failure),
			allow(11, false, false, 10*time.Second),
		}},
		{"off below one failure", Options{Failures: 0, Cooldown: 10 * time.Second}, []step{
			record(0, false, Failure), record(0, false, Failure), allow(0, true, false, 0),
		}},
	}
	start := time.Unix(1_700_000_000, 0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := start
			opt := tt.opt
			opt.Now = func() time.Time { return now }
			b := New(opt)
			for i, s := range tt.steps {
				now = start.Add(time.Duration(s.at) * time.Second)
				if s.allow {
					probe, err := b.Allow()
					var oe *OpenError
					switch {
					case s.admit && err != nil:
						t.Fatalf("step %d: refused (%v), want admitted", i, err)
					case s.admit && probe != s.probe:
						t.Fatalf("step %d: probe = %v, want %v", i, probe, s.probe)
					case !s.admit && !errors.As(err, &oe):
						t.Fatalf("step %d: err = %v, want an *OpenError", i, err)
					case !s.admit && oe.Wait != s.wait:
						t.Fatalf("step %d: Wait = %v, want %v", i, oe.Wait, s.wait)
					}
					continue
				}
				ch := b.Record(s.probe, s.record, errDown)
				if ch.Opened != s.opened || ch.Closed != s.closed || ch.Outage != s.outage {
					t.Fatalf("step %d: change %+v, want opened %v closed %v outage %v", i, ch, s.opened, s.closed, s.outage)
				}
				if open := b.IsOpen(); open != (ch.Until != time.Time{}) {
					t.Fatalf("step %d: IsOpen %v with Until %v", i, open, ch.Until)
				}
			}
		})
	}
}

// A refusal names the failures, the last one and the wait.
func TestOpenErrorSaysWhy(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	b := New(Options{Failures: 2, Cooldown: 30 * time.Second, Now: func() time.Time { return now }})
	b.Record(false, Failure, errors.New("timed out"))
	b.Record(false, Failure, errDown)
	_, err := b.Allow()
	var oe *OpenError
	if !errors.As(err, &oe) || oe.Failures != 2 || oe.Last != errDown || !oe.Until.Equal(now.Add(30*time.Second)) {
		t.Fatalf("err = %#v", err)
	}
	if want := "circuit open after 2 consecutive failures (last: connection refused); next attempt in 30s"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
}

// Keys fail apart, and a key that succeeds is forgotten.
func TestSetKeepsCircuitsApart(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := NewSet[string](Options{Failures: 1, Cooldown: time.Minute, Now: func() time.Time { return now }})
	s.Record("a", false, Failure, errDown)
	if _, err := s.Allow("a"); err == nil {
		t.Fatal("a admitted while open")
	}
	if _, err := s.Allow("b"); err != nil {
		t.Fatalf("b refused: %v", err)
	}
	now = now.Add(time.Minute)
	probe, err := s.Allow("a")
	if err != nil || !probe {
		t.Fatalf("a after the cooldown: probe %v, %v", probe, err)
	}
	s.Record("a", probe, Success, nil)
	if n := len(s.m); n != 0 {
		t.Errorf("%d circuits kept after every key succeeded, want 0", n)
	}
	for i := range 3 {
		s.Record(fmt.Sprint(i), false, Neutral, nil)
	}
	if n := len(s.m); n != 0 {
		t.Errorf("%d circuits kept for neutral outcomes, want 0", n)
	}
}
