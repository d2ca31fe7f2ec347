package reliability

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// fullDisk returns a directory on which writes fail part-way: a 64 KiB
// tmpfs when the test runs as root (writes stop with ENOSPC), else a
// directory without write permission (writes fail at once). Either way
// the index cache cannot keep what it builds.
func fullDisk(t *testing.T) (dir, kind string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "indexes")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		return dir, "read-only directory"
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mounting a 64 KiB tmpfs at %s (the test runs as root, so it can): %v\n%s", dir, err, out)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir, "64 KiB tmpfs"
}

// TestIndexCacheDiskFull: with the local index cache on a disk that fills
// up mid-write, grep still answers, right, from an index kept in memory
// (and in the store); no half-written file is left behind, and the
// mirror stays up.
func TestIndexCacheDiskFull(t *testing.T) {
	dir, kind := fullDisk(t)
	m := newMirror(t, func(c *config.Config) { c.IndexDir = dir })
	// About 1.2 MB of text: its index is far over 64 KiB.
	files := map[string]string{"package.json": `{"name":"wide"}`}
	for i := range 40 {
		var b strings.Builder
		for j := range 1000 {
			fmt.Fprintf(&b, "export const sym_%d_%d = %d; // filler text to index\n", i, j, i*j)
		}
		files[fmt.Sprintf("lib/f%02d.js", i)] = b.String()
	}
	m.reg.Publish("wide", "1.0.0", tb.Package(t, files))

	for i := range 3 {
		a := m.explore(`{"action":"grep","packageName":"wide","version":"1.0.0","pattern":"sym_17_99[0-9] ="}`)
		if a.status != 200 {
			t.Fatalf("grep %d with the index cache on a full %s: %v", i+1, kind, a)
		}
		var res struct {
			Matches []struct {
				File string
				Line int
			}
		}
		if err := json.Unmarshal(a.body, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Matches) != 10 || res.Matches[0].File != "lib/f17.js" || res.Matches[0].Line != 991 {
			t.Fatalf("grep %d: %d matches %+v, want lib/f17.js lines 991-1000", i+1, len(res.Matches), res.Matches)
		}
	}
	// The first grep was answered from a scan index while the full one
	// built behind it: join that build before looking at the cache.
	if err := m.app.EnsureIndex(t.Context(), "wide", "1.0.0"); err != nil {
		t.Fatalf("the full index build: %v", err)
	}
	if !strings.Contains(m.log.String(), "local index cache not writable; serving from memory") {
		t.Errorf("the mirror did not say it fell back to memory; log:\n%s", m.log)
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left in the full index cache: %s", e.Name())
	}
	if a := m.get("/healthz"); a.status != 200 {
		t.Errorf("healthz after the disk filled: %v", a)
	}
}
