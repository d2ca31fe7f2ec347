// Package logbuf batches log lines into few writes. The mirror logs one
// line per request; written at once, each was a write(2) to stderr, about
// a twentieth of the CPU of a warm 2.6 KiB read (issue 27). A Writer
// holds lines until its buffer fills or its interval passes, so a line
// reaches the log at most that late (settings log-flush-interval and
// log-buffer-bytes); Handler writes records at warn and above, and
// everything before them, at once, so an error is never the line lost in
// a crash.
package logbuf

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Writer is an io.Writer that batches writes to another. It is safe for
// concurrent use; Close flushes it and stops its timer.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	buf  []byte
	size int
	err  error // the last write's error, reported by the next Write

	stop chan struct{}
	done chan struct{}
}

// New returns a Writer to w that writes when size bytes are held or every
// interval. interval must be positive.
func New(w io.Writer, size int, interval time.Duration) *Writer {
	b := &Writer{w: w, buf: make([]byte, 0, size), size: size, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				b.Flush()
			case <-b.stop:
				return
			}
		}
	}()
	return b
}

// Write holds p (a log handler writes one whole line per call), writing
// what is held first when p would overflow the buffer. A p larger than the
// buffer is written at once.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf)+len(p) > b.size {
		b.flushLocked()
	}
	if len(p) > b.size {
		_, err := b.w.Write(p)
		return len(p), err
	}
	b.buf = append(b.buf, p...)
	err := b.err
	b.err = nil
	return len(p), err
}

// Flush writes what is held.
func (b *Writer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

func (b *Writer) flushLocked() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	b.buf = b.buf[:0]
	if err != nil {
		b.err = err
	}
	return err
}

// Close stops the timer and writes what is held; the Writer still writes
// after it, each write at once.
func (b *Writer) Close() error {
	select {
	case <-b.stop:
	default:
		close(b.stop)
		<-b.done
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.flushLocked()
	b.size = 0 // every later write goes through at once
	return err
}

// Logger is the mirror's logger: text lines to w, batched by a Writer of
// size bytes and interval, records at warn and above written at once
// (Handler). Close the Writer when done.
func Logger(w io.Writer, size int, interval time.Duration) (*slog.Logger, *Writer) {
	b := New(w, size, interval)
	return slog.New(Handler(slog.NewTextHandler(b, nil), b, slog.LevelWarn)), b
}

// Handler returns h, which writes to w, flushing w after every record at
// level or above.
func Handler(h slog.Handler, w *Writer, level slog.Level) slog.Handler {
	return &flushing{Handler: h, w: w, level: level}
}

type flushing struct {
	slog.Handler
	w     *Writer
	level slog.Level
}

func (f *flushing) Handle(ctx context.Context, r slog.Record) error {
	err := f.Handler.Handle(ctx, r)
	if r.Level >= f.level {
		f.w.Flush()
	}
	return err
}

func (f *flushing) WithAttrs(as []slog.Attr) slog.Handler {
	return &flushing{Handler: f.Handler.WithAttrs(as), w: f.w, level: f.level}
}

func (f *flushing) WithGroup(name string) slog.Handler {
	return &flushing{Handler: f.Handler.WithGroup(name), w: f.w, level: f.level}
}
