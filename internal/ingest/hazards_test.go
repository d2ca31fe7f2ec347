package ingest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/race"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// The hazards below complete the list (docs/RELIABILITY.md names
// the test of each); the others live in ingest_test.go.

// millionEntries is a .tgz of n directory entries: 512 bytes of header
// each, 512 MB of tar for a million, which gzip folds to a few MB. It is
// streamed, so building it holds only the compressed form.
func millionEntries(t *testing.T, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	for i := range n {
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("package/d%07d/", i), Typeflag: tar.TypeDir, Mode: 0o755, Format: tar.FormatUSTAR}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A million entries stop at MaxEntries (200,000 by default): the archive
// is refused after reading a fifth of it, and what Ingest allocates grows
// with MaxEntries, not with the archive (the skipped-entry records are
// capped at MaxSkipped).
func TestMillionEntryArchiveStopsAtMaxEntries(t *testing.T) {
	tgz := millionEntries(t, 1_000_000)
	lim := DefaultLimits()
	rec := newRecorder()
	var err error
	allocated := allocatedBy(func() {
		_, err = Ingest(context.Background(), rec, "demo", "1.0.0", "", tgz, lim)
	})
	var le *LimitError
	if !errors.As(err, &le) || le.Setting != "MaxEntries" {
		t.Fatalf("err = %v, want a LimitError on MaxEntries", err)
	}
	rec.nothingCommitted(t)
	// Measured: about 400 bytes per entry read (archive/tar's header
	// parsing, all garbage at once), so 76 MiB for 200,000; reading all
	// 1,000,000 would be 380 MiB.
	perEntry := allocated / uint64(lim.MaxEntries)
	t.Logf("%d KiB compressed; allocated %d MiB, %d bytes per entry read", len(tgz)>>10, allocated>>20, perEntry)
	if race.Enabled {
		// archive/tar's Next discards the last entry's remainder with
		// io.CopyN(io.Discard, r, 0), whose 8 KiB buffer comes from a
		// sync.Pool; under -race the pool drops one Put in four, so that
		// is 2 KiB more per entry (480 MiB measured for 200,000, 2,517
		// bytes per entry), none of it Ingest's. The bound is checked in
		// a normal build.
		return
	}
	if allocated > 128<<20 {
		t.Errorf("allocated %d MiB for %d entries read", allocated>>20, lim.MaxEntries)
	}
}

// A path 10,000 folders deep (20 KB, in a PAX record) is refused by its
// depth or length before its body is read.
func TestTenThousandDeepPathIsRefused(t *testing.T) {
	deep := "package/" + strings.Repeat("a/", 10_000) + "x.js"
	rec := newRecorder()
	_, err := Ingest(context.Background(), rec, "demo", "1.0.0", "", tb.TGZ(t, tb.File("package/ok.js", "ok"), tb.File(deep, "deep body")), DefaultLimits())
	var le *LimitError
	if !errors.As(err, &le) || (le.Setting != "MaxPathDepth" && le.Setting != "MaxPathBytes") {
		t.Fatalf("err = %v, want a LimitError on MaxPathDepth or MaxPathBytes", err)
	}
	rec.nothingCommitted(t)
	if rec.wrote("deep body") {
		t.Error("the deep file's body was written")
	}
}

// paxEntry is a PAX extended header carrying records, for the entry after
// it.
func paxEntry(kv ...string) rawEntry {
	rec := paxRecords(kv...)
	return rawEntry{name: "package/PaxHeaders/x", typeflag: tar.TypeXHeader, size: int64(len(rec)), body: rec}
}

// A PAX path that disagrees with the ustar name wins, as in node-tar (so
// the store holds what npm would extract), and goes through the same path
// rule: a PAX path that escapes is skipped, whatever innocent name the
// ustar header shows.
func TestPAXPathOverridesUstarName(t *testing.T) {
	tgz := rawTGZ(t,
		paxEntry("path", "package/real.js"),
		rawEntry{name: "package/shown.js", typeflag: '0', size: 4, body: []byte("real")},
		paxEntry("path", "package/../../../etc/passwd"),
		rawEntry{name: "package/innocent.js", typeflag: '0', size: 4, body: []byte("evil")},
	)
	files, res := mustIngest(t, tgz, DefaultLimits())
	if want := map[string]string{"real.js": "real"}; !maps.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	if res.SkippedCount != 1 || !strings.Contains(res.Skipped[0].Reason, "invalid path") || res.Skipped[0].Path != "package/../../../etc/passwd" {
		t.Errorf("Skipped = %+v, want the PAX path refused", res.Skipped)
	}
}

// A PAX size that disagrees with the ustar size wins too (node-tar does
// the same), consistently: the body is read to the PAX size and the next
// header is found after it; a PAX size over the caps is refused before a
// byte of the body is read.
func TestPAXSizeOverridesUstarSize(t *testing.T) {
	tgz := rawTGZ(t,
		paxEntry("size", "512"),
		rawEntry{name: "package/a.js", typeflag: '0', size: 5, body: []byte("aaaaa")}, // padded to 512
		rawEntry{name: "package/b.js", typeflag: '0', size: 3, body: []byte("bbb")},
	)
	files, _ := mustIngest(t, tgz, DefaultLimits())
	if len(files["a.js"]) != 512 || !strings.HasPrefix(files["a.js"], "aaaaa\x00") || files["b.js"] != "bbb" {
		t.Errorf("files %q, want a.js of 512 bytes (the PAX size) and b.js intact", files)
	}

	huge := rawTGZ(t,
		paxEntry("size", fmt.Sprint(int64(1)<<40)),
		rawEntry{name: "package/a.js", typeflag: '0', size: 5, body: []byte("aaaaa")},
	)
	rec := newRecorder()
	var err error
	allocated := allocatedBy(func() { _, err = Ingest(context.Background(), rec, "demo", "1.0.0", "", huge, DefaultLimits()) })
	var le *LimitError
	if !errors.As(err, &le) || le.Setting != "MaxFileBytes" {
		t.Fatalf("PAX size 1 TiB: err = %v, want a LimitError on MaxFileBytes", err)
	}
	if allocated > 1<<20 {
		t.Errorf("PAX size 1 TiB: allocated %d bytes", allocated)
	}
	rec.nothingCommitted(t)
}

// Unicode aliases — NFC and NFD spellings of one name, fullwidth dots that
// look like "..", a right-to-left override — are different byte strings:
// each is its own file (as in the registry's tarball), none is read as a
// path step, and none escapes.
func TestUnicodeAliasesAreDistinctFiles(t *testing.T) {
	t.Parallel()
	tgz := tb.TGZ(t,
		tb.File("package/caf\u00e9.js", "nfc"),
		tb.File("package/cafe\u0301.js", "nfd"),
		tb.File("package/\uff0e\uff0e/x.js", "fullwidth dots"),
		tb.File("package/\u2024\u2024/y.js", "one-dot leaders"),
		tb.File("package/gnp.\u202ejs", "rtl override"),
	)
	files, res := mustIngest(t, tgz, DefaultLimits())
	for _, p := range []string{"caf\u00e9.js", "cafe\u0301.js", "\uff0e\uff0e/x.js", "\u2024\u2024/y.js"} {
		if _, ok := files[p]; !ok {
			t.Errorf("%q missing: files %q, skipped %+v", p, files, res.Skipped)
		}
	}
	for p := range files {
		if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") {
			t.Errorf("stored path %q escapes", p)
		}
	}
	// The bidi override is a control character: refused like other
	// control characters, or kept; either way accounted for.
	if len(files)+res.SkippedCount != 5 {
		t.Errorf("%d files + %d skipped, want 5 entries accounted for", len(files), res.SkippedCount)
	}
}

// A symlink to outside the package, then a file "through" it: the store
// has no filesystem to follow links in, so the link is skipped and the
// file is stored under its own path, inside the package; a hard link to
// outside is skipped too. Nothing reaches /etc.
func TestLinkEscapesStayInsideThePackage(t *testing.T) {
	t.Parallel()
	tgz := tb.TGZ(t,
		tb.Symlink("package/etc", "/etc"),
		tb.File("package/etc/passwd", "root::0:0"),
		tb.Symlink("package/up", "../../../../"),
		tb.File("package/up/evil.js", "up"),
		tb.Hardlink("package/shadow", "../../../../etc/shadow"),
	)
	files, res := mustIngest(t, tgz, DefaultLimits())
	if want := map[string]string{"etc/passwd": "root::0:0", "up/evil.js": "up"}; !maps.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	want := []Skipped{{"etc", ReasonSymlink}, {"up", ReasonSymlink}, {"shadow", ReasonHardlink}}
	if fmt.Sprint(res.Skipped) != fmt.Sprint(want) {
		t.Errorf("Skipped = %+v, want %+v", res.Skipped, want)
	}
}
