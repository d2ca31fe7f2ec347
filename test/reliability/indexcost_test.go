package reliability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// sameBodyPackage is issue 11 §4's package: files copies of one 128 KiB
// body, about 1.7 MB as a tarball at 4,000 copies.
func sameBodyPackage(t *testing.T, copies int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < 128<<10; i++ {
		fmt.Fprintf(&b, "export const value_%d = %d; // the same body in every file\n", i, i)
	}
	files := map[string]string{"package.json": `{"name":"copies"}`}
	for i := range copies {
		files[fmt.Sprintf("lib/copy%04d.js", i)] = b.String()
	}
	return tb.Package(t, files)
}

// TestIndexCostFollowsUniqueText: 4,000 copies of one 128 KiB body made a
// 517 MiB index (and ~3.1 GiB of RSS to build it). The index now holds the
// body once, and grep still answers for every copy. 1,000 copies keep the
// test fast and would still make a 128 MiB index before.
func TestIndexCostFollowsUniqueText(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "indexes")
	m := newMirror(t, func(c *config.Config) { c.IndexDir = dir })
	m.reg.Publish("copies", "1.0.0", sameBodyPackage(t, 1000))
	// A cold fill of 128 MiB unpacked, then the index: not a hang test,
	// so the client waits longer than answerBound (a loaded CI machine
	// once took over 5 s).
	a := do(t.Context(), m.hc, "POST", m.url+"/v1/explore",
		`{"action":"grep","packageName":"copies","version":"1.0.0","pattern":"value_7 = 7;","outputMode":"count","sort":"path"}`, time.Minute)
	if a.status != 200 {
		t.Fatalf("grep: %v", a)
	}
	var res struct {
		FilesSearched int
		Files         []struct {
			Path  string
			Count int
		}
	}
	if err := json.Unmarshal(a.body, &res); err != nil {
		t.Fatal(err)
	}
	// The answer is cut to its byte budget; every copy was searched and
	// each file listed holds the line once.
	if res.FilesSearched != 1001 || len(res.Files) == 0 {
		t.Fatalf("searched %d files, listed %d; want 1001 searched (1000 copies and package.json)", res.FilesSearched, len(res.Files))
	}
	for i, f := range res.Files {
		if want := fmt.Sprintf("lib/copy%04d.js", i); f.Path != want || f.Count != 1 {
			t.Fatalf("file %d: %+v, want %s with 1 line", i, f, want)
		}
	}
	// The first grep may answer from a scan index while the full one
	// builds behind it: join that build before measuring its file.
	if err := m.app.EnsureIndex(t.Context(), "copies", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	var total int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if info, err := e.Info(); err == nil {
			total += info.Size()
		}
	}
	if total == 0 || total > 1<<20 {
		t.Errorf("the local index cache holds %d bytes, want under 1 MiB (one 128 KiB body and its postings)", total)
	}
}

// TestIndexOverTheLimitStillListsAndReads: a version whose index would
// pass max-index-bytes answers grep with 422 package_too_large saying why
// and what still works; list and read still work.
func TestIndexOverTheLimitStillListsAndReads(t *testing.T) {
	m := newMirror(t, func(c *config.Config) { c.MaxIndexBytes = 64 << 10 })
	var b strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&b, "line %d of a body too large to index here\n", i)
	}
	m.reg.Publish("wide", "1.0.0", tb.Package(t, map[string]string{"package.json": `{"name":"wide"}`, "big.js": b.String()}))
	for i := range 2 {
		a := m.explore(`{"action":"grep","packageName":"wide","version":"1.0.0","pattern":"line 7 "}`)
		if a.status != 422 || a.code() != "package_too_large" {
			t.Fatalf("grep %d over max-index-bytes: %v, want 422 package_too_large", i+1, a)
		}
		for _, want := range []string{"max-index-bytes", "list, glob and read still work"} {
			if !strings.Contains(string(a.body), want) {
				t.Errorf("grep answer %s does not say %q", a.body, want)
			}
		}
	}
	if a := m.explore(`{"action":"list","packageName":"wide","version":"1.0.0"}`); a.status != 200 {
		t.Errorf("list over max-index-bytes: %v", a)
	}
	if a := m.explore(`{"action":"read","packageName":"wide","version":"1.0.0","path":"big.js","limit":3}`); a.status != 200 || !strings.Contains(string(a.body), "line 2 of a body") {
		t.Errorf("read over max-index-bytes: %v", a)
	}
}
