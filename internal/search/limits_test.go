package search

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/store"
)

// TestSharedBodyReadOnce guards issue 11 §4: a version whose 4,000 files
// hold one body made the build read (and index) every copy. The body is
// now read from the store once per build and the index holds it once.
func TestSharedBodyReadOnce(t *testing.T) {
	st := newStore(t)
	body := strings.Repeat("export const needle = 1; // one line of a shared body\n", 2500) // 130 KB
	h := store.HashOf([]byte(body))
	v := store.NewVersion{Name: "dup", Version: "1.0.0", Integrity: "sha512-x"}
	for i := range 4000 {
		v.Files = append(v.Files, store.File{Path: fmt.Sprintf("copies/%04d.js", i), Size: int64(len(body)), Hash: h})
	}
	other := []byte("needle\n")
	v.Files = append(v.Files, store.File{Path: "other.js", Size: int64(len(other)), Hash: store.HashOf(other)})
	if err := st.PutBlobs(t.Context(), []store.Blob{{Hash: h, Data: []byte(body)}, {Hash: store.HashOf(other), Data: other}}); err != nil {
		t.Fatal(err)
	}
	if err := st.CommitVersion(t.Context(), v); err != nil {
		t.Fatal(err)
	}
	s := newSearcher(t, st, t.TempDir(), 4)
	s.opt.ChunkBytes = 4 << 20
	stats, err := s.Ensure(t.Context(), "dup", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if n := st.reads[h]; n != 1 {
		t.Errorf("the shared body was read %d times, want 1", n)
	}
	if stats.IndexBytes > 2*int64(len(body)) {
		t.Errorf("index is %d bytes, want at most twice the one body (%d)", stats.IndexBytes, len(body))
	}
	res, err := s.Search(t.Context(), "dup", "1.0.0", index.Query{Pattern: "needle", MaxMatchesPerFile: 1, MaxMatches: 5000})
	if err != nil || len(res.Matches) != 4001 {
		t.Fatalf("%d matches, %v; want one per file (4001)", len(res.Matches), err)
	}
}

// TestIndexSizeLimit: a version whose index would pass MaxIndexBytes is
// refused with an error naming the setting and what still works, the
// refusal is remembered (no second build), and other versions still grep.
func TestIndexSizeLimit(t *testing.T) {
	st := newStore(t)
	publish(t, st, "big", "1.0.0", map[string]string{"a.js": strings.Repeat("x", 64<<10)})
	publish(t, st, "small", "1.0.0", map[string]string{"a.js": "x\n"})
	opt := DefaultOptions(t.TempDir())
	opt.Build.MaxIndexBytes = 32 << 10
	s, err := New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 2 {
		_, err := s.Search(t.Context(), "big", "1.0.0", index.Query{Pattern: "x"})
		var tl *TooLargeError
		if !errors.As(err, &tl) || !errors.Is(err, index.ErrTooLarge) {
			t.Fatalf("grep over the limit: %v, want a TooLargeError", err)
		}
		for _, want := range []string{"big@1.0.0", "max-index-bytes", "list, glob and read still work"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message %q does not say %q", err, want)
			}
		}
	}
	if n := st.builds(); n != 1 {
		t.Errorf("built %d times, want 1 (the refusal is remembered)", n)
	}
	if ents, _ := os.ReadDir(opt.Dir); len(ents) != 0 {
		t.Errorf("a refused build left %d files in the cache", len(ents))
	}
	if got := grep(t, s, "small", "1.0.0", "x"); len(got) != 1 {
		t.Errorf("grep under the limit: %q", got)
	}
}

// TestDiskCacheEvictsLeastRecentlyUsed: past CacheBytes the least
// recently used index files are removed; a removed one is fetched from the
// store again, and a restart keeps the order of use.
func TestDiskCacheEvictsLeastRecentlyUsed(t *testing.T) {
	st := newStore(t)
	for _, v := range []string{"1.0.0", "2.0.0", "3.0.0"} {
		publish(t, st, "p", v, map[string]string{"a.js": "version " + v + "\n" + strings.Repeat("filler line\n", 100)})
	}
	dir := t.TempDir()
	s := newSearcher(t, st, dir, 1)
	stats, err := s.Ensure(t.Context(), "p", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	s.disk.max = 2*stats.IndexBytes + stats.IndexBytes/2 // room for two
	grep(t, s, "p", "2.0.0", "version")
	grep(t, s, "p", "1.0.0", "version") // 1 is now more recent than 2
	grep(t, s, "p", "3.0.0", "version") // evicts 2
	exists := func(v string) bool {
		_, err := os.Stat(s.localPath("p", v))
		return err == nil
	}
	if !exists("1.0.0") || exists("2.0.0") || !exists("3.0.0") {
		t.Errorf("after using 1, 2, 1, 3 with room for two: 1 %v, 2 %v, 3 %v; want 2 evicted", exists("1.0.0"), exists("2.0.0"), exists("3.0.0"))
	}
	if got := s.disk.bytes(); got > s.disk.max {
		t.Errorf("cache holds %d bytes, over its bound %d", got, s.disk.max)
	}
	if got := grep(t, s, "p", "2.0.0", "version 2"); len(got) != 1 { // fetched from the store
		t.Errorf("grep of an evicted version: %q", got)
	}
	if n := st.builds(); n != 3 {
		t.Errorf("built %d times, want 3 (an evicted index is fetched, not rebuilt)", n)
	}

	// A restart with a smaller bound evicts by the recorded order of use:
	// 3 was used after 1 (2, fetched from the store, has no file).
	stale := filepath.Join(dir, "old.f1.idx")
	os.WriteFile(stale, []byte("index of an older format"), 0o600)
	opt := DefaultOptions(dir)
	opt.CacheBytes = stats.IndexBytes + stats.IndexBytes/2
	s2, err := New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if !exists("3.0.0") || exists("1.0.0") || exists("2.0.0") {
		t.Errorf("after a restart with room for one: 1 %v, 2 %v, 3 %v; want only 3", exists("1.0.0"), exists("2.0.0"), exists("3.0.0"))
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("an index file of another format was kept")
	}
}
