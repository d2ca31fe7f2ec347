package index

import (
	"encoding/binary"
	"fmt"
	"io"
)

// The stored form of an index is the index file without its text section:
// the header, then every byte after the text. The text is a copy of the
// version's file bodies (a leading UTF-8 byte order mark dropped), which
// the store already holds, so keeping it a second time in the stored index
// cost lucide-react@1.81.0 2.6 MB of its 4.5 MB compressed index (30.4 MB
// of its 38.6 MB uncompressed) per version. OpenStored (open.go) searches
// the stored form itself, reading each body, named by the keys section,
// when a search reaches it.

// maxKeyLen bounds a Doc.Key: keys are body hashes (the store's are 32
// bytes), and the keys section must stay a small table.
const maxKeyLen = 255

// checkKeys checks that b holds exactly n keys, each a uvarint length of
// at most maxKeyLen followed by that many bytes. When starts is not nil
// (it then has n entries), starts[i] is set to the offset of key i's
// entry in b.
func checkKeys(b []byte, n uint64, starts []uint32) error {
	all := len(b)
	for i := uint64(0); i < n; i++ {
		if starts != nil {
			starts[i] = uint32(all - len(b))
		}
		_, rest, ok := nextKey(b)
		if !ok {
			return corrupt("key %d: malformed", i)
		}
		b = rest
	}
	if len(b) != 0 {
		return corrupt("%d bytes after the last key", len(b))
	}
	return nil
}

// nextKey splits the first key off b.
func nextKey(b []byte) (key, rest []byte, ok bool) {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > maxKeyLen || l > uint64(len(b)-n) {
		return nil, nil, false
	}
	return b[n : n+int(l)], b[n+int(l):], true
}

// readTrailer reads and checks the header and trailer of an index file
// (full or stored form) of size bytes.
func readTrailer(r io.ReaderAt, size int64) (trailer, error) {
	var t trailer
	if size < headerSize+trailerSize {
		return t, corrupt("%d bytes is too short", size)
	}
	var hdr [headerSize]byte
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return t, fmt.Errorf("index: read header: %w", err)
	}
	if string(hdr[:8]) != headerMagic {
		return t, corrupt("bad magic")
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != FormatVersion {
		return t, corrupt("format version %d, want %d", v, FormatVersion)
	}
	tb := make([]byte, trailerSize)
	if _, err := r.ReadAt(tb, size-trailerSize); err != nil {
		return t, fmt.Errorf("index: read trailer: %w", err)
	}
	if string(tb[trailerFields*8:trailerFields*8+8]) != trailerMagic {
		return t, corrupt("bad trailer magic")
	}
	t.decode(tb)
	if t.textOff != headerSize {
		return t, corrupt("text section out of place")
	}
	return t, nil
}

// StoredForm returns the stored form of the index file r of size bytes
// (see OpenStored) and its length. It reads only the trailer; the returned
// reader reads r.
func StoredForm(r io.ReaderAt, size int64) (io.Reader, int64, error) {
	t, err := readTrailer(r, size)
	if err != nil {
		return nil, 0, err
	}
	if t.textLen > uint64(size-headerSize-trailerSize) {
		return nil, 0, corrupt("text section longer than the file")
	}
	rest := size - headerSize - int64(t.textLen)
	return io.MultiReader(io.NewSectionReader(r, 0, headerSize),
		io.NewSectionReader(r, headerSize+int64(t.textLen), rest)), headerSize + rest, nil
}
