package search

import (
	"os"

	"github.com/pkgscope/pkgscope/internal/index"
)

// Reopening a local index file is cheap once this node has checked it.
//
// index.Open checks a CRC-32 over the whole file, which reads every page:
// a project grep over 406 packages with the default 64 open indexes
// reopens most of them every time, and that checksum was 65% of its CPU.
// So the disk cache remembers, per file, the identity (fileID) it had
// when this node last checked its checksum (on publish, or on an open
// that checked it), and a later open of a file with the same identity
// skips the checksum (index.OpenOptions.SkipChecksum); every table is
// still checked.
//
// The guarantee stays "the bytes mapped are the bytes checked": a file
// written in place after its check has a new mtime and ctime (ctime cannot
// be set back by anyone but the kernel), a replaced one a new inode, so
// either is checked in full on its next open and, if bad, fetched again.
// What it does not catch is what a long-open mapping never caught either:
// the disk silently returning other bytes for an unchanged inode. The one
// blind spot is a write landing between the identity check and the
// recording of the identity after this node's own touch of the file
// (diskCache.touch, at most once per touchEvery per file).

// fileID is what identifies one content of a file: device, inode, size,
// and modification and change times in nanoseconds.
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// idOf (verified_linux.go, verified_darwin.go, verified_other.go) returns
// fi's identity; ok is false where the platform gives no inode (then
// nothing is trusted without its checksum).

// openLocal opens the local index file at path, skipping its checksum when
// the disk cache says this node checked this very file before, and
// records a use of it.
func (s *Searcher) openLocal(path string) (*index.Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	id, ok := idOf(fi)
	trusted := ok && s.disk.verified(path, id)
	if !trusted {
		s.checksums.Add(1)
	}
	ix, err := index.OpenFile(f, index.OpenOptions{SkipChecksum: trusted})
	if err != nil {
		s.disk.unverify(path)
		return nil, err
	}
	if s.disk.touch(path, fi.Size()) { // the touch changed mtime and ctime
		if fi, err = f.Stat(); err == nil {
			id, ok = idOf(fi)
		} else {
			ok = false
		}
	}
	if ok {
		s.disk.verify(path, id)
	}
	return ix, nil
}

// verifyPublished records the identity of a file this node just checked
// and published under path.
func (s *Searcher) verifyPublished(path string, f *os.File) {
	fi, err := f.Stat()
	if err != nil {
		return
	}
	if id, ok := idOf(fi); ok {
		s.disk.verify(path, id)
	}
}
