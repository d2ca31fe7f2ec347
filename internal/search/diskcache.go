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
}

type diskFile struct {
	path string
	size int64
}

// tmpMaxAge is how old a temporary file must be before a starting
// Searcher removes it as left by a crash: older than any build or fetch
// could take (fill-timeout is minutes), so another process's spool in a
// shared directory is never removed.
const tmpMaxAge = 6 * time.Hour

// openDiskCache scans dir: it removes index files of other formats (they
// are never read again) and stale temporary files, and orders the rest by
// last use.
func openDiskCache(dir string, max int64, log *slog.Logger) *diskCache {
	c := &diskCache{log: log, max: max, lru: list.New(), files: map[string]*list.Element{}}
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
		c.files[f.path] = c.lru.PushFront(&diskFile{f.path, f.size})
		c.total += f.size
	}
	c.mu.Lock()
	c.evict(nil)
	c.mu.Unlock()
	return c
}

// add records a newly published file and evicts others to make room.
func (c *diskCache) add(path string, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.files[path]; e != nil { // replaced in place
		c.total -= e.Value.(*diskFile).size
		c.lru.Remove(e)
	}
	e := c.lru.PushFront(&diskFile{path, size})
	c.files[path] = e
	c.total += size
	c.evict(e)
}

// touch records a use of path (opened from the cache).
func (c *diskCache) touch(path string, size int64) {
	now := time.Now()
	_ = os.Chtimes(path, now, now)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.files[path]; e != nil {
		c.lru.MoveToFront(e)
		return
	}
	// Written by another process sharing the directory.
	c.files[path] = c.lru.PushFront(&diskFile{path, size})
	c.total += size
	c.evict(c.files[path])
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
