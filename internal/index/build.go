package index

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// Doc is one file of a package version.
type Doc struct {
	// Path is the file's path in the package, slash-separated. Build
	// orders files by path bytes; two docs with one path are an error.
	Path string
	// Data is the whole file body, unless Load is set. Build does not
	// keep it after returning.
	Data []byte
	// Key names the body: docs with one Key hold the same bytes, which
	// Build reads, stores and indexes once. Empty means the key is the
	// SHA-256 of Data. Docs with Load must have a Key (the store's hash).
	// The index records each key (at most 255 bytes) so that OpenStored
	// can read a body's text from the store.
	Key string
	// Load, when set, returns the body instead of Data. Build calls it
	// once per distinct Key, when it reaches that body, and drops the
	// bytes once they are written: a build holds one body at a time.
	Load func() ([]byte, error)
}

// BuildLimits are the settings of Build. The zero value is not usable;
// start from DefaultBuildLimits.
type BuildLimits struct {
	// BlockSize is the most bytes of text per block, the unit of a
	// posting list. Smaller blocks make a selective search scan less text
	// but grow the postings. Measured on next@16.4.6 (183 MB): 4 KiB
	// blocks give postings of 0.34x the source, 8 KiB 0.27x, 16 KiB 0.22x;
	// useRouter took 1.2, 1.1 and 1.8 ms. 8 KiB is the default.
	BlockSize int
	// Overlap is how many bytes past a mid-line block end the block also
	// indexes trigrams of. Queries whose matches are at most Overlap+3
	// bytes long are then evaluated per block (see the package comment);
	// 256 covers any identifier or literal one would grep for.
	Overlap int
	// BinarySniffBytes is how much of a file's start is checked for a NUL
	// byte; a file with one is binary and not searched. 8000 is what git
	// and ripgrep's documentation use.
	BinarySniffBytes int
	// MaxIndexedBytes caps the text bytes given trigrams, which bounds
	// Build's memory (postings are held in memory until written, about
	// 0.3 bytes per text byte on npm code, plus 2.5 MB of tables). Files
	// past the cap, in path order, are stored unindexed and scanned at
	// query time: they are listed in Stats.NotIndexed and lower
	// Stats.Coverage. npm's largest packages unpack to a few hundred MB.
	MaxIndexedBytes int64
	// MaxIndexBytes caps the size of one index file (text, tables and
	// postings); Build fails with ErrTooLarge beyond it, having written
	// at most about MaxIndexBytes. The text of each distinct body counts
	// once, however many files hold it.
	MaxIndexBytes int64
	// MaxFiles caps the number of docs; Build fails with ErrTooLarge
	// beyond it. npm's largest tarballs hold about 100,000 files.
	MaxFiles int
}

// DefaultBuildLimits returns the settings used by pkgscope.
func DefaultBuildLimits() BuildLimits {
	return BuildLimits{
		BlockSize:        8 << 10,
		Overlap:          256,
		BinarySniffBytes: 8000,
		MaxIndexedBytes:  1 << 30,
		MaxIndexBytes:    1 << 30,
		MaxFiles:         1 << 20,
	}
}

func (l BuildLimits) validate() error {
	switch {
	case l.BlockSize < 64 || l.BlockSize > 1<<30:
		return fmt.Errorf("index: BuildLimits.BlockSize %d out of range [64, 1<<30]", l.BlockSize)
	case l.Overlap < 0 || l.Overlap > l.BlockSize:
		return fmt.Errorf("index: BuildLimits.Overlap %d out of range [0, BlockSize]", l.Overlap)
	case l.BinarySniffBytes < 0:
		return fmt.Errorf("index: BuildLimits.BinarySniffBytes %d is negative", l.BinarySniffBytes)
	case l.MaxIndexedBytes < 0:
		return fmt.Errorf("index: BuildLimits.MaxIndexedBytes %d is negative", l.MaxIndexedBytes)
	case l.MaxIndexBytes <= 0:
		return fmt.Errorf("index: BuildLimits.MaxIndexBytes %d must be positive", l.MaxIndexBytes)
	case l.MaxFiles <= 0 || l.MaxFiles > 1<<31:
		return fmt.Errorf("index: BuildLimits.MaxFiles %d out of range [1, 1<<31]", l.MaxFiles)
	}
	return nil
}

// ErrTooLarge is returned (wrapped) by Build when the docs exceed
// BuildLimits.MaxFiles or the index would exceed MaxIndexBytes.
var ErrTooLarge = errors.New("package too large to index")

// Stats describes one index. Build returns it and it is stored in the
// index, so Index.Stats needs no recomputation.
type Stats struct {
	// Format is the FormatVersion the index was written with.
	Format int
	// Files counts every doc; TextFiles + BinaryFiles == Files.
	// Contents counts the distinct bodies among them.
	Files, TextFiles, BinaryFiles, Contents int
	// TextBytes is the searchable text of the distinct text bodies (a
	// body held by many files counts once); IndexedBytes the part of it
	// given trigrams.
	TextBytes, IndexedBytes int64
	// Coverage is IndexedBytes/TextBytes (1 when there is no text).
	Coverage float64
	// IndexBytes is the size of the index file, text included.
	IndexBytes int64
	// Blocks and Trigrams count blocks and distinct trigrams.
	Blocks, Trigrams int
	// NotIndexed lists text files stored without trigrams; Search scans
	// them in full for every query instead of dropping them.
	NotIndexed []string
}

// Build writes the index of one package version to w and returns its
// Stats. The index is self-contained: it holds the text of every distinct
// text body as well as the postings, so a grep needs only this file.
// Files are ordered by path; binary files (a NUL byte in the first
// BinarySniffBytes) are listed but their bytes are not stored. Build
// never skips a text file for its line lengths, trigram count or encoding.
//
// Memory: the text goes to w as each body is read, so a build holds one
// body, the postings (about 0.3 bytes per indexed text byte, at most
// MaxIndexedBytes of text) and the small tables.
func Build(w io.Writer, docs []Doc, lim BuildLimits) (Stats, error) {
	if err := lim.validate(); err != nil {
		return Stats{}, err
	}
	if len(docs) > lim.MaxFiles {
		return Stats{}, fmt.Errorf("index: %d files, more than MaxFiles %d: %w", len(docs), lim.MaxFiles, ErrTooLarge)
	}
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return docs[order[a]].Path < docs[order[b]].Path })
	for i := 1; i < len(order); i++ {
		if docs[order[i]].Path == docs[order[i-1]].Path {
			return Stats{}, fmt.Errorf("index: duplicate path %q", docs[order[i]].Path)
		}
	}

	cw := &countingWriter{w: w, crc: crc32.New(crcTable)}
	bw := bufio.NewWriterSize(cw, 1<<20)
	var hdr [headerSize]byte
	copy(hdr[:], headerMagic)
	binary.LittleEndian.PutUint32(hdr[8:], FormatVersion)
	if _, err := bw.Write(hdr[:]); err != nil {
		return Stats{}, fmt.Errorf("index: write header: %w", err)
	}

	var (
		st       = Stats{Format: FormatVersion, Files: len(docs)}
		paths    []byte
		files    = make([]byte, 0, len(docs)*fileRecSize)
		conts    []byte
		keys     []byte
		contByID []contRec
		byKey    = map[string]uint32{}
		blocks   []byte
		nBlock   uint32
		pb       = newPostingBuilder()
		textN    uint64
		freq     [256]uint64
	)
	tooLarge := func(n uint64) error {
		if int64(n) > lim.MaxIndexBytes {
			return fmt.Errorf("index: the index would exceed MaxIndexBytes %d: %w", lim.MaxIndexBytes, ErrTooLarge)
		}
		return nil
	}
	for _, di := range order {
		d := &docs[di]
		if len(d.Path) > 1<<16 {
			return Stats{}, fmt.Errorf("index: path of %d bytes is too long", len(d.Path))
		}
		k := d.Key
		if k == "" {
			if d.Load != nil {
				return Stats{}, fmt.Errorf("index: %s: a doc with Load needs a Key", d.Path)
			}
			sum := sha256.Sum256(d.Data)
			k = string(sum[:])
		}
		if len(k) > maxKeyLen {
			return Stats{}, fmt.Errorf("index: %s: key of %d bytes, more than %d", d.Path, len(k), maxKeyLen)
		}
		rec := fileRec{pathOff: uint32(len(paths)), pathLen: uint32(len(d.Path))}
		paths = append(paths, d.Path...)
		if uint64(len(paths)) > 1<<32-1 {
			return Stats{}, fmt.Errorf("index: paths exceed 4 GiB: %w", ErrTooLarge)
		}
		ci, seen := byKey[k]
		if !seen {
			data := d.Data
			if d.Load != nil {
				var err error
				if data, err = d.Load(); err != nil {
					return Stats{}, fmt.Errorf("index: reading %s: %w", d.Path, err)
				}
			}
			ci = uint32(len(contByID))
			byKey[k] = ci
			c := contRec{size: uint64(len(data)), firstBlock: nBlock, textOff: textN}
			if isBinary(data, lim.BinarySniffBytes) {
				c.flags |= fileBinary
			} else {
				text := data
				if bytes.HasPrefix(text, utf8BOM) {
					text = text[len(utf8BOM):]
					c.flags |= fileBOM
				}
				c.textLen = uint64(len(text))
				textN += uint64(len(text))
				st.TextBytes += int64(len(text))
				if err := tooLarge(headerSize + textN); err != nil {
					return Stats{}, err
				}
				if st.IndexedBytes+int64(len(text)) <= lim.MaxIndexedBytes {
					st.IndexedBytes += int64(len(text))
				} else {
					c.flags |= fileNotIndexed
				}
				countBytes(&freq, text)
				if _, err := bw.Write(text); err != nil {
					return Stats{}, fmt.Errorf("index: write text: %w", err)
				}
				var err error
				blocks, nBlock, err = splitBlocks(blocks, nBlock, ci, text, c.flags&fileNotIndexed == 0, lim, pb)
				if err != nil {
					return Stats{}, err
				}
			}
			contByID = append(contByID, c)
			conts = c.append(conts)
			keys = binary.AppendUvarint(keys, uint64(len(k)))
			keys = append(keys, k...)
		}
		rec.content = ci
		c := contByID[ci]
		if c.flags&fileBinary != 0 {
			st.BinaryFiles++
		} else {
			st.TextFiles++
			if c.flags&fileNotIndexed != 0 {
				st.NotIndexed = append(st.NotIndexed, d.Path)
			}
		}
		files = rec.append(files)
	}
	st.Contents = len(contByID)

	t := trailer{
		textOff: headerSize, textLen: textN,
		nFiles: uint64(len(docs)), nBlocks: uint64(nBlock), nConts: uint64(len(contByID)),
		blockSize: uint64(lim.BlockSize), overlap: uint64(lim.Overlap), binarySniff: uint64(lim.BinarySniffBytes),
		textFiles: uint64(st.TextFiles), binFiles: uint64(st.BinaryFiles),
		textBytes: uint64(st.TextBytes), idxBytes: uint64(st.IndexedBytes),
	}
	off := uint64(headerSize) + textN
	t.pathsOff, t.pathsLen = off, uint64(len(paths))
	off += t.pathsLen
	t.filesOff = off
	off += uint64(len(files))
	t.contsOff = off
	off += uint64(len(conts))
	t.keysOff, t.keysLen = off, uint64(len(keys))
	off += t.keysLen
	t.blocksOff = off
	off += uint64(len(blocks))
	t.trisOff = off
	triTable, postLen := pb.table()
	t.nTris = uint64(len(triTable) / triRecSize)
	off += uint64(len(triTable))
	t.postOff, t.postLen = off, postLen
	t.freqOff = t.postOff + t.postLen
	if err := tooLarge(t.freqOff + freqSize + trailerSize); err != nil {
		return Stats{}, err
	}
	for _, sec := range [][]byte{paths, files, conts, keys, blocks, triTable} {
		if _, err := bw.Write(sec); err != nil {
			return Stats{}, fmt.Errorf("index: write tables: %w", err)
		}
	}
	if err := pb.writePostings(bw); err != nil {
		return Stats{}, fmt.Errorf("index: write postings: %w", err)
	}
	freqB := make([]byte, 0, freqSize)
	for _, c := range freq {
		freqB = binary.LittleEndian.AppendUint64(freqB, c)
	}
	if _, err := bw.Write(freqB); err != nil {
		return Stats{}, fmt.Errorf("index: write byte counts: %w", err)
	}
	if _, err := bw.Write(t.encode()); err != nil {
		return Stats{}, fmt.Errorf("index: write trailer: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return Stats{}, fmt.Errorf("index: write: %w", err)
	}
	var crc [4]byte
	binary.LittleEndian.PutUint32(crc[:], cw.crc.Sum32())
	if _, err := cw.Write(crc[:]); err != nil {
		return Stats{}, fmt.Errorf("index: write checksum: %w", err)
	}
	st.IndexBytes = cw.n
	st.Blocks = int(nBlock)
	st.Trigrams = int(t.nTris)
	st.Coverage = coverage(st.IndexedBytes, st.TextBytes)
	return st, nil
}

// BuildFile builds the index at path atomically: it writes a temporary
// file in the same directory, syncs it, checks it with Open, and renames
// it over path. Readers holding the old file keep a valid mapping.
func BuildFile(path string, docs []Doc, lim BuildLimits) (Stats, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return Stats{}, fmt.Errorf("index: create temp file: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	st, err := Build(f, docs, lim)
	if err != nil {
		return Stats{}, err
	}
	if err := f.Sync(); err != nil {
		return Stats{}, fmt.Errorf("index: sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return Stats{}, fmt.Errorf("index: close %s: %w", tmp, err)
	}
	ix, err := Open(tmp)
	if err != nil {
		return Stats{}, fmt.Errorf("index: check written index: %w", err)
	}
	if err := ix.Close(); err != nil {
		return Stats{}, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return Stats{}, fmt.Errorf("index: publish %s: %w", path, err)
	}
	ok = true
	return st, nil
}

// countBytes adds the byte histogram of text to freq. Search uses it to
// look for a literal's rarest byte first ("R" in useRouter), as ripgrep
// does with a fixed table; counting per package adapts to minified JS.
func countBytes(freq *[256]uint64, text []byte) {
	var c [4][256]uint32 // four tables break the store-to-load dependency
	for len(text) > 0 {
		chunk := text[:min(len(text), 1<<24)] // keep uint32 counts from overflowing
		text = text[len(chunk):]
		i := 0
		for ; i+4 <= len(chunk); i += 4 {
			c[0][chunk[i]]++
			c[1][chunk[i+1]]++
			c[2][chunk[i+2]]++
			c[3][chunk[i+3]]++
		}
		for ; i < len(chunk); i++ {
			c[0][chunk[i]]++
		}
		for b := range freq {
			freq[b] += uint64(c[0][b]) + uint64(c[1][b]) + uint64(c[2][b]) + uint64(c[3][b])
		}
		c = [4][256]uint32{}
	}
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// isBinary reports whether data holds a NUL byte in its first sniff bytes.
func isBinary(data []byte, sniff int) bool {
	if len(data) > sniff {
		data = data[:sniff]
	}
	return bytes.IndexByte(data, 0) >= 0
}

func coverage(indexed, text int64) float64 {
	if text == 0 {
		return 1
	}
	return float64(indexed) / float64(text)
}

// splitBlocks cuts one file's text into blocks, appends their records to
// blocks and, when indexed, their trigrams to pb. It returns the grown
// table and the next block id.
func splitBlocks(blocks []byte, id, file uint32, text []byte, indexed bool, lim BuildLimits, pb *postingBuilder) ([]byte, uint32, error) {
	n := len(text)
	pos, line, lineStart := 0, uint32(1), 0
	group := id
	for pos < n {
		if id == 1<<32-1 {
			return nil, 0, fmt.Errorf("index: more than 4G blocks: %w", ErrTooLarge)
		}
		end := pos + lim.BlockSize
		cont := false
		if end >= n {
			end = n
		} else if i := bytes.LastIndexByte(text[pos:end], '\n'); i >= 0 {
			end = pos + i + 1
		} else {
			cont = true
		}
		if pos == lineStart {
			group = id
		}
		rec := blockRec{start: uint64(pos), lineStart: uint64(lineStart), line: line, file: file, group: group}
		if cont {
			rec.flags |= blockCont
		}
		blocks = rec.append(blocks)
		if indexed {
			ext := end
			if cont {
				ext = min(end+lim.Overlap, n)
			}
			pb.addBlock(id, text, pos, ext)
		}
		if nl := bytes.Count(text[pos:end], newline); nl > 0 {
			line += uint32(nl)
			lineStart = pos + bytes.LastIndexByte(text[pos:end], '\n') + 1
		}
		pos = end
		id++
	}
	return blocks, id, nil
}

var newline = []byte{'\n'}

// postingBuilder accumulates the posting lists in memory. Trigrams are 24
// bits; a two-level table (first two bytes, then the third) finds a list
// without hashing, and a 2 MB bitmap deduplicates trigrams within a block.
type postingBuilder struct {
	top   [1 << 16]*[256]int32 // index+1 into lists; 0 = no list yet
	lists []postingList
	seen  []uint64 // 1<<24 bits
	cur   []uint32 // trigrams of the current block
}

type postingList struct {
	last uint32 // last block id appended
	n    uint32 // entries appended
	buf  []byte
}

func newPostingBuilder() *postingBuilder {
	return &postingBuilder{seen: make([]uint64, 1<<24/64)}
}

// addBlock records block id as holding every trigram that starts in
// text[from:to] and contains no newline.
func (pb *postingBuilder) addBlock(id uint32, text []byte, from, to int) {
	end := min(to, len(text)-2) // trigram starts
	if from >= end {
		return
	}
	lastNL := -1
	if text[from] == '\n' {
		lastNL = from
	}
	if text[from+1] == '\n' {
		lastNL = from + 1
	}
	t := uint32(text[from])<<8 | uint32(text[from+1])
	seen := pb.seen
	cur := pb.cur[:0]
	for p := from; p < end; p++ {
		c := text[p+2]
		t = (t<<8 | uint32(c)) & 0xFFFFFF
		if c == '\n' {
			lastNL = p + 2
		}
		if lastNL >= p {
			continue
		}
		w, bit := t>>6, uint64(1)<<(t&63)
		if seen[w]&bit == 0 {
			seen[w] |= bit
			cur = append(cur, t)
		}
	}
	for _, t := range cur {
		seen[t>>6] &^= 1 << (t & 63)
		page := pb.top[t>>8]
		if page == nil {
			page = new([256]int32)
			pb.top[t>>8] = page
		}
		li := page[t&255]
		if li == 0 {
			pb.lists = append(pb.lists, postingList{})
			li = int32(len(pb.lists))
			page[t&255] = li
		}
		l := &pb.lists[li-1]
		delta := id - l.last
		if l.n == 0 {
			delta = id
		}
		l.buf = binary.AppendUvarint(l.buf, uint64(delta))
		l.last = id
		l.n++
	}
	pb.cur = cur
}

// table returns the trigram table (sorted by trigram) and the total size of
// the postings it points into.
func (pb *postingBuilder) table() ([]byte, uint64) {
	var tab []byte
	var off uint64
	for hi, page := range pb.top {
		if page == nil {
			continue
		}
		for lo, li := range page {
			if li == 0 {
				continue
			}
			tab = binary.LittleEndian.AppendUint32(tab, uint32(hi)<<8|uint32(lo))
			tab = binary.LittleEndian.AppendUint64(tab, off)
			off += uint64(len(pb.lists[li-1].buf))
		}
	}
	return tab, off
}

func (pb *postingBuilder) writePostings(w io.Writer) error {
	for _, page := range pb.top {
		if page == nil {
			continue
		}
		for _, li := range page {
			if li == 0 {
				continue
			}
			if _, err := w.Write(pb.lists[li-1].buf); err != nil {
				return err
			}
		}
	}
	return nil
}

// countingWriter counts and checksums what goes through it.
type countingWriter struct {
	w   io.Writer
	crc hash.Hash32
	n   int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.crc.Write(p[:n])
	c.n += int64(n)
	return n, err
}
