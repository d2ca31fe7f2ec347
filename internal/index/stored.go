package index

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
)

// The stored form of an index is the index file without its text section:
// the header, then every byte after the text. The text is a copy of the
// version's file bodies (a leading UTF-8 byte order mark dropped), which
// the store already holds, so keeping it a second time in the stored index
// cost lucide-react@1.81.0 2.6 MB of its 4.5 MB compressed index (30.4 MB
// of its 38.6 MB uncompressed) per version. OpenStored (open.go) searches
// the stored form itself, reading each body, named by the keys section,
// when a search reaches it. Assemble puts the text back from the bodies,
// and the file's checksum (which covers the text) proves the result is
// the file Build wrote.

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
// (see Assemble) and its length. It reads only the trailer; the returned
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

// Assemble writes to w the index file whose stored form (StoredForm) is
// stored, size bytes, and returns the bytes written. body returns the
// bytes of the body named key (a Doc.Key, or the SHA-256 of Doc.Data);
// it is called once per distinct text body, in the order Build wrote
// them, and its bytes are not kept. A body of another length, or a result
// whose checksum is not the one Build recorded, is an error wrapping
// ErrCorrupt; Open checks the written file again.
//
// Memory: the contents and keys tables (65 bytes per distinct body with
// the store's 32-byte keys) and one body at a time.
func Assemble(w io.Writer, stored io.ReaderAt, size int64, body func(key string) ([]byte, error)) (int64, error) {
	t, err := readTrailer(stored, size)
	if err != nil {
		return 0, err
	}
	// Offsets in the trailer are those of the full file; in the stored
	// form every section after the text sits textLen bytes earlier.
	tables := uint64(size) - trailerSize
	if t.textLen > 1<<62 || t.contsOff < headerSize+t.textLen || t.contsOff-t.textLen > tables ||
		t.nConts > (tables-(t.contsOff-t.textLen))/contRecSize || t.keysOff != t.contsOff+t.nConts*contRecSize ||
		t.keysLen > tables-(t.keysOff-t.textLen) {
		return 0, corrupt("stored index tables out of place")
	}
	conts := make([]byte, t.nConts*contRecSize)
	if _, err := stored.ReadAt(conts, int64(t.contsOff-t.textLen)); err != nil {
		return 0, fmt.Errorf("index: read contents table: %w", err)
	}
	keys := make([]byte, t.keysLen)
	if _, err := stored.ReadAt(keys, int64(t.keysOff-t.textLen)); err != nil {
		return 0, fmt.Errorf("index: read keys: %w", err)
	}
	if err := checkKeys(keys, t.nConts, nil); err != nil {
		return 0, err
	}

	cw := &countingWriter{w: w, crc: crc32.New(crcTable)}
	if _, err := io.Copy(cw, io.NewSectionReader(stored, 0, headerSize)); err != nil {
		return cw.n, fmt.Errorf("index: write header: %w", err)
	}
	var textPos uint64
	for i := uint64(0); i < t.nConts; i++ {
		c := decodeContRec(conts[i*contRecSize:])
		var key []byte
		key, keys, _ = nextKey(keys)
		if c.textOff != textPos || c.textLen > t.textLen-textPos {
			return cw.n, corrupt("content %d: text out of place", i)
		}
		if c.flags&fileBinary != 0 {
			continue
		}
		data, err := body(string(key))
		if err != nil {
			return cw.n, fmt.Errorf("index: reading the body of content %d: %w", i, err)
		}
		if c.flags&fileBOM != 0 {
			if !bytes.HasPrefix(data, utf8BOM) {
				return cw.n, corrupt("content %d: the body has no byte order mark", i)
			}
			data = data[len(utf8BOM):]
		}
		if uint64(len(data)) != c.textLen {
			return cw.n, corrupt("content %d: the body has %d bytes of text, the index %d", i, len(data), c.textLen)
		}
		if _, err := cw.Write(data); err != nil {
			return cw.n, fmt.Errorf("index: write text: %w", err)
		}
		textPos += c.textLen
	}
	if textPos != t.textLen {
		return cw.n, corrupt("text section has %d bytes no content owns", t.textLen-textPos)
	}
	rest := size - headerSize - 4
	if _, err := io.Copy(cw, io.NewSectionReader(stored, headerSize, rest)); err != nil {
		return cw.n, fmt.Errorf("index: write tables: %w", err)
	}
	var crc [4]byte
	if _, err := stored.ReadAt(crc[:], size-4); err != nil {
		return cw.n, fmt.Errorf("index: read checksum: %w", err)
	}
	if binary.LittleEndian.Uint32(crc[:]) != cw.crc.Sum32() {
		return cw.n, corrupt("the assembled index does not match its checksum")
	}
	if _, err := cw.Write(crc[:]); err != nil {
		return cw.n, fmt.Errorf("index: write checksum: %w", err)
	}
	return cw.n, nil
}
