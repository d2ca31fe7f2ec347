package blobcodec

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// StreamChunk is how many stored bytes a Stream asks its source for at a
// time: one database round trip per MiB keeps a 128 MiB raw body to 128
// queries while a stream holds little more than that.
const StreamChunk = 1 << 20

// maxWindow is the largest zstd window a Stream decodes: Encode's frames
// use at most 8 MiB (the encoder's default window at every level), so a larger one is corrupt and
// must not make the decoder allocate it.
const maxWindow = 8 << 20

// Stream is a stored body decoded as it is read: it holds one chunk of
// the stored form and, for zstd, the decoder's window (at most 8 MiB),
// whatever the body's size. It implements store.BlobStream.
type Stream struct {
	codec        Codec
	size, stored int64
	held         int64 // bytes src keeps in memory
	src          io.ReaderAt
	onClose      func() error

	pos int64         // offset in the body
	in  *bufio.Reader // the stored form from some offset
	dec *zstd.Decoder // Zstd only
	err error         // sticky
	// srcErr is the source's last failure: a database error, passed on
	// as it is; any other failure to decode is corruption.
	srcErr error
}

// tracked records the source's failures in its Stream.
type tracked struct{ s *Stream }

func (t tracked) ReadAt(p []byte, off int64) (int, error) {
	n, err := t.s.src.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		t.s.srcErr = err
	}
	return n, err
}

// NewStream returns the body stored as codec in src (stored bytes long)
// whose decoded size is size; src keeps held bytes in memory once read
// (0 for a database read in chunks). onClose, if set, runs on Close.
func NewStream(codec Codec, size, stored, held int64, src io.ReaderAt, onClose func() error) (*Stream, error) {
	switch {
	case codec != Raw && codec != Zstd:
		return nil, fmt.Errorf("%w: unknown codec %d", ErrCorrupt, codec)
	case codec == Raw && stored != size:
		return nil, fmt.Errorf("%w: raw body is %d bytes, want %d", ErrCorrupt, stored, size)
	}
	return &Stream{codec: codec, size: size, stored: stored, held: held, src: src, onClose: onClose}, nil
}

// Size is the decoded body's length.
func (s *Stream) Size() int64 { return s.size }

// Footprint is what the stream holds in memory at most while it is read:
// what its source keeps, one chunk of the stored form and, for zstd, the
// decoder's window and a block.
func (s *Stream) Footprint() int64 {
	n := s.held + min(s.stored, StreamChunk)
	if s.codec == Zstd {
		n += min(s.size, maxWindow) + 128<<10
	}
	return n
}

// start positions the stored form at its beginning (zstd) or at the body
// offset pos (raw).
func (s *Stream) start() error {
	off := int64(0)
	if s.codec == Raw {
		off = s.pos
	}
	sec := io.NewSectionReader(tracked{s}, off, s.stored-off)
	if s.in == nil {
		s.in = bufio.NewReaderSize(sec, StreamChunk)
	} else {
		s.in.Reset(sec)
	}
	if s.codec != Zstd {
		return nil
	}
	if s.dec == nil {
		d, err := zstd.NewReader(s.in, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxWindow))
		if err != nil {
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		s.dec = d
		return nil
	}
	if err := s.dec.Reset(s.in); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return nil
}

// Read implements io.Reader.
func (s *Stream) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.pos >= s.size {
		return 0, s.finish()
	}
	if s.in == nil {
		if s.err = s.start(); s.err != nil {
			return 0, s.err
		}
	}
	if rest := s.size - s.pos; int64(len(p)) > rest {
		p = p[:rest]
	}
	var n int
	var err error
	if s.codec == Raw {
		n, err = s.in.Read(p)
	} else {
		n, err = s.dec.Read(p)
	}
	s.pos += int64(n)
	switch {
	case errors.Is(err, io.EOF) && s.pos < s.size:
		s.err = fmt.Errorf("%w: body ends at %d bytes, want %d", ErrCorrupt, s.pos, s.size)
	case err != nil && !errors.Is(err, io.EOF) && s.srcErr != nil:
		s.err = s.srcErr
	case err != nil && !errors.Is(err, io.EOF):
		s.err = fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if n > 0 {
		return n, nil
	}
	return 0, s.err
}

// finish checks, at the body's recorded end, that the stored form ends
// there too.
func (s *Stream) finish() error {
	if s.codec == Zstd && s.dec != nil {
		var one [1]byte
		if n, _ := s.dec.Read(one[:]); n > 0 {
			s.err = fmt.Errorf("%w: body decodes past its %d bytes", ErrCorrupt, s.size)
			return s.err
		}
	}
	return io.EOF
}

// Seek implements io.Seeker. Forward it reads on (raw: jumps); backward
// it starts decoding again from the beginning.
func (s *Stream) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += s.pos
	case io.SeekEnd:
		offset += s.size
	}
	if offset < 0 {
		return s.pos, errors.New("blobcodec: seek before the start of the body")
	}
	if offset == s.pos {
		return s.pos, nil
	}
	s.err = nil
	if s.codec == Raw || offset < s.pos || s.in == nil {
		if s.codec == Raw {
			s.pos = min(offset, s.size)
		} else {
			s.pos = 0
		}
		if s.pos < s.size || s.codec == Zstd {
			if err := s.start(); err != nil {
				s.err = err
				return s.pos, err
			}
		}
		if s.codec == Raw {
			s.pos = offset
			return offset, nil
		}
	}
	if _, err := io.CopyN(io.Discard, onlyRead{s}, min(offset, s.size)-s.pos); err != nil {
		return s.pos, err
	}
	s.pos = offset
	return offset, nil
}

// onlyRead hides Stream's other methods from io.CopyN.
type onlyRead struct{ s *Stream }

func (r onlyRead) Read(p []byte) (int, error) { return r.s.Read(p) }

// Close releases the decoder and the source.
func (s *Stream) Close() error {
	if s.dec != nil {
		s.dec.Close()
		s.dec = nil
	}
	s.err = errors.New("blobcodec: stream closed")
	if s.onClose != nil {
		f := s.onClose
		s.onClose = nil
		return f()
	}
	return nil
}
