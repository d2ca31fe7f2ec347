// Package ingest turns an npm tarball into a stored version as it
// downloads: it streams the download through gzip → tar in memory (nothing
// touches disk, and the tarball is never held whole), keeps the regular
// files under the tarball's top folder, writes their bodies to the store
// in batches, and once every byte has matched the registry's integrity,
// commits the file list in one call.
//
// Every hostile-archive hazard has a rule and a test named after it
// (ingest_test.go): path escapes are skipped, never stored; sparse files
// are refused; gzip bombs stop at the caps of Limits without allocating
// past them.
package ingest

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"

	"github.com/pkgscope/pkgscope/internal/pkgpath"
	"github.com/pkgscope/pkgscope/internal/store"
)

// Format is the version of the extraction rules this package stores
// versions under (store.NewVersion.IngestFormat). Bump it when a change
// to them changes what is stored for a version; `indexer reindex` then
// ingests versions of older formats again.
//
//   - 1: the first rules.
//   - 2: each file's tar mode and tarball order are kept (migration
//     00005), which npm diff prints; format-1 versions have neither.
//   - 3: each file's UTF-8 validity is kept (migration 00011), which
//     lets a name-only diff skip reading bodies; older versions have it
//     unknown and are diffed by reading them.
const Format = 3

// Skipped is a tar entry that was not stored, and why. Skipping is not an
// error: npm's own extractor (node-tar) drops the same entries.
type Skipped struct {
	// Path is the package path when the name is clean, else the raw
	// entry name cut to MaxPathBytes (it may not be valid UTF-8).
	Path string
	// Reason is one of the Reason* constants, or for an unclean name the
	// pkgpath error saying what is wrong with it.
	Reason string
}

// Reasons an entry is skipped, stable so callers can filter them: a
// directory entry, for one, loses nothing (its files carry full paths),
// and some packers write one per folder.
const (
	ReasonDirectory    = "directory"
	ReasonSymlink      = "symbolic link"
	ReasonHardlink     = "hard link"
	ReasonDevice       = "device"
	ReasonFifo         = "fifo"
	ReasonGlobalHeader = "pax global header"
	// ReasonAtRoot: a file beside the top folder instead of under it.
	// npm extracts with node-tar's strip:1, which drops it; so do we.
	ReasonAtRoot = "at the archive root, outside any top folder"
)

// Result is what Ingest stored.
type Result struct {
	// Files is what was committed, sorted by Path.
	Files []store.File
	// TotalBytes is the sum of Files' sizes.
	TotalBytes int64
	// Skipped holds the first MaxSkipped entries that were not stored.
	Skipped []Skipped
	// SkippedCount counts every entry not stored.
	SkippedCount int
}

// IsBinary reports whether a body is binary, with git's and ripgrep's
// heuristic: a NUL byte in the first 8000 bytes.
func IsBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// Source is a tarball's bytes as they arrive (upstream.Download): Read
// returns them before anyone has vouched for them, and Verify, called once
// the archive has been read as far as it will be, reads whatever is left
// and returns nil only when every byte matched the integrity the registry
// gave; otherwise the download's failure or a mismatch.
type Source interface {
	io.Reader
	Verify() error
}

// Stream unpacks an npm tarball from src while it downloads and stores it
// as name@version: bodies go to w.PutBlobs in batches of about
// lim.BatchBytes as they come out of the archive, and once the archive's
// end is reached, every batch is stored and src.Verify has vouched for
// every byte, w.CommitVersion records every file sorted by path. So the
// version becomes visible whole or not at all, and only as the registry
// published it: bodies written before the check are content-addressed
// (a body's key is its own sha256, so it cannot pose as another) and
// reachable from no version until the commit.
//
// The top folder of each entry is stripped whatever its name. Only
// regular files are kept; links, directories, devices, FIFOs, entries at
// the archive root and entries with an unclean path ("..", absolute,
// backslash, control characters) are skipped and listed in Result.Skipped.
// A later entry with the same path replaces an earlier one, as extracting
// would; names differing only in case are distinct files.
//
// Errors: src.Verify's (a failed download, an integrity mismatch), which
// also wins over what the archive's bytes caused — a corrupt archive or a
// cap hit means nothing until the bytes are known to be the registry's —;
// else *LimitError (ErrLimit) when a cap of lim is hit, ErrBadArchive when
// gzip or tar is corrupt, ErrUnsupported for sparse files, the context's
// error when ctx ends (checked between entries), and the store's errors,
// among them store.ErrExists when another ingest committed the version
// first. On any error nothing is committed, though blobs already written
// stay (they are harmless and deduplicated). Recording the failure with
// MarkFailed is the caller's decision.
func Stream(ctx context.Context, w store.Writer, name, version, integrity string, src Source, lim Limits) (Result, error) {
	if err := lim.Validate(); err != nil {
		return Result{}, err
	}
	u := &unpacker{ctx: ctx, w: w, lim: lim, paths: lim.paths(), index: map[string]int{}, seen: map[store.Hash]bool{}}
	u.arenas[0].size, u.arenas[1].size = lim.BatchBytes, lim.BatchBytes
	err := u.unpack(src)
	if err == nil {
		err = u.flush()
	}
	if err == nil || fromBytes(err) {
		if verr := src.Verify(); verr != nil {
			err = verr
		}
	}
	if werr := u.wait(); err == nil {
		err = werr
	}
	if err != nil {
		return Result{}, fmt.Errorf("ingest %s@%s: %w", name, version, err)
	}
	slices.SortFunc(u.files, func(a, b store.File) int { return strings.Compare(a.Path, b.Path) })
	var total int64
	for _, f := range u.files {
		total += f.Size
	}
	err = w.CommitVersion(ctx, store.NewVersion{Name: name, Version: version, Integrity: integrity, Files: u.files, IngestFormat: Format})
	if err != nil {
		return Result{}, fmt.Errorf("ingest %s@%s: committing %d files: %w", name, version, len(u.files), err)
	}
	return Result{Files: u.files, TotalBytes: total, Skipped: u.skipped, SkippedCount: u.skippedCount}, nil
}

// Ingest is Stream over tgz, a whole tarball whose integrity the caller
// has already checked.
func Ingest(ctx context.Context, w store.Writer, name, version, integrity string, tgz []byte, lim Limits) (Result, error) {
	return Stream(ctx, w, name, version, integrity, checked{bytes.NewReader(tgz)}, lim)
}

// checked is a Source whose bytes were verified before they were read.
type checked struct{ io.Reader }

func (checked) Verify() error { return nil }

// fromBytes reports the errors that the archive's bytes cause, which a
// failed or tampered download explains better than the archive does.
func fromBytes(err error) bool {
	return errors.Is(err, ErrBadArchive) || errors.Is(err, ErrLimit) || errors.Is(err, ErrUnsupported)
}

// streamBuf is the read buffer between the download and gunzip: 64 KiB
// takes a network read's worth at a time (gzip would otherwise read the
// download 4 KiB at a time, each read hashed and counted separately).
const streamBuf = 64 << 10

// unpacker is the state of one Ingest.
type unpacker struct {
	ctx   context.Context
	w     store.Writer
	lim   Limits
	paths pkgpath.Limits

	files []store.File
	index map[string]int // path → position in files, for last-wins

	entries, regular int
	unpacked         int64 // body bytes read, duplicates included

	batch      []store.Blob
	batchBytes int64
	// writing, when not nil, answers the one batch being written in the
	// background: the store compresses and writes it while the next batch
	// is gunzipped, untarred and hashed (on next@16.4.6 that overlaps
	// about half of the ingest's CPU). At most two batches are held.
	writing chan error
	seen    map[store.Hash]bool // written or in batch: each body goes once
	// arenas[filling] holds the bodies of batch; the other one those of
	// the batch being written, until it is.
	arenas  [2]arena
	filling int

	skipped      []Skipped
	skippedCount int
}

func (u *unpacker) unpack(src io.Reader) error {
	zr, err := gzip.NewReader(bufio.NewReaderSize(src, streamBuf))
	if err != nil {
		return fmt.Errorf("%w: gzip: %w", ErrBadArchive, err)
	}
	defer zr.Close()
	// The end-of-archive marker ends the loop, so trailing bytes are never
	// decompressed and the gzip checksum at the very end is not checked:
	// Stream checks every byte against dist.integrity, a stronger hash,
	// before it commits.
	stream := &capReader{r: zr, max: u.lim.MaxArchiveBytes}
	tr := tar.NewReader(stream)
	for {
		if err := u.ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		// ErrInsecurePath (only with GODEBUG=tarinsecurepath=0) comes with
		// a usable header; pkgpath judges the name below either way.
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			return stream.explain(err, "reading tar header")
		}
		if err := u.entry(tr, stream, hdr); err != nil {
			return err
		}
	}
}

func (u *unpacker) entry(tr *tar.Reader, stream *capReader, hdr *tar.Header) error {
	u.entries++
	if u.entries > u.lim.MaxEntries {
		return &LimitError{Setting: "MaxEntries", Max: int64(u.lim.MaxEntries),
			What: fmt.Sprintf("entry %d (%q)", u.entries, cut(hdr.Name, u.lim.MaxPathBytes))}
	}
	if isSparse(hdr) {
		// Refused from the header: archive/tar would expand the holes
		// as zeros, so a 3 KB entry could be read as 1 TiB.
		return fmt.Errorf("%w: %q is a GNU sparse file claiming %d bytes", ErrUnsupported,
			cut(hdr.Name, u.lim.MaxPathBytes), hdr.Size)
	}
	switch hdr.Typeflag {
	case tar.TypeReg, '\x00', tar.TypeCont:
		// '\x00' is the pre-POSIX regular file (archive/tar already
		// reports it as TypeReg). TypeCont, a "contiguous file", is
		// extracted as a regular file by node-tar, so it is kept too.
	case tar.TypeDir:
		u.skip(hdr.Name, ReasonDirectory)
		return nil
	case tar.TypeSymlink:
		u.skip(hdr.Name, ReasonSymlink)
		return nil
	case tar.TypeLink:
		u.skip(hdr.Name, ReasonHardlink)
		return nil
	case tar.TypeChar, tar.TypeBlock:
		u.skip(hdr.Name, ReasonDevice)
		return nil
	case tar.TypeFifo:
		u.skip(hdr.Name, ReasonFifo)
		return nil
	case tar.TypeXGlobalHeader:
		u.skip(hdr.Name, ReasonGlobalHeader)
		return nil
	default:
		// Its body, if any, is discarded by the next tr.Next, through
		// the MaxArchiveBytes cap.
		u.skip(hdr.Name, fmt.Sprintf("unsupported entry type %q", hdr.Typeflag))
		return nil
	}

	p, err := u.paths.CleanEntry(hdr.Name)
	var tooLong *pkgpath.TooLongError
	switch {
	case errors.As(err, &tooLong):
		setting, max := "MaxPathBytes", u.lim.MaxPathBytes
		if tooLong.Limit == "MaxDepth" {
			setting, max = "MaxPathDepth", u.lim.MaxPathDepth
		}
		return &LimitError{Setting: setting, Max: int64(max), What: fmt.Sprintf("path %q", tooLong.Path)}
	case errors.Is(err, pkgpath.ErrAtRoot):
		u.skip(hdr.Name, ReasonAtRoot)
		return nil
	case err != nil:
		// A hostile name: node-tar skips it with a warning, and so do
		// we. It is never stored, whatever it would clean to.
		u.skipRaw(hdr.Name, err.Error())
		return nil
	}

	u.regular++
	if u.regular > u.lim.MaxFiles {
		return &LimitError{Setting: "MaxFiles", Max: int64(u.lim.MaxFiles), What: fmt.Sprintf("file %d (%q)", u.regular, p)}
	}
	// Both checks come from the header, before reading: a bomb is
	// refused without decompressing it. readBody then bounds the bytes
	// actually read by the same figure.
	if hdr.Size > u.lim.MaxFileBytes {
		return &LimitError{Setting: "MaxFileBytes", Max: u.lim.MaxFileBytes, What: fmt.Sprintf("file %q (%d bytes)", p, hdr.Size)}
	}
	if hdr.Size > u.lim.MaxUnpackedBytes-u.unpacked {
		return &LimitError{Setting: "MaxUnpackedBytes", Max: u.lim.MaxUnpackedBytes,
			What: fmt.Sprintf("%d bytes of files up to %q", u.unpacked+hdr.Size, p)}
	}
	if s, ok := u.w.(Streamer); ok && hdr.Size > u.lim.BatchBytes {
		return u.stream(s, tr, stream, p, hdr)
	}
	body, err := u.read(tr, hdr.Size)
	if err != nil {
		return stream.explain(err, fmt.Sprintf("reading %q", p))
	}
	u.unpacked += int64(len(body))
	return u.add(p, body, hdr.Mode)
}

// read reads a body that the header says is size bytes into the batch's
// arena, or when it is bigger than an arena's chunk, into a buffer of its
// own. A body that no longer fits the arena flushes the batch first.
func (u *unpacker) read(r io.Reader, size int64) ([]byte, error) {
	buf := u.arenas[u.filling].take(size)
	if buf == nil && size <= u.lim.BatchBytes && len(u.batch) > 0 {
		if err := u.flush(); err != nil {
			return nil, err
		}
		buf = u.arenas[u.filling].take(size)
	}
	if buf == nil {
		return readBody(r, size)
	}
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// Streamer is a store.Writer that takes a body larger than a batch as it
// is read, so the ingest never holds it whole (search's spool writer).
type Streamer interface {
	// PutStream stores the n bytes r yields; once r is read to its end,
	// sum returns their sha256, the body's key. It returns ErrNotStreamed,
	// before reading r, when it cannot take the body (the caller then
	// reads it whole and stores it with PutBlobs); any other error fails
	// the ingest.
	PutStream(ctx context.Context, n int64, r io.Reader, sum func() store.Hash) error
}

// ErrNotStreamed is what Streamer.PutStream returns when it will not take
// a body, before reading any of it.
var ErrNotStreamed = errors.New("ingest: body not streamed")

// stream hands a body larger than a batch to s.PutStream, hashing it on
// the way: a 200 MiB body (issue 25 §1: one line, in a 300 KB tarball)
// was read whole into a buffer grown by copying, 264 MiB of allocations
// for each such fill. The batch before it is written first, so the writer
// sees bodies in order. When s declines, the body is read whole, as
// without a Streamer.
func (u *unpacker) stream(s Streamer, tr io.Reader, stream *capReader, p string, hdr *tar.Header) error {
	if err := u.flush(); err != nil {
		return err
	}
	if err := u.wait(); err != nil {
		return err
	}
	n := hdr.Size
	// The first 8000 bytes say whether it is binary (IsBinary).
	head, err := readBody(tr, min(n, 8000))
	if err != nil {
		return stream.explain(err, fmt.Sprintf("reading %q", p))
	}
	rest := io.MultiReader(bytes.NewReader(head), tr)
	h := sha256.New()
	var valid utf8Writer
	body := &sizedReader{r: io.TeeReader(rest, io.MultiWriter(h, &valid)), left: n}
	var sum store.Hash
	err = s.PutStream(u.ctx, n, body, func() store.Hash { return store.Hash(h.Sum(nil)) })
	switch {
	case errors.Is(err, ErrNotStreamed):
		whole, err := readBody(rest, n)
		if err != nil {
			return stream.explain(err, fmt.Sprintf("reading %q", p))
		}
		u.unpacked += n
		return u.add(p, whole, hdr.Mode)
	case body.err != nil:
		return stream.explain(body.err, fmt.Sprintf("reading %q", p))
	case err != nil:
		return fmt.Errorf("storing %q: %w", p, err)
	case body.left > 0:
		return fmt.Errorf("storing %q: the writer took %d of its %d bytes", p, n-body.left, n)
	}
	sum = store.Hash(h.Sum(nil))
	u.unpacked += n
	u.record(store.File{Path: p, Size: n, Hash: sum, Binary: IsBinary(head), UTF8: store.UTF8Of(valid.valid()),
		Mode: store.ModeRegular | uint32(hdr.Mode&0o7777)})
	u.seen[sum] = true
	return nil
}

// sizedReader is a body of left bytes: reading past its end is EOF, and
// an EOF before it io.ErrUnexpectedEOF. err keeps the archive's read
// error, which stream tells from the writer's own.
type sizedReader struct {
	r    io.Reader
	left int64
	err  error
}

func (s *sizedReader) Read(p []byte) (int, error) {
	if s.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	if err == io.EOF && s.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err == io.EOF {
		err = nil
	}
	if err != nil {
		s.err = err
	}
	return n, err
}

// add records a file (last duplicate wins, in the first one's place, as
// npm diff orders it) and queues its body. Only the permission bits of
// mode are kept, as node-tar reads them (mode & 0o7777).
func (u *unpacker) add(p string, body []byte, mode int64) error {
	f := store.File{Path: p, Size: int64(len(body)), Hash: store.HashOf(body), Binary: IsBinary(body),
		UTF8: store.UTF8Of(utf8.Valid(body)), Mode: store.ModeRegular | uint32(mode&0o7777)}
	u.record(f)
	if u.seen[f.Hash] {
		// The same body under another path, or a duplicate: its room
		// in the arena goes to the next body.
		u.arenas[u.filling].give(body)
		return nil
	}
	u.seen[f.Hash] = true
	u.batch = append(u.batch, store.Blob{Hash: f.Hash, Data: body})
	u.batchBytes += f.Size
	if u.batchBytes >= u.lim.BatchBytes {
		return u.flush()
	}
	return nil
}

// record lists f (last duplicate wins, in the first one's place).
func (u *unpacker) record(f store.File) {
	if i, ok := u.index[f.Path]; ok {
		// The earlier body may already be written; unreferenced blobs
		// are harmless.
		f.Order = u.files[i].Order
		u.files[i] = f
		return
	}
	u.index[f.Path] = len(u.files)
	f.Order = len(u.files)
	u.files = append(u.files, f)
}

// flush writes the queued bodies and lets go of them.
func (u *unpacker) flush() error {
	if len(u.batch) == 0 {
		return nil
	}
	if err := u.wait(); err != nil {
		return err
	}
	if err := u.ctx.Err(); err != nil {
		return err
	}
	batch := u.batch
	u.batch, u.batchBytes = nil, 0 // a new slice: the writer still reads the old one
	// The writer now reads this arena; the next batch takes the other,
	// whose batch wait has just seen written.
	u.filling ^= 1
	u.arenas[u.filling].reset()
	done := make(chan error, 1)
	u.writing = done
	go func() {
		if err := u.w.PutBlobs(u.ctx, batch); err != nil {
			done <- fmt.Errorf("storing %d file bodies: %w", len(batch), err)
			return
		}
		done <- nil
	}()
	return nil
}

// wait waits for the batch being written, if any, and returns its error.
func (u *unpacker) wait() error {
	if u.writing == nil {
		return nil
	}
	err := <-u.writing
	u.writing = nil
	return err
}

func (u *unpacker) skip(name, reason string) {
	if p, err := u.paths.CleanEntry(name); err == nil {
		name = p
	}
	u.skipRaw(name, reason)
}

func (u *unpacker) skipRaw(name, reason string) {
	u.skippedCount++
	if len(u.skipped) < u.lim.MaxSkipped {
		u.skipped = append(u.skipped, Skipped{Path: cut(name, u.lim.MaxPathBytes), Reason: reason})
	}
}

// isSparse reports a GNU sparse file in either encoding: the old GNU type
// 'S', or PAX records named GNU.sparse.* on a regular file.
func isSparse(hdr *tar.Header) bool {
	if hdr.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// bodyBufStart is the most a body's first buffer takes before any of its
// bytes arrive: 1 MiB holds all but a package's largest files in one
// buffer. It was 64 KiB, and growing buffers (clearing each new one,
// copying into it) was ~10% of a cold ingest of next@16.4.6's CPU, whose
// 190 MB of text sit mostly in files of 100 KiB to 1 MiB.
const bodyBufStart = 1 << 20

// readBody reads a body that the header says is size bytes. size only
// bounds the buffer's growth: the buffer starts at bodyBufStart at most
// and grows fourfold each time the bytes actually read fill it, so a
// header claiming 256 MiB in a truncated archive costs 1 MiB, not 256 MiB,
// and a buffer is never more than 4x the bytes that arrived. (Doubling
// copied and cleared each large body about twice; next@16.4.6 keeps tens
// of MB in files over 1 MiB.) It never reads past size, which the caller
// checked against the caps.
func readBody(r io.Reader, size int64) ([]byte, error) {
	buf := make([]byte, 0, min(size, bodyBufStart))
	for int64(len(buf)) < size {
		if len(buf) == cap(buf) {
			next := min(size, 4*int64(cap(buf)))
			buf = slices.Grow(buf, int(next)-len(buf))
		}
		n, err := r.Read(buf[len(buf):min(int64(cap(buf)), size)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(buf)) < size {
		return nil, io.ErrUnexpectedEOF
	}
	return buf, nil
}

// capReader counts the decompressed bytes and fails once more than max
// have been asked for. The failure is sticky, so whatever archive/tar
// makes of it, explain can tell a cap from corruption.
type capReader struct {
	r   io.Reader
	n   int64
	max int64
	err *LimitError
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if left := c.max - c.n; int64(len(p)) > left+1 {
		p = p[:left+1] // read one byte past the cap to know it is passed
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		c.err = &LimitError{Setting: "MaxArchiveBytes", Max: c.max, What: "the decompressed tar stream"}
		return n - int(c.n-c.max), c.err
	}
	return n, err
}

// explain turns a read error into an error kind: the cap when the stream
// hit it, otherwise a corrupt archive.
func (c *capReader) explain(err error, doing string) error {
	if c.err != nil {
		return c.err
	}
	return fmt.Errorf("%w: %s: %w", ErrBadArchive, doing, err)
}

// cut shortens s to n bytes for a record or message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
