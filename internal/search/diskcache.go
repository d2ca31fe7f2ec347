package search

import (
	"container/list"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pkgscope/pkgscope/internal/index"
)

// diskCache bounds the local index cache by size: it tracks every index
// file in the directory, most recently used first, and removes the least
// recently used ones once the total passes max. Removing a file that is
// still mapped is safe: the mapping keeps the inode until it is closed,
// and the version is fetched from the store again when next needed.
//
// A file's modification time records its last use, so the order survives
// a restart (atime is often off or coarse on servers).
type diskCache struct {
	log   *slog.Logger
	max   int64 // 0: no bound
	mu    sync.Mutex
	total int64
	lru   *list.List // of *diskFile, most recent first
	files map[string]*list.Element
	// racyWindow is how old a file's change time must be for its identity
	// to be trusted (verify).
	racyWindow time.Duration
	// removed lists files evict removed, for closeRemoved; onRemove (set
	// by the Searcher) closes the index of a removed file.
	removed  []string
	onRemove func(path string)
}

// racyWindow is diskCache.racyWindow: twice the coarsest common timestamp
// grain (ext3 and FAT stamp whole seconds, FAT's mtime two).
const racyWindow = 4 * time.Second

type diskFile struct {
	path string
	size int64
	// id is the file's identity when this node last checked its checksum
	// (verified.go); checked is false until then.
	id      fileID
	checked bool
	// touched is when touch last set the file's mtime.
	touched time.Time
}

// touchEvery is how often touch sets a file's mtime. The order of use
// survives a restart to within that (in memory it stays exact), which is
// fine grain for a cache of gigabytes; and each touch changes the file's
// identity (verified.go), leaving an instant in which a write could go
// unseen and making the next open within racyWindow check it in full.
const touchEvery = 10 * time.Minute

// tmpMaxAge is how old a temporary file must be before a starting
// Searcher removes it as left by a crash: older than any build or fetch
// could take (fill-timeout is minutes), so another process's spool in a
// shared directory is never removed.
const tmpMaxAge = 6 * time.Hour

// openDiskCache scans dir: it removes index files of other formats (they
// are never read again) and stale temporary files, and orders the rest by
// last use.
func openDiskCache(dir string, max int64, log *slog.Logger) *diskCache {
	c := &diskCache{log: log, max: max, lru: list.New(), files: map[string]*list.Element{}, racyWindow: racyWindow}
	if dir == "" {
		return c
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		log.Warn("scanning the local index cache", "dir", dir, "err", err)
		return c
	}
	type found struct {
		path string
		size int64
		used time.Time
	}
	var keep []found
	suffix := fmt.Sprintf(".f%d.idx", index.FormatVersion)
	for _, e := range ents {
		name := e.Name()
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		path := filepath.Join(dir, name)
		switch {
		case strings.HasPrefix(name, ".tmp-"):
			if time.Since(info.ModTime()) > tmpMaxAge {
				_ = os.Remove(path)
			}
		case strings.HasSuffix(name, suffix):
			keep = append(keep, found{path, info.Size(), info.ModTime()})
		case strings.HasSuffix(name, ".idx"):
			_ = os.Remove(path) // another format version
		}
	}
	sort.Slice(keep, func(i, j int) bool { return keep[i].used.Before(keep[j].used) })
	for _, f := range keep {
		c.files[f.path] = c.lru.PushFront(&diskFile{path: f.path, size: f.size})
		c.total += f.size
	}
	c.mu.Lock()
	c.evict(nil)
	c.removed = nil // nothing is open yet
	c.mu.Unlock()
	return c
}

// add records a newly published file and evicts others to make room.
func (c *diskCache) add(path string, size int64) {
	c.mu.Lock()
	if e := c.files[path]; e != nil { // replaced in place
		c.total -= e.Value.(*diskFile).size
		c.lru.Remove(e)
	}
	e := c.lru.PushFront(&diskFile{path: path, size: size, touched: time.Now()})
	c.files[path] = e
	c.total += size
	c.evict(e)
	c.mu.Unlock()
	c.closeRemoved()
}

// touch records a use of path (opened from the cache). It reports whether
// it set the file's mtime (at most once per touchEvery).
func (c *diskCache) touch(path string, size int64) bool {
	now := time.Now()
	c.mu.Lock()
	e := c.files[path]
	if e == nil { // written by another process sharing the directory
		e = c.lru.PushFront(&diskFile{path: path, size: size})
		c.files[path] = e
		c.total += size
		c.evict(e)
	}
	c.lru.MoveToFront(e)
	f := e.Value.(*diskFile)
	stale := now.Sub(f.touched) >= touchEvery
	if stale {
		f.touched = now
	}
	c.mu.Unlock()
	c.closeRemoved()
	if stale {
		_ = os.Chtimes(path, now, now)
	}
	return stale
}

// verified reports whether path is tracked and had identity id when this
// node last checked it.
func (c *diskCache) verified(path string, id fileID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.files[path]
	return e != nil && e.Value.(*diskFile).checked && e.Value.(*diskFile).id == id
}

// verify records that path, with identity id, passed its checksum. An
// identity whose change time is within racyWindow of now is not recorded
// (the file is checked again on its next open): the kernel stamps times
// from a clock that ticks every few milliseconds (a second or two on some
// filesystems), so a write in the same tick as the check would leave the
// identity unchanged — git's "racily clean" index entries, same cure.
func (c *diskCache) verify(path string, id fileID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.files[path]; e != nil {
		f := e.Value.(*diskFile)
		f.id, f.checked = id, time.Now().UnixNano()-id.ctime >= int64(c.racyWindow)
	}
}

// unverify forgets path's identity: it failed to open.
func (c *diskCache) unverify(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.files[path]; e != nil {
		e.Value.(*diskFile).checked = false
	}
}

// drop removes path, a file that failed its check, from the cache and the
// disk.
func (c *diskCache) drop(path string) {
	c.mu.Lock()
	if e := c.files[path]; e != nil {
		c.total -= e.Value.(*diskFile).size
		c.lru.Remove(e)
		delete(c.files, path)
	}
	c.mu.Unlock()
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		c.log.Warn("removing a corrupt local index", "path", path, "err", err)
	}
}

// bytes is the total size of the tracked files.
func (c *diskCache) bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// evict removes least recently used files, never keep, until the total
// fits. Called with mu held.
func (c *diskCache) evict(keep *list.Element) {
	for c.max > 0 && c.total > c.max {
		e := c.lru.Back()
		if e == nil || e == keep {
			return
		}
		f := e.Value.(*diskFile)
		c.lru.Remove(e)
		delete(c.files, f.path)
		c.total -= f.size
		if err := os.Remove(f.path); err != nil && !os.IsNotExist(err) {
			c.log.Warn("evicting a local index", "path", f.path, "err", err)
		}
		c.removed = append(c.removed, f.path)
	}
}

// closeRemoved tells onRemove about the files evict removed, outside mu:
// a removed file that is still mapped keeps its disk space until it is
// unmapped, so the Searcher closes its index (once its searches end), or
// the cache would not bound the disk while --max-open-indexes keeps
// indexes open.
func (c *diskCache) closeRemoved() {
	c.mu.Lock()
	removed := c.removed
	c.removed = nil
	c.mu.Unlock()
	if c.onRemove == nil {
		return
	}
	for _, p := range removed {
		c.onRemove(p)
	}
}

// failures remembers versions whose index cannot be built within the
// limits, so a grep of one answers at once instead of rebuilding. At most
// max are kept (versions are immutable; a restart with other limits
// forgets them).
type failures struct {
	mu  sync.Mutex
	max int
	m   map[string]error
}

func (f *failures) get(k string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[k]
}

func (f *failures) put(k string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]error{}
	}
	if len(f.m) >= f.max {
		clear(f.m)
	}
	f.m[k] = err
}

func (f *failures) remove(k string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, k)
}
