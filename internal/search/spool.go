package search

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
)

// spool holds an index being built or fetched: a temporary file in the
// local cache, so a build's output never sits in memory and publishing is
// a rename, or a buffer when there is no cache or it cannot be written.
type spool struct {
	log     *slog.Logger
	f       *os.File
	buf     *bytes.Buffer
	n       int64
	renamed bool // f was published under its final name
}

// newSpool returns a spool in the local cache, or in memory.
func (s *Searcher) newSpool() *spool {
	sp := &spool{log: s.log}
	if s.opt.Dir != "" {
		f, err := os.CreateTemp(s.opt.Dir, ".tmp-*.idx")
		if err == nil {
			sp.f = f
			return sp
		}
		s.log.Warn("local index cache not writable; serving from memory", "dir", s.opt.Dir, "err", err)
	}
	sp.buf = new(bytes.Buffer)
	return sp
}

// Write appends p. When the file cannot take it (the disk filled up),
// the spool moves what it holds to memory and goes on there.
func (sp *spool) Write(p []byte) (int, error) {
	if sp.f != nil {
		n, err := sp.f.Write(p)
		if err == nil {
			sp.n += int64(n)
			return n, nil
		}
		sp.log.Warn("local index cache not writable; serving from memory", "dir", filepath.Dir(sp.f.Name()), "err", err)
		data, rerr := sp.bytes()
		sp.discard()
		if rerr != nil {
			return 0, rerr
		}
		sp.buf = bytes.NewBuffer(data)
	}
	n, err := sp.buf.Write(p)
	sp.n += int64(n)
	return n, err
}

// readerAt reads the spooled bytes.
func (sp *spool) readerAt() (io.ReaderAt, error) {
	if sp.f != nil {
		return sp.f, nil
	}
	if sp.buf != nil {
		return bytes.NewReader(sp.buf.Bytes()), nil
	}
	return nil, fmt.Errorf("reading a discarded index spool")
}

// bytes returns the whole spooled index in memory.
func (sp *spool) bytes() ([]byte, error) {
	if sp.f == nil {
		return sp.buf.Bytes(), nil
	}
	data := make([]byte, sp.n)
	if _, err := sp.f.ReadAt(data, 0); err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading the index spool: %w", err)
	}
	return data, nil
}

// discard closes the spool and removes its file unless it was published.
// It is idempotent.
func (sp *spool) discard() {
	if sp.f == nil {
		return
	}
	_ = sp.f.Close()
	if !sp.renamed {
		_ = os.Remove(sp.f.Name())
	}
	sp.f = nil
}
