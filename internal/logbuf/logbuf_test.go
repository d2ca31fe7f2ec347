package logbuf_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/logbuf"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sink records what reaches the log, and signals each write.
type sink struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes chan struct{}
}

func newSink() *sink { return &sink{writes: make(chan struct{}, 100)} }

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	select {
	case s.writes <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (s *sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// TestLinesWaitForTheBuffer: lines are held until the buffer would
// overflow or Flush, then written whole and in order; a line larger than
// the buffer goes at once.
func TestLinesWaitForTheBuffer(t *testing.T) {
	s := newSink()
	w := logbuf.New(s, 10, time.Hour)
	defer w.Close()
	w.Write([]byte("one\n"))
	w.Write([]byte("two\n"))
	if got := s.String(); got != "" {
		t.Fatalf("written before the buffer filled: %q", got)
	}
	w.Write([]byte("three\n")) // 8 + 6 > 10
	if got := s.String(); got != "one\ntwo\n" {
		t.Fatalf("after overflowing: %q, want the two held lines", got)
	}
	w.Write([]byte("a line longer than ten\n"))
	if got := s.String(); got != "one\ntwo\nthree\na line longer than ten\n" {
		t.Fatalf("a long line: %q", got)
	}
	w.Flush()
	w.Write([]byte("four\n"))
	w.Flush()
	if got := s.String(); !strings.HasSuffix(got, "ten\nfour\n") {
		t.Fatalf("after Flush: %q", got)
	}
}

// TestIntervalFlushes: a held line is written when the interval passes,
// with no further write.
func TestIntervalFlushes(t *testing.T) {
	s := newSink()
	w := logbuf.New(s, 1<<10, time.Millisecond)
	defer w.Close()
	w.Write([]byte("held\n"))
	select {
	case <-s.writes:
	case <-time.After(time.Minute):
		t.Fatal("the interval never flushed the held line")
	}
	if got := s.String(); got != "held\n" {
		t.Fatalf("flushed %q", got)
	}
}

// TestCloseFlushes: Close writes what is held, and later writes go at
// once.
func TestCloseFlushes(t *testing.T) {
	s := newSink()
	w := logbuf.New(s, 1<<10, time.Hour)
	w.Write([]byte("held\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("after\n"))
	if got := s.String(); got != "held\nafter\n" {
		t.Fatalf("got %q", got)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

// TestWarningsAreWrittenAtOnce: a record at warn or above is written at
// once, after the info lines held before it; info lines wait.
func TestWarningsAreWrittenAtOnce(t *testing.T) {
	s := newSink()
	w := logbuf.New(s, 1<<10, time.Hour)
	defer w.Close()
	log := slog.New(logbuf.Handler(slog.NewTextHandler(w, nil), w, slog.LevelWarn)).With("app", "mirror")
	log.Info("request", "status", 200)
	if got := s.String(); got != "" {
		t.Fatalf("an info line was written at once: %q", got)
	}
	log.WithGroup("g").Error("request failed", "status", 500)
	got := s.String()
	if i, j := strings.Index(got, "msg=request "), strings.Index(got, `msg="request failed"`); i < 0 || j < i || !strings.Contains(got, "g.status=500") {
		t.Fatalf("after an error: %q, want the info line, then the error", got)
	}
}
