// Package store keeps ingested npm package versions: the file list of each
// version and the file bodies, content-addressed by sha256 so that a body
// shared by many versions is stored once.
//
// Two implementations satisfy Store and pass one conformance suite
// (storetest): Postgres (store/postgres), the org-wide store, and SQLite
// (store/sqlite), the embedded default that needs no services.
//
// Visibility rule: a version is visible to readers only once CommitVersion
// has returned. Blobs are written first, idempotently and outside any long
// transaction; CommitVersion then inserts the version row and every file row
// in one transaction. A crash at any point before that commit leaves nothing
// visible (only unreferenced blobs, which are harmless and deduplicated,
// and which BlobCollector deletes once they are older than its grace).
package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Errors returned by every Store implementation. Callers test them with
// errors.Is; implementations wrap their driver errors into these once.
var (
	// ErrNotFound: no such version (or it is not ready), file or blob.
	ErrNotFound = errors.New("not found")
	// ErrExists: CommitVersion for a version that is already ready.
	ErrExists = errors.New("already exists")
	// ErrMissingBlob: CommitVersion named a file whose hash was never
	// stored with PutBlobs. It is an ingest bug, not a missing version, so
	// it deliberately does not match ErrNotFound.
	ErrMissingBlob = errors.New("file body not stored")
	// ErrUnavailable: the database could not be reached (refused, reset
	// or closed connection, a server shutting down) or did not answer
	// within the store's own timeout. Nothing is wrong with the request;
	// retrying later may succeed, so callers answer 503 with Retry-After,
	// never 404 or 500.
	ErrUnavailable = errors.New("store unavailable")
)

// Hash is a sha256 digest of a file body.
type Hash [sha256.Size]byte

// HashOf returns the sha256 of b.
func HashOf(b []byte) Hash { return sha256.Sum256(b) }

// File describes one regular file of a version.
type File struct {
	// Path is relative to the package root, slash-separated, with no
	// leading slash, as cleaned by pkgpath.Clean. It may hold bytes that
	// are not valid UTF-8 (stored as bytea / blob).
	Path string
	// Size is the uncompressed body size in bytes.
	Size int64
	// Hash is the sha256 of the body: the key of its blob.
	Hash Hash
	// Binary is true when the body is not text (see ingest.IsBinary).
	Binary bool
	// UTF8 says whether the body is valid UTF-8, as ingest found it:
	// UTF8Unknown for a version stored before it was recorded (migration
	// 00011) or read from the jsDelivr fallback.
	UTF8 UTF8
	// Mode is the entry's git-style file mode: ModeRegular | the tar
	// header's permission bits (mode & 0o7777), e.g. 0o100644. npm diff
	// prints it on its "index vA..vB 100644" lines. 0 means unknown: a
	// version stored before the mode was kept (migration 00005), or one
	// read from the jsDelivr fallback.
	Mode uint32
	// Order is the position of the path's first entry among the
	// version's regular files in the tarball (0-based): npm diff lists
	// files in tarball order. Unknown orders are all 0, so a stable sort
	// by Order keeps byte order.
	Order int
}

// ModeRegular is the file-type bits of File.Mode (git's regular file).
const ModeRegular = 0o100000

// UTF8 is whether a body is valid UTF-8 (utf8.Valid), or unknown. npm
// diff decodes bodies before it compares them, so two bodies that differ
// only in invalid bytes can print nothing; two different valid ones
// always print, which a name-only diff knows without reading them.
type UTF8 uint8

// Validities of a body; the zero value is UTF8Unknown.
const (
	UTF8Unknown UTF8 = iota
	UTF8Valid
	UTF8Invalid
)

// UTF8Of returns valid's UTF8.
func UTF8Of(valid bool) UTF8 {
	if valid {
		return UTF8Valid
	}
	return UTF8Invalid
}

// UTF8OfNull is the UTF8 a nullable column holds: NULL is unknown. (A
// sql.NullBool, not a *bool: scanning into a *bool allocated one per row,
// 8,711 for a listing of next.)
func UTF8OfNull(valid sql.NullBool) UTF8 {
	if !valid.Valid {
		return UTF8Unknown
	}
	return UTF8Of(valid.Bool)
}

// Null is u as a nullable column holds it: nil when unknown.
func (u UTF8) Null() *bool {
	if u == UTF8Unknown {
		return nil
	}
	valid := u == UTF8Valid
	return &valid
}

// Blob is a file body with its hash. A Writer keeps no reference to Data
// once PutBlobs returns: ingest reads the next bodies into the same memory.
type Blob struct {
	Hash Hash
	Data []byte
}

// VersionState is the ingest state of a version.
type VersionState string

// Version states. Only StateReady versions are served.
const (
	StateReady  VersionState = "ready"
	StateFailed VersionState = "failed"
)

// Version is one package version and how it got into the store.
type Version struct {
	Name    string // package name, e.g. "@types/react"
	Version string // exact version, e.g. "19.1.0"
	// Integrity is the dist.integrity (or "sha1-"+shasum) the tarball
	// was verified against.
	Integrity string
	State     VersionState
	// Reason says why the last ingest failed (StateFailed only).
	Reason    string
	FileCount int
	// Deprecated is the registry's deprecation message of the version as
	// it was when the version was stored; "" when it was not deprecated.
	Deprecated string
	TotalBytes int64
	CreatedAt  time.Time
}

// NewVersion is what CommitVersion records: the version and all its files.
// Files must be sorted by Path (byte order) with no duplicates, and every
// Hash must already be stored with PutBlobs.
type NewVersion struct {
	Name      string
	Version   string
	Integrity string
	Files     []File
	// Deprecated is the registry's deprecation message of the version,
	// "" when it is not deprecated.
	Deprecated string
	// IngestFormat is the version of the extraction rules the files were
	// stored under (ingest.Format), recorded for `indexer reindex`; 0
	// records 1, the format of versions stored before it was written.
	IngestFormat int
}

// Format is the ingest format CommitVersion records for v.
func (v NewVersion) Format() int { return max(v.IngestFormat, 1) }

// Validate checks what CommitVersion requires of v's shape: a name and
// version, and files sorted by Path in strict byte order (so no duplicate
// paths) with non-negative sizes. Both stores call it first, so a bad
// NewVersion fails the same way on each, before any database work.
func (v NewVersion) Validate() error {
	if v.Name == "" || v.Version == "" {
		return fmt.Errorf("store: version %q@%q: name and version are required", v.Name, v.Version)
	}
	for i, f := range v.Files {
		if f.Size < 0 {
			return fmt.Errorf("store: %s@%s: file %q has negative size %d", v.Name, v.Version, f.Path, f.Size)
		}
		if f.Order < 0 || f.Order > math.MaxInt32 || f.Mode > math.MaxInt32 {
			return fmt.Errorf("store: %s@%s: file %q has order %d, mode %o: out of range", v.Name, v.Version, f.Path, f.Order, f.Mode)
		}
		if i > 0 && v.Files[i-1].Path >= f.Path {
			return fmt.Errorf("store: %s@%s: files not in strict path order at %d: %q then %q",
				v.Name, v.Version, i, v.Files[i-1].Path, f.Path)
		}
	}
	return nil
}

// TotalBytes is the sum of the files' sizes.
func (v NewVersion) TotalBytes() int64 {
	var n int64
	for _, f := range v.Files {
		n += f.Size
	}
	return n
}

// VersionReader looks up versions and their file lists.
type VersionReader interface {
	// Version returns the state of name@version, ready or failed.
	// ErrNotFound when the store has never recorded it.
	Version(ctx context.Context, name, version string) (Version, error)
	// Files returns the files of a ready version, sorted by Path in byte
	// order. ErrNotFound when the version is not ready.
	Files(ctx context.Context, name, version string) ([]File, error)
}

// BlobReader reads file bodies.
type BlobReader interface {
	// Blob returns the body with hash h. ErrNotFound when absent.
	Blob(ctx context.Context, h Hash) ([]byte, error)
}

// BlobsReader reads many bodies in one request: a grep of an index served
// from its stored form reads the text of thousands of contents (lucide-react's
// createLucideIcon reaches 4,254), and one Blob call each is one round trip
// each on Postgres.
type BlobsReader interface {
	// Blobs calls fn with the body of each hash of hs the store holds,
	// once per distinct hash, in no particular order. A hash it does not
	// hold is left out, not an error: the caller sees which ones fn did
	// not get. An error from fn ends the read and is returned. The body
	// passed to fn is the caller's to keep. A body that does not decode to
	// its recorded size ends the read with an error wrapping
	// ErrCorruptBody.
	Blobs(ctx context.Context, hs []Hash, fn func(h Hash, body []byte) error) error
}

// BlobStreamer reads bodies without holding them whole: the read and raw
// routes serve files of up to max-file-bytes (256 MiB), and 16 of those
// read at once as whole bodies took 2.4-3.7 GiB.
type BlobStreamer interface {
	// OpenBlob returns the body with hash h as a stream, decoded as it is
	// read; it reads only the blob's size and form, never its data.
	// ErrNotFound when absent. A body that does not decode to its
	// recorded size fails a Read with an error wrapping ErrCorruptBody.
	// The stream uses ctx for its database reads; the caller closes it.
	OpenBlob(ctx context.Context, h Hash) (BlobStream, error)
}

// BlobStream is a body being read. Seek moves forward by reading on and
// backward by starting again, so a Range request costs what it skips.
// It is not safe for concurrent use.
type BlobStream interface {
	io.ReadSeekCloser
	// Size is the body's length in bytes.
	Size() int64
	// Footprint is the most memory the stream holds while it is read,
	// known before the first Read (which is when a store fetches data):
	// what a bytes-in-flight budget charges.
	Footprint() int64
}

// ErrCorruptBody is a stored body that does not decode to its recorded
// size (blobcodec.ErrCorrupt is the same error).
var ErrCorruptBody = errors.New("corrupt body")

// Reader is what the serving side needs.
type Reader interface {
	VersionReader
	BlobReader
}

// Writer is what ingest needs.
type Writer interface {
	// PutBlobs stores bodies; storing a hash that exists does not write
	// its body again, so concurrent and repeated ingests of the same bytes
	// are safe. It records when each body was written, and refreshes that
	// time for a body already stored (Postgres: once it is older than
	// Options.BlobRefreshAfter): BlobCollector keeps an unreferenced body
	// for a grace period after.
	PutBlobs(ctx context.Context, blobs []Blob) error
	// CommitVersion makes a version and all its files visible atomically.
	// It returns ErrExists when the version is already ready (the caller
	// lost a race with another ingest of the same bytes, which is fine). A
	// failed record of the same version is replaced. It returns an error
	// wrapping ErrMissingBlob, and records nothing, when any file's Hash
	// is not stored; and a plain error when v fails NewVersion.Validate.
	// Of concurrent commits of one version exactly one succeeds; the
	// others get ErrExists.
	CommitVersion(ctx context.Context, v NewVersion) error
	// MarkFailed records that an ingest of name@version failed and why.
	// It never overwrites a ready version: then it changes nothing and
	// returns nil. Marking a failed version again replaces the reason.
	MarkFailed(ctx context.Context, name, version, reason string) error
}

// Catalog lists what the store holds, for people browsing the mirror's
// web page. Both answers are bounded by limit; neither reads file lists.
type Catalog interface {
	// Recent returns up to limit ready versions, the most recently stored
	// first (by the time they became ready).
	Recent(ctx context.Context, limit int) ([]Version, error)
	// Names returns up to limit distinct names of packages with a ready
	// version whose name contains substr (ASCII case-insensitive; LIKE
	// wildcards in substr match themselves), shortest first, then in
	// byte order, so the exact name, when held, comes first.
	Names(ctx context.Context, substr string, limit int) ([]string, error)
}

// LikeContains returns a LIKE pattern matching names that contain substr
// literally: backslash, '%' and '_' are escaped with a backslash (both
// stores' queries say ESCAPE '\').
func LikeContains(substr string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(substr)) + "%"
}

// Store is a complete store.
type Store interface {
	Reader
	BlobsReader
	BlobStreamer
	Writer
	IndexStore
	Catalog
	Maintenance
	ProjectStore
	SessionStore
	BlobCollector
	// Close releases the store's connections.
	Close() error
}

// IndexRecord locates a version's search index. The index is kept as
// blobs (chunks of at most a few MiB, content-addressed and compressed
// like file bodies), so the store needs no second way of keeping bytes.
// From format 3 on, the stored bytes are the index without its text
// (index.StoredForm), which a reader puts back from the version's bodies.
type IndexRecord struct {
	// Format is the index format version (index.FormatVersion); a version
	// may hold one index per format while a rebuild is under way.
	Format int
	// Size is the stored index's length: the sum of its chunks.
	Size int64
	// Chunks are the blobs whose bodies, in order, make the index file.
	Chunks []Hash
	// Coverage is the share of text bytes given trigrams (0..1), kept as a
	// column so that badly covered versions can be found with a query.
	Coverage float64
	// Stats is the index's own description (JSON of index.Stats).
	Stats []byte
}

// IndexStore keeps each version's search index.
type IndexStore interface {
	// PutIndex records the index of a ready version, replacing one of the
	// same format (whose chunks, unless the new index names them too, are
	// then garbage for BlobCollector). ErrNotFound when the version is not
	// ready; ErrMissingBlob when a chunk is not stored: never put, or
	// collected since.
	PutIndex(ctx context.Context, name, version string, rec IndexRecord) error
	// Index returns the index record of that format. ErrNotFound when
	// the version is not ready or has no index of that format.
	Index(ctx context.Context, name, version string, format int) (IndexRecord, error)
}

// JoinHashes concatenates hashes, the stored form of IndexRecord.Chunks.
func JoinHashes(hs []Hash) []byte {
	b := make([]byte, 0, len(hs)*len(Hash{}))
	for _, h := range hs {
		b = append(b, h[:]...)
	}
	return b
}

// SplitHashes is the inverse of JoinHashes.
func SplitHashes(b []byte) ([]Hash, error) {
	if len(b)%len(Hash{}) != 0 {
		return nil, fmt.Errorf("stored hash list is %d bytes, not a multiple of %d", len(b), len(Hash{}))
	}
	hs := make([]Hash, len(b)/len(Hash{}))
	for i := range hs {
		copy(hs[i][:], b[i*len(Hash{}):])
	}
	return hs, nil
}

// SortedUnique returns blobs sorted by hash with duplicates dropped,
// without modifying the caller's slice: both stores write blobs in this
// order, so keys enter the blobs index in order (each b-tree page touched
// once) and two concurrent writers lock rows in the same order.
func SortedUnique(blobs []Blob) []Blob {
	out := slices.Clone(blobs)
	slices.SortFunc(out, func(a, b Blob) int { return bytes.Compare(a.Hash[:], b.Hash[:]) })
	return slices.CompactFunc(out, func(a, b Blob) bool { return a.Hash == b.Hash })
}

// HashOrder returns the indexes of files in the order of their hashes.
// Both stores insert a version's file rows in it: the files_hash index
// (which the blob collector and the foreign key from files to blobs look
// up) is then written page after page, each touched once, where path
// order put each row on a random page of it; the primary key's pages are
// the new version's own either way. It cut what the index adds to a
// commit by half or more (docs/BENCHMARKS.md).
func HashOrder(files []File) []int {
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(files[a].Hash[:], files[b].Hash[:]) })
	return order
}
