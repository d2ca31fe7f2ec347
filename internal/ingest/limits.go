package ingest

import (
	"errors"
	"fmt"

	"github.com/pkgscope/pkgscope/internal/pkgpath"
)

// Limits bound what one tarball may cost. Every cap is checked from the
// header before a body is read, and again on the bytes actually
// decompressed, so neither a lying header nor a gzip bomb can make ingest
// read or hold more than the caps.
type Limits struct {
	// MaxUnpackedBytes caps the total size of all regular files, counted
	// as they are decompressed (duplicates included). Default 1 GiB, some
	// forty times typescript (about 23 MB unpacked), one of the largest
	// packages agents read.
	MaxUnpackedBytes int64
	// MaxFiles caps the number of regular-file entries. Default 100,000:
	// icon sets like @mui/icons-material, the largest packages by count,
	// ship tens of thousands.
	MaxFiles int
	// MaxEntries caps all tar entries: files, directories, links and
	// anything else. Default 200,000, MaxFiles plus one directory per
	// file at worst.
	MaxEntries int
	// MaxFileBytes caps one file. Default 256 MiB; a file is held in
	// memory whole until its batch is written, so this is also the
	// largest allocation one ingest makes.
	MaxFileBytes int64
	// MaxPathBytes caps a stored path's length in bytes, top folder
	// stripped. Default pkgpath.DefaultMaxPathBytes (1024).
	MaxPathBytes int
	// MaxPathDepth caps a stored path's segment count. Default
	// pkgpath.DefaultMaxDepth (64).
	MaxPathDepth int
	// MaxArchiveBytes caps the whole decompressed tar stream: file
	// bodies plus headers, PAX records, padding, and the bodies of
	// entries that are skipped (an entry of an unknown type can claim
	// any size and tar discards it by reading it). A file costs a 512-
	// byte header and 256 bytes of padding on average, a long name a PAX
	// record of up to 1.5 KiB more: 200,000 entries × 2.5 KiB ≈ 512 MiB
	// on top of MaxUnpackedBytes, so the default is 1.5 GiB.
	MaxArchiveBytes int64
	// MaxSkipped caps how many skipped entries Result.Skipped records;
	// Result.SkippedCount still counts them all. Default 1,000: a hostile
	// archive of 200,000 symlinks with 1 KiB names would otherwise hold
	// 200 MB of records.
	MaxSkipped int
	// BatchBytes is about how many body bytes are written to the store
	// per PutBlobs call (default 8 MiB). Bigger batches mean fewer round
	// trips; smaller ones less memory, since bodies are held only until
	// their batch is written: an ingest reads bodies into two arenas of
	// at most 2*BatchBytes each (arena). A file bigger than BatchBytes is
	// a batch of its own.
	BatchBytes int64
}

// DefaultLimits returns the defaults documented on each field.
func DefaultLimits() Limits {
	return Limits{
		MaxUnpackedBytes: 1 << 30,
		MaxFiles:         100_000,
		MaxEntries:       200_000,
		MaxFileBytes:     256 << 20,
		MaxPathBytes:     pkgpath.DefaultMaxPathBytes,
		MaxPathDepth:     pkgpath.DefaultMaxDepth,
		MaxArchiveBytes:  1<<30 + 512<<20,
		MaxSkipped:       1_000,
		BatchBytes:       8 << 20,
	}
}

// Validate reports the first setting that is not positive, by name.
func (l Limits) Validate() error {
	for _, s := range []struct {
		name string
		v    int64
	}{
		{"MaxUnpackedBytes", l.MaxUnpackedBytes},
		{"MaxFiles", int64(l.MaxFiles)},
		{"MaxEntries", int64(l.MaxEntries)},
		{"MaxFileBytes", l.MaxFileBytes},
		{"MaxPathBytes", int64(l.MaxPathBytes)},
		{"MaxPathDepth", int64(l.MaxPathDepth)},
		{"MaxArchiveBytes", l.MaxArchiveBytes},
		{"MaxSkipped", int64(l.MaxSkipped)},
		{"BatchBytes", l.BatchBytes},
	} {
		if s.v <= 0 {
			return fmt.Errorf("ingest: limit %s = %d: must be positive", s.name, s.v)
		}
	}
	return nil
}

func (l Limits) paths() pkgpath.Limits {
	return pkgpath.Limits{MaxPathBytes: l.MaxPathBytes, MaxDepth: l.MaxPathDepth}
}

// Error kinds, tested with errors.Is. The API maps each to one status.
var (
	// ErrLimit: the tarball exceeds a cap of Limits (the API answers
	// 413 or 422). The error is a *LimitError saying which.
	ErrLimit = errors.New("over an ingest limit")
	// ErrBadArchive: the bytes are not a readable gzipped tar (corrupt
	// or truncated gzip or tar): the upstream served garbage and the API
	// answers 502.
	ErrBadArchive = errors.New("corrupt tarball")
	// ErrUnsupported: the archive is well formed but holds an entry that
	// npm never packs and that cannot be read safely: a GNU sparse file,
	// whose header can claim 1 TiB of holes in a 3 KB tar. Retrying
	// will not help; the API answers 422.
	ErrUnsupported = errors.New("unsupported tarball entry")
)

// LimitError says which cap was hit. It matches ErrLimit.
type LimitError struct {
	// Setting is the Limits field, e.g. "MaxFiles".
	Setting string
	// Max is its value.
	Max int64
	// What is what went over, e.g. `file "dist/a.js" (300000000 bytes)`.
	What string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("ingest: %s is over the limit %s = %d", e.What, e.Setting, e.Max)
}

// Unwrap makes the error match ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

// CheckDeclared refuses a version early, before its tarball is fetched,
// from the packument's dist.unpackedSize and dist.fileCount; zero means the
// registry did not say. The declared figures are only a hint (a publisher
// can understate them), so Ingest checks the real bytes regardless.
func CheckDeclared(unpackedSize int64, fileCount int, lim Limits) error {
	if unpackedSize > lim.MaxUnpackedBytes {
		return &LimitError{Setting: "MaxUnpackedBytes", Max: lim.MaxUnpackedBytes,
			What: fmt.Sprintf("declared dist.unpackedSize %d", unpackedSize)}
	}
	if fileCount > lim.MaxFiles {
		return &LimitError{Setting: "MaxFiles", Max: int64(lim.MaxFiles),
			What: fmt.Sprintf("declared dist.fileCount %d", fileCount)}
	}
	return nil
}
