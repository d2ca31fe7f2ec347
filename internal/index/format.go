package index

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// FormatVersion is the on-disk format version written by Build. Open
// rejects any other version with ErrCorrupt, so a serving node rebuilds
// its local copy from the store after an upgrade changes the format.
//
// Version 2 keeps each distinct file body once (a contents table between
// files and blocks): a version whose files repeat one body no longer
// stores and indexes it once per copy. Version 3 names each content's body
// (the keys section), so the store keeps the index without its text
// (StoredForm) and a node serves it from the bodies the store already
// holds (OpenStored).
const FormatVersion = 3

// ErrCorrupt is returned (wrapped) by Open for a file that is not a
// complete, intact index of FormatVersion, by OpenStored for such a stored
// form, and by Search on an index opened with OpenStored when a body its
// TextSource gives is not the text the index was built over.
var ErrCorrupt = errors.New("index file is corrupt or of another format")

const (
	headerMagic  = "pkgsidx\x00"
	trailerMagic = "pkgsend\x00"
	headerSize   = 16
	fileRecSize  = 16
	contRecSize  = 32
	blockRecSize = 32
	triRecSize   = 12
	freqSize     = 256 * 8
	// trailerSize is the fixed trailer: trailerFields u64 values, the
	// magic, then a u32 reserved and the u32 CRC-32C.
	trailerFields = 24
	trailerSize   = trailerFields*8 + 8 + 4 + 4
)

// Content flags.
const (
	fileBinary     = 1 << 0 // NUL in the first BinarySniffBytes: not searched
	fileNotIndexed = 1 << 1 // stored but not indexed: always scanned
	fileBOM        = 1 << 2 // a UTF-8 byte order mark was dropped
)

// Block flags.
const (
	blockCont = 1 << 0 // the block ends mid-line: the next block continues its group
)

// crcTable is CRC-32C (Castagnoli), hardware-accelerated on amd64 and
// arm64: checking a 200 MB index at Open takes about 20 ms.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// trailer is the fixed-size record at the end of an index file.
type trailer struct {
	textOff, textLen    uint64
	pathsOff, pathsLen  uint64
	filesOff, nFiles    uint64
	blocksOff, nBlocks  uint64
	trisOff, nTris      uint64
	postOff, postLen    uint64
	blockSize, overlap  uint64
	binarySniff         uint64
	textFiles, binFiles uint64
	textBytes, idxBytes uint64
	freqOff             uint64 // byte histogram: 256 u64 counts
	contsOff, nConts    uint64
	keysOff, keysLen    uint64 // per content: uvarint length, then the body's key
}

func (t *trailer) fields() []*uint64 {
	return []*uint64{
		&t.textOff, &t.textLen, &t.pathsOff, &t.pathsLen, &t.filesOff, &t.nFiles,
		&t.blocksOff, &t.nBlocks, &t.trisOff, &t.nTris, &t.postOff, &t.postLen,
		&t.blockSize, &t.overlap, &t.binarySniff, &t.textFiles, &t.binFiles,
		&t.textBytes, &t.idxBytes, &t.freqOff, &t.contsOff, &t.nConts,
		&t.keysOff, &t.keysLen,
	}
}

// encode returns the trailer bytes without the final CRC (trailerSize-4
// bytes); the caller appends the CRC of everything written before it.
func (t *trailer) encode() []byte {
	b := make([]byte, 0, trailerSize-4)
	for _, f := range t.fields() {
		b = binary.LittleEndian.AppendUint64(b, *f)
	}
	b = append(b, trailerMagic...)
	b = binary.LittleEndian.AppendUint32(b, 0)
	return b
}

func (t *trailer) decode(b []byte) {
	for i, f := range t.fields() {
		*f = binary.LittleEndian.Uint64(b[i*8:])
	}
}

// fileRec is one entry of the files table: a path and the content it
// holds. Files are sorted by path; a content appears first (in that order)
// before any content with a higher id.
type fileRec struct {
	pathOff, pathLen uint32
	content          uint32
}

func (f *fileRec) append(b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, f.pathOff)
	b = binary.LittleEndian.AppendUint32(b, f.pathLen)
	b = binary.LittleEndian.AppendUint32(b, f.content)
	return binary.LittleEndian.AppendUint32(b, 0)
}

func decodeFileRec(b []byte) (fileRec, bool) {
	return fileRec{
		pathOff: binary.LittleEndian.Uint32(b),
		pathLen: binary.LittleEndian.Uint32(b[4:]),
		content: binary.LittleEndian.Uint32(b[8:]),
	}, binary.LittleEndian.Uint32(b[12:]) == 0
}

// contRec is one entry of the contents table: one distinct file body.
type contRec struct {
	textOff, textLen uint64 // relative to the text section
	size             uint64 // size of the original body
	firstBlock       uint32
	flags            uint32
}

func (c *contRec) append(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, c.textOff)
	b = binary.LittleEndian.AppendUint64(b, c.textLen)
	b = binary.LittleEndian.AppendUint64(b, c.size)
	b = binary.LittleEndian.AppendUint32(b, c.firstBlock)
	return binary.LittleEndian.AppendUint32(b, c.flags)
}

func decodeContRec(b []byte) contRec {
	return contRec{
		textOff:    binary.LittleEndian.Uint64(b),
		textLen:    binary.LittleEndian.Uint64(b[8:]),
		size:       binary.LittleEndian.Uint64(b[16:]),
		firstBlock: binary.LittleEndian.Uint32(b[24:]),
		flags:      binary.LittleEndian.Uint32(b[28:]),
	}
}

// blockRec is one entry of the blocks table. Offsets are relative to the
// start of the block's file text.
type blockRec struct {
	start     uint64 // first byte of the block
	lineStart uint64 // first byte of the line holding start
	line      uint32 // 1-based number of that line
	file      uint32 // the content the block belongs to
	group     uint32 // id of the first block of the group
	flags     uint32
}

func (r *blockRec) append(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, r.start)
	b = binary.LittleEndian.AppendUint64(b, r.lineStart)
	b = binary.LittleEndian.AppendUint32(b, r.line)
	b = binary.LittleEndian.AppendUint32(b, r.file)
	b = binary.LittleEndian.AppendUint32(b, r.group)
	return binary.LittleEndian.AppendUint32(b, r.flags)
}

func decodeBlockRec(b []byte) blockRec {
	return blockRec{
		start:     binary.LittleEndian.Uint64(b),
		lineStart: binary.LittleEndian.Uint64(b[8:]),
		line:      binary.LittleEndian.Uint32(b[16:]),
		file:      binary.LittleEndian.Uint32(b[20:]),
		group:     binary.LittleEndian.Uint32(b[24:]),
		flags:     binary.LittleEndian.Uint32(b[28:]),
	}
}

func crc32Checksum(b []byte) uint32 { return crc32.Checksum(b, crcTable) }
