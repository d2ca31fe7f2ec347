// Package search serves grep: it finds a version's index — open in memory,
// on this node's disk, in the store, or else built from the stored files —
// and runs queries on it.
//
// Indexes are built once per version (after ingest, or on the first grep
// of a version that has none) and stored in the store as chunked blobs,
// without their text, so any node can fetch them. A node keeps small ones
// on its local disk, memory-mapped; any other it serves from the stored
// form held in memory, reading the text of the files a search reaches
// through a bounded, verified cache of bodies (textcache.go): a warm grep
// touches no database unless that cache misses. A local file is published
// atomically (written under a temporary name, opened and checked, then
// renamed), and when the local disk cannot take it (full, read-only) the
// index is kept in memory instead, so grep degrades but does not fail.
//
// The first grep of a version with no index does not wait for the full
// build (postings cost about 30 ms of CPU per MB of text, 6 s for
// next@16.4.6): it is answered from a scan index — the same file without
// postings, every query scanning all text, so the answers are the same —
// while the full index builds in the background and replaces it.
package search

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/store"
)

// Store is what the searcher needs: files and bodies to build from, and a
// place to keep the built index.
type Store interface {
	store.Reader
	store.BlobsReader
	PutBlobs(ctx context.Context, blobs []store.Blob) error
	store.IndexStore
}

// Options configure a Searcher.
type Options struct {
	// Dir is the local index cache. Empty keeps indexes in memory only.
	Dir string
	// MaxOpen is how many indexes stay open (mapped) at once, and
	// MaxOpenBytes how many bytes of index files they may map together
	// (0: no byte bound); the least recently used are closed when another
	// opened passes either. An open index costs its mapping, not heap (the
	// tables it decodes are under 1% of the file), and what the kernel
	// keeps of a mapping is page cache it can drop: the byte bound is the
	// one that bounds memory, the count keeps mappings far below the
	// kernel's 65,530 per process. Closing is not free either: a project
	// grep over 406 packages reopening past 64 spent half its CPU in
	// munmap and the rest decoding tables again.
	MaxOpen      int
	MaxOpenBytes int64
	// MaxBuilds is how many index builds run at once. A build holds one
	// body at a time plus the postings (peak RSS 333 MiB for next@16.4.6,
	// 190 MB of text), and uses a core; more builds than cores only add
	// memory.
	MaxBuilds int
	// CacheBytes bounds the local index cache (Dir): past it the least
	// recently used index files are removed. 0 means no bound. A version
	// whose file is not there is served from its stored form and the
	// text cache (textcache.go), and so is a built index larger than the
	// whole bound, once stored: it is never written here.
	//
	// Default 32 MiB, so the files kept are small packages' (the 406 of a
	// midsize app average 0.56 MB) and the indexes of large ones are
	// served stored: a local file holds a copy of its version's text,
	// and ten lucide-react versions each kept as one took 394 MiB beside
	// the store's 68 MiB (13.4x one version; 2.0x with none kept). A
	// warm grep from the stored form with its text cached costs about
	// what one from the file does (docs/BENCHMARKS.md); a text-cache
	// miss costs a store read, a round trip for replicas on Postgres,
	// which may set a larger cache.
	CacheBytes int64
	// TextCacheBytes bounds the memory of the text cache: the bodies
	// read for indexes served from their stored form (textcache.go). 0
	// keeps none: every text a search reaches is read from the store.
	TextCacheBytes int64
	// ChunkBytes is the size of the blobs an index is stored as. 4 MiB
	// keeps one row small for both databases while a 250 MB index is
	// only ~60 rows.
	ChunkBytes int
	// ScanFirst answers the first grep of a version that has no index
	// yet from a scan index (the text and block tables without postings:
	// every query scans all text, with the same answers; on next@16.4.6
	// the first grep after ingest took 0.93 s this way, the full build 6 s) while the full index builds in the background and
	// then replaces it. Off, the first grep waits for the full build.
	ScanFirst bool
	// SpoolBytes bounds the disk (in Dir) that fills' bodies take while
	// their version's first index builds read them from there instead of
	// from the store (Spool; bodies.go), and while a version is answered
	// from there before its commit (early.go). 0 turns spooling off.
	// Default 1 GiB: next@16.4.6, among npm's largest, spools 190 MB.
	SpoolBytes int64
	// WriteBackBytes bounds the spooled bodies read back into memory to
	// be written to the store (behind.go), all fills together; a stretch
	// of the spool larger than the bound (one body bigger than it) is
	// written alone. The store holds a compressed copy of what it writes
	// meanwhile, so the write-back's memory is at most about twice
	// max(WriteBackBytes, the largest body). Default 64 MiB: eight fills'
	// 8 MiB ingest batches at once, while the nine 90-140 MB binaries of
	// @next/swc's platform packages, warmed at once, took 777 MB.
	WriteBackBytes int64
	Build          index.BuildLimits
	Search         index.SearchLimits
	Logger         *slog.Logger
	// Budget, when set, is the fills' memory budget (fill.Budget,
	// max-fill-bytes): a build after a fill (the full build, and the scan
	// build of a committed version) first takes the bytes of the distinct
	// bodies it will read, so a 200 MiB body is not held by two builds
	// and two fills at once, and a large version's build is weighed as
	// its fill was (the full build of next@16.4.6's 190 MB of text peaks
	// at 333 MiB RSS). The scan build of a version offered before its
	// commit (early.go) takes none: it runs inside its fill, which holds
	// its bytes already.
	Budget Budget
	// Observe, when set, is told how long each index build took (reading
	// the stored files and building; not loading an index already built)
	// and how it ended. The mirror's metrics use it.
	Observe func(time.Duration, error)
}

// DefaultOptions returns the defaults for dir.
func DefaultOptions(dir string) Options {
	return Options{Dir: dir, MaxOpen: 4096, MaxOpenBytes: 1 << 30, MaxBuilds: 2, ChunkBytes: 4 << 20, CacheBytes: 32 << 20, ScanFirst: true,
		TextCacheBytes: 256 << 20,
		SpoolBytes:     1 << 30, WriteBackBytes: 64 << 20, Build: index.DefaultBuildLimits(), Search: index.DefaultSearchLimits()}
}

// Searcher answers grep queries over stored versions.
type Searcher struct {
	st    Store
	opt   Options
	log   *slog.Logger
	group singleflight.Group

	mu        sync.Mutex
	open      map[string]*entry
	lru       *list.List // of *entry, most recent first
	openBytes int64      // the open entries' index file bytes

	disk     *diskCache // the local index files, bounded by CacheBytes
	tooLarge failures   // versions over Build.MaxIndexBytes
	// unusable are versions whose stored index failed a search as
	// corrupt (Search): they are rebuilt, not fetched again, until a
	// rebuilt index is stored.
	unusable failures
	text     *textCache          // the text of indexes served from their stored form
	builds   *semaphore.Weighted // MaxBuilds
	bg       sync.WaitGroup      // builds started by Later
	bgCtx    context.Context
	bgCancel context.CancelFunc
	// loads counts the detached loads acquire runs (they outlive their
	// callers, so bg does not cover them); closed, under mu, stops new
	// ones, so Close can wait for them before the store is closed.
	loads sync.WaitGroup
	// commits counts the spooled fills writing to the store and
	// committing (bodies.go, spoolWriter.CommitVersion), which Close
	// cancels and waits for likewise.
	commits sync.WaitGroup
	// writeBack is WriteBackBytes; onWriteBackWait, for tests, is called
	// when a write-back waits for it.
	writeBack       *semaphore.Weighted
	onWriteBackWait func()
	closed          bool
	// spools are the bodies of fills whose full index has not been
	// built yet, by key (bodies.go); spooled counts their bytes.
	spools  map[string]*bodies
	spooled atomic.Int64
	// verified are cold versions offered to greps before their commit
	// (early.go); verifiedSig is closed, and replaced, at each offer.
	verified    map[string]*verified
	verifiedSig chan struct{}
	// grepWaits counts, by key, the greps waiting in Verified (ForGrep).
	grepWaits map[string]int
	// checksums counts local files opened with a full checksum check
	// (verified.go), for tests.
	checksums atomic.Int64
}

// errClosed answers a search or build asked of a closed Searcher.
var errClosed = errors.New("search: closed")

// entry is an open index with a reference count, so an index evicted from
// the LRU is closed only once the searches using it are done.
type entry struct {
	key  string
	ix   *index.Index
	size int64 // the index file's bytes
	scan bool  // a scan index, replaced when the full one is ready
	// fromStore is an index served from its stored form, in memory
	// (size is then the stored form's bytes), with no local file.
	fromStore bool
	// early, for a scan index built from a version offered before its
	// commit (early.go), is that offer: if the store fails, it is closed.
	early   *verified
	refs    int
	evicted bool
	elem    *list.Element
}

// New returns a Searcher; it creates opt.Dir if needed.
func New(st Store, opt Options) (*Searcher, error) {
	if opt.MaxOpen <= 0 || opt.ChunkBytes <= 0 || opt.MaxBuilds <= 0 || opt.CacheBytes < 0 || opt.SpoolBytes < 0 || opt.MaxOpenBytes < 0 || opt.TextCacheBytes < 0 || opt.WriteBackBytes <= 0 {
		return nil, fmt.Errorf("search: MaxOpen, MaxBuilds, ChunkBytes and WriteBackBytes must be positive, CacheBytes, SpoolBytes, MaxOpenBytes and TextCacheBytes not negative")
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Dir != "" {
		if err := os.MkdirAll(opt.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("search: creating the index cache %s: %w", opt.Dir, err)
		}
	}
	s := &Searcher{st: st, opt: opt, log: opt.Logger, open: map[string]*entry{}, lru: list.New(), spools: map[string]*bodies{},
		verified: map[string]*verified{}, verifiedSig: make(chan struct{}), grepWaits: map[string]int{},
		builds: semaphore.NewWeighted(int64(opt.MaxBuilds)), writeBack: semaphore.NewWeighted(opt.WriteBackBytes), tooLarge: failures{max: 4096}, unusable: failures{max: 4096}}
	s.text = newTextCache(s, opt.TextCacheBytes)
	s.disk = openDiskCache(opt.Dir, opt.CacheBytes, opt.Logger)
	s.disk.onRemove = s.closeRemoved
	s.bgCtx, s.bgCancel = context.WithCancel(context.Background())
	return s, nil
}

// Later returns an indexer whose Ensure starts the build in the background
// and returns at once: a mirror answering a cold list need not wait for the
// index, and a grep arriving meanwhile joins the same build. With
// ScanFirst it builds the scan index before the full one. timeout bounds
// each build; Close cancels and waits for builds in flight.
func (s *Searcher) Later(timeout time.Duration) Later { return Later{s: s, timeout: timeout} }

// Later is the background form of Searcher.Ensure.
type Later struct {
	s       *Searcher
	timeout time.Duration
}

// Spool is Searcher.Spool: the background build reads the bodies a fill
// spooled.
func (l Later) Spool(w store.Writer, name, version string) (store.Writer, func()) {
	return l.s.Spool(w, name, version)
}

// Ensure starts building name@version's index and returns zero Stats.
func (l Later) Ensure(_ context.Context, name, version string) (index.Stats, error) {
	s := l.s
	// Counted in under mu, where Close marks the Searcher closed before it
	// waits: a WaitGroup must not be added to while it is waited on.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return index.Stats{}, nil
	}
	s.bg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.bg.Done()
		ctx, cancel := context.WithTimeout(s.bgCtx, l.timeout)
		defer cancel()
		if s.opt.ScanFirst && s.opt.Dir != "" {
			// The scan index first, then the full one (load starts it):
			// the grep that usually follows a cold fill joins the scan
			// build instead of sharing the cores with the full build,
			// which on next@16.4.6 is 6 s of CPU to the scan's 1 s. A fill
			// that no grep follows spends that second for nothing. Not
			// without a local cache, where a scan index is held in memory.
			if e, err := s.acquire(ctx, name, version); err == nil {
				s.release(e)
			}
		}
		if _, err := s.Ensure(ctx, name, version); err != nil && s.bgCtx.Err() == nil {
			s.log.Error("indexing after ingest", "package", name, "version", version, "err", err)
		}
	}()
	return index.Stats{}, nil
}

// Search runs q over name@version, which must be ready in the store.
func (s *Searcher) Search(ctx context.Context, name, version string, q index.Query) (index.Result, error) {
	e, err := s.acquire(ctx, name, version)
	if err != nil {
		return index.Result{}, err
	}
	defer s.release(e)
	if v := e.early; v != nil && v.firstGrep != nil {
		defer v.firstGrep() // the store's writes go on (early.go)
	}
	res, err := e.ix.Search(ctx, q, s.opt.Search)
	if err != nil && e.fromStore && errors.Is(err, index.ErrCorrupt) {
		s.discardStored(e, name, version, err)
	}
	return res, err
}

// discardStored closes e, an index served from its stored form whose
// search found it or its text corrupt (a body whose bytes are not its
// hash's, a text of another length than the index says), and rebuilds
// the version's index from its files in the background; until a rebuilt
// index is stored, the version is rebuilt rather than fetched again. The
// search itself fails: no answer is given from text that failed its check.
func (s *Searcher) discardStored(e *entry, name, version string, err error) {
	s.unusable.put(e.key, err)
	var closing []*index.Index
	s.mu.Lock()
	first := s.open[e.key] == e
	if first {
		closing = s.evictLocked(e)
	}
	s.mu.Unlock()
	for _, ix := range closing {
		_ = ix.Close()
	}
	if first { // the concurrent searches that failed alike log nothing
		s.log.Error("stored index or its text corrupt; rebuilding the index", "package", name, "version", version, "err", err)
		s.background(name, version)
	}
}

// Ensure makes sure name@version has its full index in the store and on
// this node, building it if needed, and returns its statistics. A version
// offered before its commit (early.go) is waited for until it is
// committed (or has failed).
func (s *Searcher) Ensure(ctx context.Context, name, version string) (index.Stats, error) {
	k := key(name, version)
	if err := s.committed(ctx, k); err != nil {
		return index.Stats{}, err
	}
	// Bodies a fill spooled serve the builds already under way and the
	// full build this call starts (each holds its own reference); later
	// builds (another node, a rebuild) read the store.
	defer s.dropBodies(k)
	if e := s.lookup(k); e != nil {
		defer s.release(e)
		if !e.scan {
			return e.ix.Stats(), nil
		}
	}
	st, err := s.detached(ctx, "full\x00"+k, func(lctx context.Context) (loaded, error) {
		return s.loadFull(lctx, name, version)
	})
	if err != nil {
		return index.Stats{}, err
	}
	return st, nil
}

// loaded is what a load opened: an index, whether it is a scan index,
// the offer it was built from when its version is not committed yet, and
// whether it is served from its stored form (of size bytes).
type loaded struct {
	ix        *index.Index
	scan      bool
	early     *verified
	fromStore bool
	size      int64
}

// detached runs load once per sk however many callers, detached from
// ctx (one caller giving up does not fail the others; Close cancels it
// and waits for it), inserts the index it returns and returns its stats.
func (s *Searcher) detached(ctx context.Context, sk string, load func(context.Context) (loaded, error)) (index.Stats, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed { // a load cancelled by Close may still be leaving the group
		return index.Stats{}, errClosed
	}
	r, err := s.once(ctx, &s.group, sk, func(lctx context.Context) (any, error) {
		l, err := load(lctx)
		if err != nil {
			return nil, err
		}
		st := l.ix.Stats()
		if err := s.insert(strings.TrimPrefix(sk, "full\x00"), l); err != nil {
			return nil, err
		}
		return st, nil
	})
	if err != nil {
		return index.Stats{}, err
	}
	return r.(index.Stats), nil
}

// once runs fn once per key in g however many callers, detached from
// ctx: one caller giving up does not fail the others, who share its
// work. It is counted in s.loads and cancelled by Close, which waits for
// it; each caller waits for its result or its own ctx.
func (s *Searcher) once(ctx context.Context, g *singleflight.Group, key string, fn func(context.Context) (any, error)) (any, error) {
	ch := g.DoChan(key, func() (any, error) {
		if !s.start(&s.loads) {
			return nil, errClosed
		}
		defer s.loads.Done()
		fctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		defer stop()
		defer context.AfterFunc(s.bgCtx, stop)()
		return fn(fctx)
	})
	select {
	case r := <-ch:
		return r.Val, r.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close cancels and waits for the builds, loads and spooled fills' store
// writes in flight (they use the store, which the caller closes next; a
// fill cancelled so commits nothing), then closes every open index not
// in use; those in use close when their searches end.
func (s *Searcher) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.bgCancel()
	s.bg.Wait()
	s.loads.Wait()
	s.commits.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, b := range s.spools {
		delete(s.spools, k)
		s.releaseBodiesLocked(b)
	}
	var errs []error
	for _, e := range s.open {
		for _, ix := range s.evictLocked(e) {
			errs = append(errs, ix.Close())
		}
	}
	return errors.Join(errs...)
}

func key(name, version string) string { return name + "@" + version }

// acquire returns the open index of name@version with a reference held:
// the full index, or while it builds, a scan index.
func (s *Searcher) acquire(ctx context.Context, name, version string) (*entry, error) {
	k := key(name, version)
	for {
		if e := s.lookup(k); e != nil {
			return e, nil
		}
		if _, err := s.detached(ctx, k, func(lctx context.Context) (loaded, error) {
			return s.load(lctx, name, version)
		}); err != nil {
			return nil, err
		}
		// Loop: the inserted entry may already have been evicted by a
		// burst of other versions; then it is loaded again.
	}
}

// start counts a load or a commit in wg, unless the Searcher is closed.
func (s *Searcher) start(wg *sync.WaitGroup) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	wg.Add(1)
	return true
}

func (s *Searcher) lookup(k string) *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.open[k]
	if e == nil {
		return nil
	}
	e.refs++
	s.lru.MoveToFront(e.elem)
	return e
}

// insert opens l.ix as name@version's index. A full index replaces a scan
// index (which closes once its searches end); otherwise an index already
// open stays and l.ix is closed. A scan index built from an offer whose
// store has failed since (early.go) is closed, and the failure returned.
//
// Indexes it evicts are closed after mu is released: an munmap of a
// mapping the searches paged in takes long enough that holding mu
// through it stalled every other lookup.
func (s *Searcher) insert(k string, l loaded) error {
	ix, scan := l.ix, l.scan
	var closing []*index.Index
	defer func() {
		for _, c := range closing {
			_ = c.Close()
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.early != nil && l.early.err != nil {
		closing = append(closing, ix)
		return l.early.err
	}
	if old := s.open[k]; old != nil || s.closed {
		if s.closed || !old.scan || scan {
			closing = append(closing, ix)
			return nil
		}
		closing = append(closing, s.evictLocked(old)...)
	}
	e := &entry{key: k, ix: ix, scan: scan, early: l.early, fromStore: l.fromStore, size: l.size}
	if !l.fromStore {
		e.size = ix.Stats().IndexBytes
	}
	e.elem = s.lru.PushFront(e)
	s.open[k] = e
	s.openBytes += e.size
	for s.lru.Len() > s.opt.MaxOpen || (s.opt.MaxOpenBytes > 0 && s.openBytes > s.opt.MaxOpenBytes && s.lru.Len() > 1) {
		closing = append(closing, s.evictLocked(s.lru.Back().Value.(*entry))...)
	}
	return nil
}

// closeRemoved closes the open full index whose local file at path the
// disk cache removed (at once, or when its last search ends), so the
// file's space is freed: --index-cache-bytes bounds the disk, open
// indexes included. A version needed again is fetched from the store.
func (s *Searcher) closeRemoved(path string) {
	var closing []*index.Index
	s.mu.Lock()
	for k, e := range s.open {
		if !e.scan && !e.fromStore && s.pathOf(k) == path {
			closing = s.evictLocked(e)
			break
		}
	}
	s.mu.Unlock()
	for _, ix := range closing {
		_ = ix.Close()
	}
}

// evictLocked drops e from the open set and returns its index to close
// when no search holds it (else the last release closes it). Called with
// mu held.
func (s *Searcher) evictLocked(e *entry) []*index.Index {
	s.lru.Remove(e.elem)
	delete(s.open, e.key)
	s.openBytes -= e.size
	e.evicted = true
	if e.refs == 0 {
		return []*index.Index{e.ix}
	}
	return nil
}

func (s *Searcher) release(e *entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.refs--
	if e.refs == 0 && e.evicted {
		_ = e.ix.Close()
	}
}

// localPath is where name@version's index lives on this node.
func (s *Searcher) localPath(name, version string) string { return s.pathOf(key(name, version)) }

// pathOf is localPath for an entry's key.
func (s *Searcher) pathOf(k string) string {
	sum := sha256.Sum256([]byte(k))
	return filepath.Join(s.opt.Dir, fmt.Sprintf("%s.f%d.idx", hex.EncodeToString(sum[:16]), index.FormatVersion))
}

// load opens the index from local disk, else fetches it from the store,
// else builds it. With ScanFirst that build is a scan index (reported by
// scan), and the full build goes on in the background. A version offered
// before its commit (early.go) gets a scan index of the spool whatever
// ScanFirst says, and its full build starts after the commit (the fill's
// Index), not here.
func (s *Searcher) load(ctx context.Context, name, version string) (loaded, error) {
	if v := s.takeVerified(key(name, version)); v != nil {
		defer s.releaseBodies(v.b)
		v.b.hold()
		defer v.b.release()
		ix, err := s.buildScan(ctx, name, version, v.files, v.b)
		return loaded{ix: ix, scan: true, early: v}, err
	}
	if l, err := s.stored(ctx, name, version); l.ix != nil || err != nil {
		return l, err
	}
	if !s.opt.ScanFirst {
		return s.buildFull(ctx, name, version)
	}
	files, spooled, err := s.sources(ctx, name, version)
	if err != nil {
		return loaded{}, err
	}
	defer s.releaseBodies(spooled)
	release, err := s.hold(ctx, files)
	if err != nil {
		return loaded{}, err
	}
	ix, err := s.buildScan(ctx, name, version, files, spooled)
	release()
	if err != nil {
		return loaded{}, err
	}
	s.background(name, version)
	return loaded{ix: ix, scan: true}, nil
}

// loadFull is load without the scan index.
func (s *Searcher) loadFull(ctx context.Context, name, version string) (loaded, error) {
	l, err := s.stored(ctx, name, version)
	if l.ix != nil || err != nil {
		return l, err
	}
	return s.buildFull(ctx, name, version)
}

// background builds name@version's full index detached, unless closed.
func (s *Searcher) background(name, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		if _, err := s.Ensure(s.bgCtx, name, version); err != nil && s.bgCtx.Err() == nil {
			s.log.Error("indexing after a scan", "package", name, "version", version, "err", err)
		}
	}()
}

// stored opens the full index from local disk, else from the store. It
// returns no index and no error when neither has one, or when the
// store's failed a search (discardStored) and has not been replaced.
func (s *Searcher) stored(ctx context.Context, name, version string) (loaded, error) {
	if s.opt.Dir != "" {
		path := s.localPath(name, version)
		ix, err := s.openLocal(path)
		if err == nil {
			return loaded{ix: ix}, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("local index unusable; fetching it again", "package", name, "version", version, "err", err)
		}
		if errors.Is(err, index.ErrCorrupt) {
			// Nothing replaces it now (an index fetched from the store is
			// served from memory), and it would be checked and refused at
			// every open.
			s.disk.drop(path)
		}
	}
	if err := s.tooLarge.get(key(name, version)); err != nil {
		return loaded{}, err
	}
	if s.unusable.get(key(name, version)) != nil {
		return loaded{}, nil
	}
	rec, err := s.st.Index(ctx, name, version, index.FormatVersion)
	if err == nil {
		l, err := s.fetch(ctx, name, version, rec)
		if err == nil {
			return l, nil
		}
		s.log.Warn("stored index unusable; rebuilding", "package", name, "version", version, "err", err)
	} else if !errors.Is(err, store.ErrNotFound) {
		return loaded{}, fmt.Errorf("looking up the index of %s@%s: %w", name, version, err)
	}
	return loaded{}, nil
}

// Budget is the memory budget builds share with fills (fill.Budget).
type Budget interface {
	// Hold takes n bytes, waiting while others hold them, until ctx
	// ends; release gives them back.
	Hold(ctx context.Context, n int64) (release func(), err error)
}

// hold takes from Options.Budget the bytes of the distinct bodies of
// files, which a build reads one at a time and indexes together (the
// budget caps a charge at its whole).
func (s *Searcher) hold(ctx context.Context, files []store.File) (func(), error) {
	if s.opt.Budget == nil {
		return func() {}, nil
	}
	seen := make(map[store.Hash]bool, len(files))
	var n int64
	for _, f := range files {
		if !seen[f.Hash] {
			seen[f.Hash] = true
			n += f.Size
		}
	}
	return s.opt.Budget.Hold(ctx, n)
}

// buildFull builds the full index and stores it; it publishes it here
// when the local cache keeps it (keepsLocal), else serves it from the
// stored form just saved. An index the store failed to take is published
// here whatever its size: no other copy of it exists.
func (s *Searcher) buildFull(ctx context.Context, name, version string) (loaded, error) {
	start := time.Now()
	if err := s.builds.Acquire(ctx, 1); err != nil {
		return loaded{}, fmt.Errorf("waiting to index %s@%s: %w", name, version, err)
	}
	files, spooled, err := s.sources(ctx, name, version)
	var sp *spool
	var stats index.Stats
	if err == nil {
		var release func()
		if release, err = s.hold(ctx, files); err == nil {
			sp, stats, err = s.build(ctx, name, version, files, spooled, s.opt.Build)
			release()
		}
		s.releaseBodies(spooled)
	}
	s.builds.Release(1)
	if s.opt.Observe != nil {
		s.opt.Observe(time.Since(start), err)
	}
	if err != nil {
		return loaded{}, err
	}
	defer sp.discard()
	if err := s.save(ctx, name, version, sp, stats); err != nil {
		// The index still serves this node; the next node builds its own.
		// A shutdown cancels the write: nothing went wrong, so no ERROR
		// for someone who pressed Ctrl-C.
		level := slog.LevelError
		if errors.Is(err, context.Canceled) {
			level = slog.LevelInfo
		}
		s.log.Log(ctx, level, "storing a built index", "package", name, "version", version, "err", err)
	} else {
		s.unusable.remove(key(name, version))
		if !s.keepsLocal(sp.n) {
			l, err := s.openSpooledStoredForm(sp)
			if err == nil {
				return l, nil
			}
			s.log.Warn("cannot serve a built index from its stored form; keeping its file", "package", name, "version", version, "err", err)
		}
	}
	ix, err := s.publish(name, version, sp)
	return loaded{ix: ix}, err
}

// keepsLocal reports whether the local cache keeps an index file of n
// bytes: it has a directory, and n fits its whole bound. A larger one
// would only evict everything else, then itself with the next version.
func (s *Searcher) keepsLocal(n int64) bool {
	return s.opt.Dir != "" && (s.opt.CacheBytes == 0 || n <= s.opt.CacheBytes)
}

// openSpooledStoredForm opens the stored form of the index in sp, which
// this node just built and stored, as fetch opens one from the store.
func (s *Searcher) openSpooledStoredForm(sp *spool) (loaded, error) {
	ra, err := sp.readerAt()
	if err != nil {
		return loaded{}, err
	}
	r, n, err := index.StoredForm(ra, sp.n)
	if err != nil {
		return loaded{}, err
	}
	if err := s.holdable(n); err != nil {
		return loaded{}, err
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return loaded{}, fmt.Errorf("reading the index spool: %w", err)
	}
	return s.openStoredForm(data)
}

// holdable refuses a stored form of n bytes larger than MaxOpenBytes,
// which bounds the open indexes' memory together: held, it would close
// every other index and still pass the bound.
func (s *Searcher) holdable(n int64) error {
	if s.opt.MaxOpenBytes > 0 && n > s.opt.MaxOpenBytes {
		return fmt.Errorf("its stored form is %d bytes, more than max-open-index-bytes (%d) lets this node hold in memory; "+
			"raise max-open-index-bytes, or index-cache-bytes so the index is kept as a local file", n, s.opt.MaxOpenBytes)
	}
	return nil
}

// openStoredForm opens data, a verified stored form, reading its text
// through the text cache.
func (s *Searcher) openStoredForm(data []byte) (loaded, error) {
	ix, err := index.OpenStored(data, s.text)
	if err != nil {
		return loaded{}, err
	}
	return loaded{ix: ix, fromStore: true, size: int64(len(data))}, nil
}

// buildScan builds a scan index of files: text and tables, no postings.
// It is neither stored nor kept on disk (its file is unlinked once
// mapped).
func (s *Searcher) buildScan(ctx context.Context, name, version string, files []store.File, spooled *bodies) (*index.Index, error) {
	lim := s.opt.Build
	lim.MaxIndexedBytes = 0
	sp, _, err := s.build(ctx, name, version, files, spooled, lim)
	if err != nil {
		return nil, err
	}
	defer sp.discard()
	if sp.f != nil {
		// Mapped through the very file the build wrote a moment ago, so
		// the checksum, which reads all of it again (0.1 s of CPU on
		// next@16.4.6's 190 MB of text), is skipped: it would only check
		// the page cache against itself. Every table is still checked.
		if ix, err := index.OpenFile(sp.f, index.OpenOptions{SkipChecksum: true}); err == nil {
			return ix, nil // discard unlinks the file; the mapping keeps it
		}
	}
	data, err := sp.bytes()
	if err != nil {
		return nil, err
	}
	return index.OpenBytes(data)
}

// TooLargeError answers a grep of a version whose index would exceed
// BuildLimits.MaxIndexBytes. It wraps index.ErrTooLarge.
type TooLargeError struct {
	Name, Version string
	Limit         int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s@%s is too large to grep on this mirror: its search index would exceed %d bytes "+
		"(setting max-index-bytes); list, glob and read still work on every file of it", e.Name, e.Version, e.Limit)
}

func (e *TooLargeError) Unwrap() error { return index.ErrTooLarge }

// fetch reads a stored index (the index without its text) into memory,
// each chunk checked against its hash, and serves it from there
// (openStoredForm): nothing is written to the local disk, and the text is
// read body by body, as searches reach it, through the text cache.
func (s *Searcher) fetch(ctx context.Context, name, version string, rec store.IndexRecord) (loaded, error) {
	if rec.Size < 0 {
		return loaded{}, fmt.Errorf("the stored index's record says %d bytes", rec.Size)
	}
	if err := s.holdable(rec.Size); err != nil {
		return loaded{}, err
	}
	// Grown past 64 MiB only as chunks arrive: the record is not checked
	// by a hash as the chunks are.
	data := make([]byte, 0, min(rec.Size, 64<<20))
	for _, h := range rec.Chunks {
		b, err := s.body(ctx, h)
		if err != nil {
			return loaded{}, fmt.Errorf("reading a chunk of the stored index: %w", err)
		}
		if int64(len(data)+len(b)) > rec.Size {
			return loaded{}, fmt.Errorf("the stored index's chunks pass the %d bytes its record says", rec.Size)
		}
		data = append(data, b...)
	}
	if int64(len(data)) != rec.Size {
		return loaded{}, fmt.Errorf("the stored index is %d bytes, its record says %d", len(data), rec.Size)
	}
	return s.openStoredForm(data)
}

// sources returns a committed version's files, and the bodies its fill
// spooled (with a reference held: release it) or nil.
func (s *Searcher) sources(ctx context.Context, name, version string) ([]store.File, *bodies, error) {
	files, err := s.st.Files(ctx, name, version)
	if err != nil {
		return nil, nil, fmt.Errorf("listing %s@%s to index it: %w", name, version, err)
	}
	return files, s.takeBodies(key(name, version)), nil
}

// build builds name@version's index of files into a spool. Each distinct
// body is read once, when the build reaches it, and dropped once written:
// from spooled when it holds it intact (Spool), else from the store.
func (s *Searcher) build(ctx context.Context, name, version string, files []store.File, spooled *bodies, lim index.BuildLimits) (*spool, index.Stats, error) {
	docs := make([]index.Doc, len(files))
	for i, f := range files {
		docs[i] = index.Doc{Path: f.Path, Key: string(f.Hash[:]), Load: func() ([]byte, error) {
			if spooled != nil {
				if body, ok := spooled.get(f.Hash); ok {
					return body, nil
				}
			}
			body, err := s.body(ctx, f.Hash)
			if err != nil {
				return nil, fmt.Errorf("reading %s of %s@%s to index it: %w", f.Path, name, version, err)
			}
			return body, nil
		}}
	}
	sp := s.newSpool()
	stats, err := index.Build(sp, docs, lim)
	if err != nil {
		sp.discard()
		if errors.Is(err, index.ErrTooLarge) {
			tl := &TooLargeError{Name: name, Version: version, Limit: s.opt.Build.MaxIndexBytes}
			s.tooLarge.put(key(name, version), tl)
			return nil, index.Stats{}, tl
		}
		return nil, index.Stats{}, fmt.Errorf("indexing %s@%s: %w", name, version, err)
	}
	what := "indexed"
	if lim.MaxIndexedBytes == 0 {
		what = "scan index built"
	}
	s.log.Info(what, "package", name, "version", version, "files", stats.Files, "contents", stats.Contents,
		"text_bytes", stats.TextBytes, "coverage", stats.Coverage, "index_bytes", stats.IndexBytes)
	return sp, stats, nil
}

// save stores a built index as chunks plus its record. What is stored is
// the index without its text (index.StoredForm): the text is a copy of the
// bodies the store already holds, which fetch's index reads as it needs.
func (s *Searcher) save(ctx context.Context, name, version string, sp *spool, stats index.Stats) error {
	ra, err := sp.readerAt()
	if err != nil {
		return err
	}
	r, n, err := index.StoredForm(ra, sp.n)
	if err != nil {
		return err
	}
	rec := store.IndexRecord{Format: index.FormatVersion, Size: n, Coverage: stats.Coverage}
	if rec.Stats, err = json.Marshal(stats); err != nil {
		return err
	}
	buf := make([]byte, s.opt.ChunkBytes)
	for {
		k, err := io.ReadFull(r, buf)
		if k > 0 {
			b := store.Blob{Hash: store.HashOf(buf[:k]), Data: buf[:k]}
			if err := s.st.PutBlobs(ctx, []store.Blob{b}); err != nil {
				return err
			}
			rec.Chunks = append(rec.Chunks, b.Hash)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the index spool: %w", err)
		}
	}
	if err := s.st.PutIndex(ctx, name, version, rec); err != nil {
		return err
	}
	s.log.Info("index stored", "package", name, "version", version, "stored_bytes", rec.Size, "chunks", len(rec.Chunks))
	return nil
}

// publish opens the spooled index: renamed into the local cache when the
// spool is a file there, else from memory.
func (s *Searcher) publish(name, version string, sp *spool) (*index.Index, error) {
	if sp.f != nil && s.opt.Dir != "" && filepath.Dir(sp.f.Name()) == filepath.Clean(s.opt.Dir) {
		ix, err := s.publishLocal(s.localPath(name, version), sp)
		if err == nil {
			return ix, nil
		}
		s.log.Warn("local index cache not writable; serving from memory", "dir", s.opt.Dir, "err", err)
	}
	data, err := sp.bytes()
	if err != nil {
		return nil, err
	}
	return index.OpenBytes(data)
}

// publishLocal publishes the spool file at path atomically: check, rename.
func (s *Searcher) publishLocal(path string, sp *spool) (*index.Index, error) {
	if err := sp.f.Sync(); err != nil {
		return nil, err
	}
	ix, err := index.Open(sp.f.Name())
	if err != nil {
		return nil, err
	}
	// The mapping follows the inode, so it stays valid across the rename.
	if err := os.Rename(sp.f.Name(), path); err != nil {
		ix.Close()
		return nil, err
	}
	sp.renamed = true
	s.disk.add(path, sp.n)
	s.verifyPublished(path, sp.f)
	return ix, nil
}
