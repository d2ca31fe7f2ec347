package explore

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/pkgscope/pkgscope/internal/store"
)

// lineSource walks a body's lines for read, keeping of each line only
// what the answer shows: one-line reads of a 128 MiB file used to load it
// whole (16 at once: 2.4 GiB). It takes two passes over the stream, one
// counting the lines (TotalLines, and an offset past the end is answered
// before anything is shown), then one from the start up to the lines
// asked for.
type lineSource struct {
	total int
	r     *bufio.Reader
	buf   []byte
	err   error // the stream's first failure after counting
	// whole is a body in memory, read from at with no reader (r nil).
	whole []byte
	at    int
}

// newLineSource counts body's lines like cat (split on \n, no empty last
// line after a trailing newline, none for an empty body) and rewinds it.
// A body in memory (wholeStream) is counted and read where it is: a read
// of a 2 KiB file allocated and cleared two 64 KiB buffers, a fifth of
// its CPU (issue 27).
func newLineSource(body store.BlobStream) (*lineSource, error) {
	if w, ok := body.(interface{ Bytes() []byte }); ok {
		b := w.Bytes()
		total := bytes.Count(b, []byte{'\n'})
		if len(b) > 0 && b[len(b)-1] != '\n' {
			total++
		}
		return &lineSource{total: total, whole: b}, nil
	}
	r := bufio.NewReaderSize(body, 64<<10)
	total, err := countLines(r)
	if err != nil {
		return nil, err
	}
	if _, err := body.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	r.Reset(body)
	return &lineSource{total: total, r: r}, nil
}

// countLines counts the lines of r, reading it to the end.
func countLines(r io.Reader) (int, error) {
	count, last := 0, byte('\n')
	buf := make([]byte, 64<<10)
	for {
		k, err := r.Read(buf)
		if k > 0 {
			count += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if errors.Is(err, io.EOF) {
			if last != '\n' {
				count++
			}
			return count, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// skip passes n lines.
func (l *lineSource) skip(n int) {
	for ; n > 0; n-- {
		l.next(0)
	}
}

// next returns the first keep bytes of the next line (without its \n)
// and the line's length; nothing after the end or a failure (l.err). A
// body in memory answers with a slice of itself: read only.
func (l *lineSource) next(keep int) (prefix []byte, n int) {
	if l.r == nil {
		line := l.whole[l.at:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
			l.at++
		}
		l.at += len(line)
		return line[:min(keep, len(line))], len(line)
	}
	l.buf = l.buf[:0]
	for l.err == nil {
		chunk, err := l.r.ReadSlice('\n')
		data := chunk
		nl := len(data) > 0 && data[len(data)-1] == '\n'
		if nl {
			data = data[:len(data)-1]
		}
		n += len(data)
		if room := keep - len(l.buf); room > 0 {
			l.buf = append(l.buf, data[:min(room, len(data))]...)
		}
		switch {
		case nl, errors.Is(err, io.EOF):
			return l.buf, n
		case errors.Is(err, bufio.ErrBufferFull):
		case err != nil:
			l.err = err
		}
	}
	return nil, 0
}
