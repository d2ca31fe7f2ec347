package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
)

// ErrClosed is returned by Search on an Index after Close.
var ErrClosed = errors.New("index is closed")

// Index is one opened index file. It is safe for concurrent use by many
// goroutines; Close waits for searches in flight.
type Index struct {
	mu     sync.RWMutex // read-held by Search, so Close cannot unmap under it
	closed bool
	unmap  func() error

	text   []byte     // nil for an index opened from its stored form
	src    TextSource // the text's source for such an index, else nil
	keys   []byte     // its keys section, and where content i's key
	keyOff []uint32   // starts in it
	paths  []byte
	tris   []byte
	post   []byte
	files  []fileRec
	conts  []contRec
	// contFiles[contFileAt[ci]:contFileAt[ci+1]] are the files holding
	// content ci, in order: a search visits its candidates' files alone.
	contFileAt []uint32
	contFiles  []int32
	blocks     []blockRec
	overlap    int
	freq       [256]uint64 // how often each byte occurs in the text
	stats      Stats
}

// Open maps the index file at path read-only and validates it: header,
// format version, checksum and every table. Any defect is reported as an
// error wrapping ErrCorrupt; Open never panics on a bad file.
func Open(path string) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("index: open: %w", err)
	}
	defer f.Close()
	return OpenFile(f, OpenOptions{})
}

// OpenOptions adjust OpenFile.
type OpenOptions struct {
	// SkipChecksum skips the CRC-32 over the whole file, which is most of
	// an open's cost (65% of a project grep that reopens 406 indexes: it
	// reads every page of every file). Only a caller that has verified
	// this very file before, or has just written it through f, may set
	// it (internal/search does so for a local file whose identity is
	// unchanged since it checked it, and for the scan index it built). Every
	// table is still checked, so even then a bad file is an error, never
	// a panic.
	SkipChecksum bool
}

// OpenFile is Open on an open file, which the caller still closes (the
// mapping outlives it). The caller can so stat the very file mapped.
func OpenFile(f *os.File, opt OpenOptions) (*Index, error) {
	path := f.Name()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("index: stat: %w", err)
	}
	size := fi.Size()
	if size < headerSize+trailerSize {
		return nil, fmt.Errorf("index: %s: %d bytes is too short: %w", path, size, ErrCorrupt)
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("index: %s: too large to map", path)
	}
	data, unmap, err := mapFile(f, int(size))
	if err != nil {
		return nil, fmt.Errorf("index: mmap %s: %w", path, err)
	}
	ix, err := load(data, !opt.SkipChecksum, false)
	if err != nil {
		_ = unmap()
		return nil, fmt.Errorf("index: %s: %w", path, err)
	}
	ix.unmap = unmap
	return ix, nil
}

// OpenBytes validates an index held in memory (for a node that caches
// indexes in RAM rather than on disk). data must not change while the
// Index is in use.
func OpenBytes(data []byte) (*Index, error) {
	ix, err := load(data, true, false)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	return ix, nil
}

// TextSource gives an index opened from its stored form (OpenStored) the
// text it does not hold.
type TextSource interface {
	// Body returns the bytes of the body named key (a Doc.Key: for the
	// store, its SHA-256 hash), the same bytes Build read. The index only
	// reads the slice and does not keep it past the search that asked.
	Body(ctx context.Context, key string) ([]byte, error)
}

// OpenStored validates data, an index's stored form (the bytes StoredForm
// yields), and returns an Index that answers every query exactly as the
// full file would, reading a content's text through src only when a search
// reaches that content. data must not change while the Index is in use.
//
// Every table is checked as Open checks a full file, and a defect is an
// error wrapping ErrCorrupt. The file's checksum cannot be: it covers the
// text, which data lacks. The caller vouches for data instead
// (internal/search checks each stored chunk's SHA-256). A body src returns
// is checked only for its length (and its byte order mark), so src too
// must return verified bytes. Stats are those of the full file, IndexBytes
// included.
//
// A search that reaches a content calls src.Body with a context that ends
// with the search's ctx or at its Timeout; Close waits for such calls.
// Memory: data, 4 bytes per content and the tables Open decodes (each
// content's text is held only while a search scans it).
func OpenStored(data []byte, src TextSource) (*Index, error) {
	if src == nil {
		return nil, errors.New("index: OpenStored needs a TextSource")
	}
	ix, err := load(data, false, true)
	if err != nil {
		return nil, fmt.Errorf("index: stored form: %w", err)
	}
	ix.src = src
	return ix, nil
}

// Close releases the mapping. It waits for searches in flight; later
// searches fail with ErrClosed. Close is idempotent.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	ix.text, ix.paths, ix.tris, ix.post, ix.files, ix.conts, ix.blocks = nil, nil, nil, nil, nil, nil, nil
	ix.contFileAt, ix.contFiles = nil, nil
	ix.src, ix.keys, ix.keyOff = nil, nil, nil
	if ix.unmap != nil {
		if err := ix.unmap(); err != nil {
			return fmt.Errorf("index: munmap: %w", err)
		}
	}
	return nil
}

// Stats returns the statistics stored in the index.
func (ix *Index) Stats() Stats {
	st := ix.stats
	st.NotIndexed = append([]string(nil), st.NotIndexed...)
	return st
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrCorrupt)
}

// load validates data (its checksum too when checksum is set) and builds
// the Index over it. With stored set, data is the stored form: the file
// without its text section, every later section textLen bytes before the
// offset the trailer gives.
func load(data []byte, checksum, stored bool) (*Index, error) {
	size := uint64(len(data))
	if size < headerSize+trailerSize {
		return nil, corrupt("%d bytes is too short", size)
	}
	if string(data[:8]) != headerMagic {
		return nil, corrupt("bad magic")
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != FormatVersion {
		return nil, corrupt("format version %d, want %d", v, FormatVersion)
	}
	tb := data[size-trailerSize:]
	if string(tb[trailerFields*8:trailerFields*8+8]) != trailerMagic {
		return nil, corrupt("bad trailer magic")
	}
	want := binary.LittleEndian.Uint32(tb[trailerSize-4:])
	if checksum && crc32Checksum(data[:size-4]) != want {
		return nil, corrupt("checksum mismatch")
	}
	var t trailer
	t.decode(tb)

	// The sections are contiguous and in a fixed order, so checking each
	// length against the space left rules out overflow and overlap. In
	// the stored form the text is absent: each later section sits shift
	// bytes before its offset, and the whole file (size+shift bytes) must
	// still fit in an int.
	pos := uint64(headerSize)
	end := size - trailerSize
	var shift uint64
	section := func(name string, off, n uint64) ([]byte, error) {
		if off != pos+shift || n > end-pos {
			return nil, corrupt("%s section [%d,+%d) out of place", name, off, n)
		}
		pos += n
		return data[pos-n : pos], nil
	}
	fail := func(err error) (*Index, error) { return nil, err }
	var text []byte
	var err error
	if stored {
		if t.textOff != headerSize || t.textLen > uint64(math.MaxInt)-size {
			return fail(corrupt("text section [%d,+%d) out of place", t.textOff, t.textLen))
		}
		shift = t.textLen
	} else if text, err = section("text", t.textOff, t.textLen); err != nil {
		return fail(err)
	}
	paths, err := section("paths", t.pathsOff, t.pathsLen)
	if err != nil {
		return fail(err)
	}
	if t.nFiles > end/fileRecSize || t.nConts > end/contRecSize || t.nBlocks > end/blockRecSize || t.nTris > end/triRecSize {
		return fail(corrupt("table counts exceed the file"))
	}
	filesB, err := section("files", t.filesOff, t.nFiles*fileRecSize)
	if err != nil {
		return fail(err)
	}
	contsB, err := section("contents", t.contsOff, t.nConts*contRecSize)
	if err != nil {
		return fail(err)
	}
	keysB, err := section("keys", t.keysOff, t.keysLen)
	if err != nil {
		return fail(err)
	}
	var keyOff []uint32
	if stored {
		if t.keysLen > math.MaxUint32 {
			return fail(corrupt("keys section of %d bytes", t.keysLen))
		}
		keyOff = make([]uint32, t.nConts)
	}
	if err := checkKeys(keysB, t.nConts, keyOff); err != nil {
		return fail(err)
	}
	blocksB, err := section("blocks", t.blocksOff, t.nBlocks*blockRecSize)
	if err != nil {
		return fail(err)
	}
	tris, err := section("trigrams", t.trisOff, t.nTris*triRecSize)
	if err != nil {
		return fail(err)
	}
	post, err := section("postings", t.postOff, t.postLen)
	if err != nil {
		return fail(err)
	}
	freqB, err := section("byte counts", t.freqOff, freqSize)
	if err != nil {
		return fail(err)
	}
	if pos != end {
		return fail(corrupt("%d unaccounted bytes before the trailer", end-pos))
	}
	if t.overlap > 1<<30 || t.blockSize > 1<<30 {
		return fail(corrupt("build settings out of range"))
	}

	ix := &Index{text: text, paths: paths, tris: tris, post: post, overlap: int(t.overlap)}
	if stored {
		ix.keys, ix.keyOff = keysB, keyOff
	}
	for c := range ix.freq {
		ix.freq[c] = binary.LittleEndian.Uint64(freqB[c*8:])
	}

	// Contents: text in order, blocks in order.
	ix.conts = make([]contRec, t.nConts)
	var textPos, textBytes, idxBytes uint64
	for i := range ix.conts {
		c := decodeContRec(contsB[i*contRecSize:])
		if c.flags&^(fileBinary|fileNotIndexed|fileBOM) != 0 {
			return fail(corrupt("content %d: unknown flags %#x", i, c.flags))
		}
		if c.textOff != textPos || c.textLen > t.textLen-textPos {
			return fail(corrupt("content %d: text out of place", i))
		}
		textPos += c.textLen
		if c.flags&fileBinary != 0 {
			if c.textLen != 0 || c.flags != fileBinary {
				return fail(corrupt("content %d: binary body with text", i))
			}
		} else {
			textBytes += c.textLen
			if c.flags&fileNotIndexed == 0 {
				idxBytes += c.textLen
			}
		}
		if uint64(c.firstBlock) > t.nBlocks || (i > 0 && c.firstBlock < ix.conts[i-1].firstBlock) {
			return fail(corrupt("content %d: blocks out of order", i))
		}
		ix.conts[i] = c
	}
	if textPos != t.textLen {
		return fail(corrupt("text section has %d bytes no content owns", t.textLen-textPos))
	}
	if textBytes != t.textBytes || idxBytes != t.idxBytes {
		return fail(corrupt("stats disagree with the contents table"))
	}

	// Files: paths sorted, each content first used in id order.
	ix.files = make([]fileRec, t.nFiles)
	var textFiles, binFiles uint64
	var notIndexed []string
	var prevPath []byte
	nextCont := uint32(0)
	for i := range ix.files {
		r, ok := decodeFileRec(filesB[i*fileRecSize:])
		if !ok {
			return fail(corrupt("file %d: reserved field set", i))
		}
		if uint64(r.pathOff)+uint64(r.pathLen) > t.pathsLen {
			return fail(corrupt("file %d: path out of range", i))
		}
		p := paths[r.pathOff : r.pathOff+r.pathLen]
		if i > 0 && bytes.Compare(prevPath, p) >= 0 {
			return fail(corrupt("file %d: paths not sorted", i))
		}
		prevPath = p
		switch {
		case r.content > nextCont || uint64(r.content) >= t.nConts:
			return fail(corrupt("file %d: content out of order", i))
		case r.content == nextCont:
			nextCont++
		}
		c := ix.conts[r.content]
		if c.flags&fileBinary != 0 {
			binFiles++
		} else {
			textFiles++
			if c.flags&fileNotIndexed != 0 {
				notIndexed = append(notIndexed, string(p))
			}
		}
		ix.files[i] = r
	}
	if uint64(nextCont) != t.nConts {
		return fail(corrupt("%d contents no file holds", t.nConts-uint64(nextCont)))
	}
	ix.contFileAt, ix.contFiles = filesByContent(ix.files, len(ix.conts))
	if textFiles != t.textFiles || binFiles != t.binFiles {
		return fail(corrupt("stats disagree with the files table"))
	}

	if (t.nConts == 0 && t.nBlocks != 0) || (t.nConts > 0 && ix.conts[0].firstBlock != 0) {
		return fail(corrupt("blocks owned by no content"))
	}
	ix.blocks = make([]blockRec, t.nBlocks)
	for ci := range ix.conts {
		c := ix.conts[ci]
		lo, hi := ix.contBlocks(ci)
		if c.textLen == 0 && lo != hi {
			return fail(corrupt("content %d: empty body with blocks", ci))
		}
		if c.textLen > 0 && lo == hi {
			return fail(corrupt("content %d: text without blocks", ci))
		}
		for k := lo; k < hi; k++ {
			b := decodeBlockRec(blocksB[k*blockRecSize:])
			switch {
			case b.file != uint32(ci):
				return fail(corrupt("block %d: wrong content", k))
			case k == lo && b.start != 0, k > lo && b.start <= ix.blocks[k-1].start, b.start >= c.textLen:
				return fail(corrupt("block %d: start out of order", k))
			case b.lineStart > b.start || b.line == 0:
				return fail(corrupt("block %d: bad line", k))
			case b.flags&^blockCont != 0:
				return fail(corrupt("block %d: unknown flags", k))
			case b.flags&blockCont != 0 && k+1 == hi:
				return fail(corrupt("block %d: continues past its content", k))
			}
			startsGroup := k == lo || ix.blocks[k-1].flags&blockCont == 0
			if (startsGroup && b.group != uint32(k)) || (!startsGroup && b.group != ix.blocks[k-1].group) {
				return fail(corrupt("block %d: bad group", k))
			}
			ix.blocks[k] = b
		}
	}

	var prev uint32
	for i := uint64(0); i < t.nTris; i++ {
		tri := binary.LittleEndian.Uint32(tris[i*triRecSize:])
		off := binary.LittleEndian.Uint64(tris[i*triRecSize+4:])
		if tri >= 1<<24 || (i > 0 && tri <= prev) {
			return fail(corrupt("trigram table not sorted"))
		}
		if off > t.postLen || (i > 0 && off < binary.LittleEndian.Uint64(tris[(i-1)*triRecSize+4:])) {
			return fail(corrupt("trigram %d: postings out of range", i))
		}
		prev = tri
	}

	ix.stats = Stats{
		Format:       FormatVersion,
		Files:        int(t.nFiles),
		TextFiles:    int(textFiles),
		BinaryFiles:  int(binFiles),
		Contents:     int(t.nConts),
		TextBytes:    int64(textBytes),
		IndexedBytes: int64(idxBytes),
		Coverage:     coverage(int64(idxBytes), int64(textBytes)),
		IndexBytes:   int64(size + shift),
		Blocks:       int(t.nBlocks),
		Trigrams:     int(t.nTris),
		NotIndexed:   notIndexed,
	}
	return ix, nil
}

// contBlocks returns the block ids [lo, hi) of content ci.
func (ix *Index) contBlocks(ci int) (int, int) {
	lo := int(ix.conts[ci].firstBlock)
	hi := len(ix.blocks)
	if ci+1 < len(ix.conts) {
		hi = int(ix.conts[ci+1].firstBlock)
	}
	return lo, hi
}

// contText returns the searchable text of content ci: a slice of the
// mapping for a full file, else its body read through ix.src with ctx.
// A body that is not the content's text (of another length, or without
// the byte order mark the content's flag says it had) wraps ErrCorrupt.
func (ix *Index) contText(ctx context.Context, ci int) ([]byte, error) {
	c := ix.conts[ci]
	if ix.src == nil {
		return ix.text[c.textOff : c.textOff+c.textLen], nil
	}
	b, err := ix.src.Body(ctx, string(ix.contKey(ci)))
	if err != nil {
		return nil, err
	}
	return ix.bodyText(ci, b)
}

// contKey is the key of content ci's body (an index from OpenStored).
func (ix *Index) contKey(ci int) []byte {
	key, _, _ := nextKey(ix.keys[ix.keyOff[ci]:]) // checked at open
	return key
}

// bodyText is content ci's text in b, the body its source gave: b less
// its byte order mark, checked against what the index says of it.
func (ix *Index) bodyText(ci int, b []byte) ([]byte, error) {
	c := ix.conts[ci]
	if c.flags&fileBOM != 0 {
		if !bytes.HasPrefix(b, utf8BOM) {
			return nil, corrupt("the body has no byte order mark")
		}
		b = b[len(utf8BOM):]
	}
	if uint64(len(b)) != c.textLen {
		return nil, corrupt("the body has %d bytes of text, the index %d", len(b), c.textLen)
	}
	return b, nil
}

// filesByContent indexes files by their content (CSR form).
func filesByContent(files []fileRec, nConts int) ([]uint32, []int32) {
	at := make([]uint32, nConts+1)
	for _, f := range files {
		at[f.content+1]++
	}
	for i := 1; i < len(at); i++ {
		at[i] += at[i-1]
	}
	out := make([]int32, len(files))
	next := slices.Clone(at[:nConts])
	for fi, f := range files {
		out[next[f.content]] = int32(fi)
		next[f.content]++
	}
	return at, out
}

// filePath returns the path of file fi.
func (ix *Index) filePath(fi int) string {
	f := ix.files[fi]
	return string(ix.paths[f.pathOff : f.pathOff+f.pathLen])
}

// blockEnd returns the end offset (in its content's text) of block k.
func (ix *Index) blockEnd(k int) uint64 {
	b := ix.blocks[k]
	if k+1 < len(ix.blocks) && ix.blocks[k+1].file == b.file {
		return ix.blocks[k+1].start
	}
	return ix.conts[b.file].textLen
}
