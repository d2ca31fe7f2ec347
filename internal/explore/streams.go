package explore

import (
	"bytes"
	"context"
	"fmt"

	"golang.org/x/sync/semaphore"

	"github.com/pkgscope/pkgscope/internal/pkgpath"

	"github.com/pkgscope/pkgscope/internal/store"
)

// bodies opens large file bodies as streams within a budget of bytes in
// flight. Reading one line of a 128 MiB file used to load it whole: 16
// such reads at once took 2.4 GiB, 16 raw GETs 3.7 GiB. A stream holds its
// Footprint (a 1 MiB chunk and an 8 MiB zstd window from Postgres; the
// compressed body from SQLite), charged to the budget from open to close;
// a request that finds the budget spent waits for it, or for its context.
type bodies struct {
	st     store.BlobStreamer
	whole  int64 // bodies up to this size are read whole (the cache fronts them)
	budget *semaphore.Weighted
	max    int64
}

// newBodies returns nil (every body read whole) without a streamer.
func newBodies(st store.BlobStreamer, whole, maxInFlight int64) *bodies {
	if st == nil || maxInFlight <= 0 {
		return nil
	}
	return &bodies{st: st, whole: whole, budget: semaphore.NewWeighted(maxInFlight), max: maxInFlight}
}

// open opens the body with hash h, charging its footprint to the budget
// until the stream is closed.
func (b *bodies) open(ctx context.Context, h store.Hash) (store.BlobStream, error) {
	st, err := b.st.OpenBlob(ctx, h)
	if err != nil {
		return nil, err
	}
	cost := min(st.Footprint(), b.max)
	if err := b.budget.Acquire(ctx, cost); err != nil {
		st.Close()
		return nil, fmt.Errorf("waiting for max-body-bytes-in-flight: %w", err)
	}
	return &charged{BlobStream: st, release: func() { b.budget.Release(cost) }}, nil
}

// charged gives its budget back when closed.
type charged struct {
	store.BlobStream
	release func()
}

func (c *charged) Close() error {
	err := c.BlobStream.Close()
	if c.release != nil {
		c.release()
		c.release = nil
	}
	return err
}

// wholeStream serves a body already in memory as a stream.
// One allocation: the reader is held by value.
func wholeStream(b []byte) store.BlobStream {
	w := &whole{b: b}
	w.Reset(b)
	return w
}

type whole struct {
	bytes.Reader
	b []byte
}

func (w *whole) Close() error     { return nil }
func (w *whole) Footprint() int64 { return int64(len(w.b)) }
func (w *whole) Size() int64      { return int64(len(w.b)) }
func (w *whole) Bytes() []byte    { return w.b }

// FileOfStream is FileOf with the body as a stream the caller closes.
func (s *Service) FileOfStream(ctx context.Context, o *Opened, rawPath string) (store.File, store.BlobStream, *Opened, error) {
	path, err := pkgpath.CleanQuery(rawPath)
	if err != nil {
		return store.File{}, nil, nil, &InputError{Field: "path", Err: err}
	}
	f, err := find(o, path)
	if err != nil {
		return store.File{}, nil, nil, err
	}
	f, st, o2, err := s.pkgs.BodyStream(ctx, o, f)
	if err != nil {
		return store.File{}, nil, nil, fmt.Errorf("reading %s from %s@%s: %w", path, o.Name, o.Version, err)
	}
	return f, st, o2, nil
}
