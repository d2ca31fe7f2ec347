package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pkgscope/pkgscope/internal/store"
)

// A Redis value is an envelope: a format byte, the expiry as Unix
// milliseconds (0 for immutable entries) and the payload. The expiry
// travels with the value so that a replica copying it into its local layer
// keeps the writer's deadline instead of starting a fresh TTL.
//
// envelopeV2 added each file's mode and tarball order to file lists; a V1
// entry is refused like a corrupt one, so it is a miss and is overwritten.
const (
	envelopeV2     = 2
	envelopeHeader = 1 + 8
)

var errCorrupt = errors.New("cache: corrupt entry")

func seal(payload []byte, expires time.Time) []byte {
	b := make([]byte, envelopeHeader, envelopeHeader+len(payload))
	b[0] = envelopeV2
	if !expires.IsZero() {
		binary.BigEndian.PutUint64(b[1:], uint64(expires.UnixMilli()))
	}
	return append(b, payload...)
}

func unseal(b []byte) (payload []byte, expires time.Time, err error) {
	if len(b) < envelopeHeader || b[0] != envelopeV2 {
		return nil, time.Time{}, errCorrupt
	}
	if ms := binary.BigEndian.Uint64(b[1:]); ms != 0 {
		expires = time.UnixMilli(int64(ms))
	}
	return b[envelopeHeader:], expires, nil
}

// encodeFiles writes a file list compactly: a count, then per file the
// path length and bytes, size, sha256, a flags byte, the mode and the
// tarball order. Paths are bytes, not JSON strings: they may be invalid
// UTF-8, which JSON would mangle. The flags byte is the binary flag (bit
// 0) and the body's store.UTF8 (bits 1–2): entries written before the
// validity was kept have 0 there, unknown, which is what they are.
func encodeFiles(files []store.File) []byte {
	n := binary.MaxVarintLen64
	for _, f := range files {
		n += 4*binary.MaxVarintLen64 + len(f.Path) + len(f.Hash) + 1
	}
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, uint64(len(files)))
	for _, f := range files {
		b = binary.AppendUvarint(b, uint64(len(f.Path)))
		b = append(b, f.Path...)
		b = binary.AppendUvarint(b, uint64(f.Size))
		b = append(b, f.Hash[:]...)
		b = append(b, fileFlags(f))
		b = binary.AppendUvarint(b, uint64(f.Mode))
		b = binary.AppendUvarint(b, uint64(f.Order))
	}
	return b
}

// fileFlags is f's flags byte: Binary in bit 0, UTF8 in bits 1–2.
func fileFlags(f store.File) byte {
	b := byte(f.UTF8) << 1
	if f.Binary {
		b |= 1
	}
	return b
}

// minFileBytes is the smallest encoding of one file: empty path (1), size
// (1), hash (32), flag (1), mode (1), order (1). It bounds the count a
// corrupt header may claim.
const minFileBytes = 1 + 1 + 32 + 1 + 1 + 1

// decodeFiles parses encodeFiles' output. It refuses anything
// encodeFiles cannot produce: trailing bytes, flags it never writes,
// sizes that overflow int64, paths out of strict byte order.
func decodeFiles(b []byte) ([]store.File, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64(len(b)/minFileBytes) {
		return nil, fmt.Errorf("%w: file count", errCorrupt)
	}
	b = b[n:]
	files := make([]store.File, count)
	for i := range files {
		plen, n := binary.Uvarint(b)
		if n <= 0 || plen > uint64(len(b)-n) {
			return nil, fmt.Errorf("%w: path length of file %d", errCorrupt, i)
		}
		b = b[n:]
		f := &files[i]
		f.Path = string(b[:plen])
		b = b[plen:]
		size, n := binary.Uvarint(b)
		if n <= 0 || size > 1<<62 {
			return nil, fmt.Errorf("%w: size of file %d", errCorrupt, i)
		}
		f.Size = int64(size)
		b = b[n:]
		if len(b) < len(f.Hash)+1 {
			return nil, fmt.Errorf("%w: file %d truncated", errCorrupt, i)
		}
		copy(f.Hash[:], b)
		flags := b[len(f.Hash)]
		f.Binary, f.UTF8 = flags&1 == 1, store.UTF8(flags>>1)
		if f.UTF8 > store.UTF8Invalid {
			return nil, fmt.Errorf("%w: flags of file %d", errCorrupt, i)
		}
		b = b[len(f.Hash)+1:]
		mode, n := binary.Uvarint(b)
		if n <= 0 || mode > math.MaxInt32 {
			return nil, fmt.Errorf("%w: mode of file %d", errCorrupt, i)
		}
		f.Mode = uint32(mode)
		b = b[n:]
		order, n := binary.Uvarint(b)
		if n <= 0 || order > math.MaxInt32 {
			return nil, fmt.Errorf("%w: order of file %d", errCorrupt, i)
		}
		f.Order = int(order)
		b = b[n:]
		if i > 0 && files[i-1].Path >= f.Path {
			return nil, fmt.Errorf("%w: file %d out of order", errCorrupt, i)
		}
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(b))
	}
	return files, nil
}

// filesCost estimates the memory a decoded list holds.
func filesCost(files []store.File) int64 {
	// store.File is 16 (string header) + 8 + 32 + 1 + 4 + 8, padded to 72.
	n := int64(len(files)) * 72
	for _, f := range files {
		n += int64(len(f.Path))
	}
	return n
}
