package ingest

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/store"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

func TestStoresFilesSortedWithHashesAndFlags(t *testing.T) {
	t.Parallel()
	bin := []byte("\x7fELF\x00\x01")
	tool := tb.Bytes("package/bin/tool", bin)
	tool.Header.Mode = 0o100755 // file-type bits too: only the permissions are kept
	tgz := tb.TGZ(t,
		tb.File("package/package.json", `{"name":"demo"}`),
		tb.File("package/lib/b.js", "b"),
		tool,
		tb.File("package/lib/a.js", "a"),
		tb.File("package/empty.txt", ""),
		tb.File("package/latin1.txt", "caf\xe9"),
	)
	rec := newRecorder()
	res, err := Ingest(context.Background(), rec, "demo", "1.0.0", "sha512-x", tgz, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	want := []store.File{
		{Path: "bin/tool", Size: int64(len(bin)), Hash: store.HashOf(bin), Binary: true, UTF8: store.UTF8Valid, Mode: 0o100755, Order: 2},
		{Path: "empty.txt", Size: 0, Hash: store.HashOf(nil), UTF8: store.UTF8Valid, Mode: 0o100644, Order: 4},
		{Path: "latin1.txt", Size: 4, Hash: store.HashOf([]byte("caf\xe9")), UTF8: store.UTF8Invalid, Mode: 0o100644, Order: 5},
		{Path: "lib/a.js", Size: 1, Hash: store.HashOf([]byte("a")), UTF8: store.UTF8Valid, Mode: 0o100644, Order: 3},
		{Path: "lib/b.js", Size: 1, Hash: store.HashOf([]byte("b")), UTF8: store.UTF8Valid, Mode: 0o100644, Order: 1},
		{Path: "package.json", Size: 15, Hash: store.HashOf([]byte(`{"name":"demo"}`)), UTF8: store.UTF8Valid, Mode: 0o100644, Order: 0},
	}
	if !slices.Equal(res.Files, want) {
		t.Errorf("Files = %+v\nwant %+v", res.Files, want)
	}
	if res.TotalBytes != int64(len(bin))+21 {
		t.Errorf("TotalBytes = %d", res.TotalBytes)
	}
	c := rec.commits[0]
	if c.Name != "demo" || c.Version != "1.0.0" || c.Integrity != "sha512-x" || !slices.Equal(c.Files, want) {
		t.Errorf("committed %+v", c)
	}
}

func TestStripsTopFolderWhateverItsName(t *testing.T) {
	t.Parallel()
	// "." is the top of old tarballs made with "tar czf x ."
	for _, top := range []string{"package", "react", "node", "mylib-0.1.0", "."} {
		tgz := tb.PackageUnder(t, top, map[string]string{"index.js": "i", "lib/a.js": "a"})
		files, _ := mustIngest(t, tgz, DefaultLimits())
		if want := map[string]string{"index.js": "i", "lib/a.js": "a"}; !maps.Equal(files, want) {
			t.Errorf("top %q: files %v, want %v", top, files, want)
		}
	}
}

func TestMixedTopFoldersAreEachStripped(t *testing.T) {
	t.Parallel()
	tgz := tb.TGZ(t, tb.File("package/a.js", "a"), tb.File("other/b.js", "b"))
	files, _ := mustIngest(t, tgz, DefaultLimits())
	if want := map[string]string{"a.js": "a", "b.js": "b"}; !maps.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
}

func TestFileAtArchiveRootIsDropped(t *testing.T) {
	t.Parallel()
	tgz := tb.TGZ(t, tb.File("package/index.js", "i"), tb.File("README.md", "stray readme"))
	files, res := mustIngest(t, tgz, DefaultLimits())
	if want := map[string]string{"index.js": "i"}; !maps.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	if want := []Skipped{{Path: "README.md", Reason: ReasonAtRoot}}; !slices.Equal(res.Skipped, want) {
		t.Errorf("Skipped = %v, want %v", res.Skipped, want)
	}
}

func TestKeepsRegularFilesOnly(t *testing.T) {
	t.Parallel()
	dev := func(name string, flag byte) tb.Entry {
		return tb.Entry{Header: tar.Header{Name: name, Typeflag: flag, Mode: 0o600, Devmajor: 1, Devminor: 3}}
	}
	tgz := tb.TGZ(t,
		tb.Entry{Header: tar.Header{Name: "pax_global_header", Typeflag: tar.TypeXGlobalHeader,
			PAXRecords: map[string]string{"comment": "git archive"}}},
		tb.Dir("package/"),
		tb.Dir("package/lib/"),
		tb.File("package/lib/a.js", "a"),
		tb.Symlink("package/passwd", "/etc/passwd"),
		tb.Symlink("package/up", "../../.."),
		tb.Hardlink("package/hard.js", "package/lib/a.js"),
		dev("package/null", tar.TypeChar),
		dev("package/sda", tar.TypeBlock),
		dev("package/pipe", tar.TypeFifo),
	)
	files, res := mustIngest(t, tgz, DefaultLimits())
	if want := map[string]string{"lib/a.js": "a"}; !maps.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	want := []Skipped{
		{"pax_global_header", ReasonGlobalHeader},
		{"package/", ReasonDirectory}, // at the root: the raw name
		{"lib", ReasonDirectory},
		{"passwd", ReasonSymlink},
		{"up", ReasonSymlink},
		{"hard.js", ReasonHardlink},
		{"null", ReasonDevice},
		{"sda", ReasonDevice},
		{"pipe", ReasonFifo},
	}
	if !slices.Equal(res.Skipped, want) || res.SkippedCount != len(want) {
		t.Errorf("Skipped = %v (count %d)\nwant %v", res.Skipped, res.SkippedCount, want)
	}
}

// Some packers write the pre-POSIX typeflag '\x00' for regular files.
func TestOldRegularTypeflagIsAFile(t *testing.T) {
	t.Parallel()
	tgz := rawTGZ(t,
		rawEntry{name: "package/old.js", typeflag: '\x00', size: 3, body: []byte("old")},
		rawEntry{name: "package/dir/", typeflag: '\x00'}, // '\x00' with a slash is a directory
	)
	files, res := mustIngest(t, tgz, DefaultLimits())
	if want := map[string]string{"old.js": "old"}; !maps.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	if res.SkippedCount != 1 || res.Skipped[0].Reason != ReasonDirectory {
		t.Errorf("Skipped = %v", res.Skipped)
	}
}

// node-tar extracts a "contiguous file" ('7') as a regular file.
func TestContiguousFileIsAFile(t *testing.T) {
	t.Parallel()
	tgz := rawTGZ(t, rawEntry{name: "package/c.js", typeflag: tar.TypeCont, size: 1, body: []byte("c")})
	files, _ := mustIngest(t, tgz, DefaultLimits())
	if want := map[string]string{"c.js": "c"}; !maps.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
}

func TestLongNamesFromPAXAndGNUHeaders(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("deep/", 40) + "file.js" // 207 bytes: past ustar's 100+155
	for _, format := range []tar.Format{tar.FormatPAX, tar.FormatGNU} {
		e := tb.File("package/"+long, "x")
		e.Header.Format = format
		files, _ := mustIngest(t, tb.TGZ(t, e), DefaultLimits())
		if want := map[string]string{long: "x"}; !maps.Equal(files, want) {
			t.Errorf("%v: files %v", format, slices.Collect(maps.Keys(files)))
		}
	}
}

// Paths are stored as bytes: a Latin-1 name from an old tarball survives.
func TestNonUTF8NameIsKept(t *testing.T) {
	t.Parallel()
	e := tb.File("package/caf\xe9.js", "x")
	e.Header.Format = tar.FormatGNU
	files, _ := mustIngest(t, tb.TGZ(t, e), DefaultLimits())
	if want := map[string]string{"caf\xe9.js": "x"}; !maps.Equal(files, want) {
		t.Errorf("files %q, want %q", files, want)
	}
}

// A GNU sparse entry's header can claim any logical size; archive/tar would
// hand back zeros for the holes. 3 KB of tar claiming 1 TiB must be refused
// from the header, before reading anything.
func TestRefusesGNUSparseFromHeader(t *testing.T) {
	const tib = 1 << 40
	tests := []struct {
		name string
		tar  []byte
	}{
		{"old GNU type S", rawTar(t,
			rawEntry{name: "package/a.js", typeflag: '0', size: 1, body: []byte("a")},
			rawEntry{name: "package/big", typeflag: tar.TypeGNUSparse, gnu: true, size: 512,
				realSize: tib, sparse: [][2]int64{{tib - 512, 512}}, body: make([]byte, 512)},
		)},
		{"PAX GNU.sparse 1.0", rawTar(t,
			func() rawEntry {
				rec := paxRecords("GNU.sparse.major", "1", "GNU.sparse.minor", "0",
					"GNU.sparse.name", "package/big", "GNU.sparse.realsize", fmt.Sprint(int64(tib)))
				return rawEntry{name: "package/PaxHeaders/big", typeflag: tar.TypeXHeader, size: int64(len(rec)), body: rec}
			}(),
			rawEntry{name: "package/GNUSparseFile.0/big", typeflag: '0', size: 1024,
				body: append([]byte("1\n1099511627264\n512\n"+strings.Repeat("\x00", 512-20)), make([]byte, 512)...)},
		)},
	}
	for _, tt := range tests {
		if len(tt.tar) > 4*1024 {
			t.Fatalf("%s: test tar is %d bytes", tt.name, len(tt.tar))
		}
		rec := newRecorder()
		allocated := allocatedBy(func() {
			_, err := Ingest(context.Background(), rec, "demo", "1.0.0", "", tb.Gzip(t, tt.tar), DefaultLimits())
			if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "sparse") {
				t.Errorf("%s: err = %v, want ErrUnsupported about sparse", tt.name, err)
			}
		})
		rec.nothingCommitted(t)
		if allocated > 1<<20 {
			t.Errorf("%s: allocated %d bytes", tt.name, allocated)
		}
	}
}

// node-tar skips entries whose path would escape the extraction folder
// (with a warning); so does Ingest. Their bodies are never written.
func TestSkipsPathsThatEscapeOrInject(t *testing.T) {
	t.Parallel()
	hostile := []string{
		"package/../../etc/passwd",
		"../package/x.js",
		"/etc/passwd",
		"package/a/../../../x",
		`package/..\..\windows.js`,
		"package/term\x1b[2J.js",
		"package/line\nbreak.js",
		"package/nel\u0085.js",
	}
	entries := []tb.Entry{tb.File("package/ok.js", "ok")}
	for i, p := range hostile {
		entries = append(entries, tb.File(p, fmt.Sprintf("hostile body %d", i)))
	}
	files, res := mustIngest(t, tb.TGZ(t, entries...), DefaultLimits())
	if want := map[string]string{"ok.js": "ok"}; !maps.Equal(files, want) {
		t.Errorf("files %q, want %q", files, want)
	}
	if res.SkippedCount != len(hostile) {
		t.Errorf("SkippedCount = %d, want %d: %v", res.SkippedCount, len(hostile), res.Skipped)
	}
	for i, s := range res.Skipped {
		if s.Path != hostile[i] || !strings.Contains(s.Reason, "invalid path") {
			t.Errorf("Skipped[%d] = %+v, want the raw name %q and why", i, s, hostile[i])
		}
	}
	// And nothing of theirs reached the store.
	rec := newRecorder()
	if _, err := Ingest(context.Background(), rec, "demo", "1.0.0", "", tb.TGZ(t, entries...), DefaultLimits()); err != nil {
		t.Fatal(err)
	}
	for i := range hostile {
		if rec.wrote(fmt.Sprintf("hostile body %d", i)) {
			t.Errorf("the body of %q was written to the store", hostile[i])
		}
	}
}

// Extracting writes entries in order, so a later entry with the same path
// wins; so it does here, even when the names differ before cleaning.
func TestLastDuplicateWins(t *testing.T) {
	t.Parallel()
	tgz := tb.TGZ(t,
		tb.File("package/a.js", "one"),
		tb.File("package/b.js", "b"),
		tb.File("package/a.js", "two"),
		tb.File("package//./a.js", "three"),
	)
	files, res := mustIngest(t, tgz, DefaultLimits())
	if want := map[string]string{"a.js": "three", "b.js": "b"}; !maps.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	if res.TotalBytes != 6 {
		t.Errorf("TotalBytes = %d, want 6 (duplicates replaced, not added)", res.TotalBytes)
	}
	// npm diff keeps a duplicate in its first entry's place (a JS Set).
	for _, f := range res.Files {
		if want := map[string]int{"a.js": 0, "b.js": 1}[f.Path]; f.Order != want {
			t.Errorf("%s: Order %d, want %d", f.Path, f.Order, want)
		}
	}
}

// On a case-insensitive disk these would collide; in the store they are
// two files, as in the registry's tarball.
func TestCaseAliasesAreDistinctFiles(t *testing.T) {
	t.Parallel()
	tgz := tb.TGZ(t, tb.File("package/A.js", "upper"), tb.File("package/a.js", "lower"))
	files, _ := mustIngest(t, tgz, DefaultLimits())
	if want := map[string]string{"A.js": "upper", "a.js": "lower"}; !maps.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
}

func TestRefusesOverLimits(t *testing.T) {
	t.Parallel()
	small := func(f func(*Limits)) Limits {
		l := DefaultLimits()
		f(&l)
		return l
	}
	many := func(n int, mk func(i int) tb.Entry) []tb.Entry {
		var es []tb.Entry
		for i := range n {
			es = append(es, mk(i))
		}
		return es
	}
	tests := []struct {
		hazard  string
		entries []tb.Entry
		lim     Limits
		setting string
	}{
		{"too many entries (directories count)",
			many(11, func(i int) tb.Entry { return tb.Dir(fmt.Sprintf("package/d%d/", i)) }),
			small(func(l *Limits) { l.MaxEntries = 10 }), "MaxEntries"},
		{"too many files",
			many(11, func(i int) tb.Entry { return tb.File(fmt.Sprintf("package/f%d", i), "x") }),
			small(func(l *Limits) { l.MaxFiles = 10 }), "MaxFiles"},
		{"duplicates count as files",
			many(11, func(i int) tb.Entry { return tb.File("package/same.js", "x") }),
			small(func(l *Limits) { l.MaxFiles = 10 }), "MaxFiles"},
		{"one file too big",
			[]tb.Entry{tb.File("package/big.js", strings.Repeat("x", 101))},
			small(func(l *Limits) { l.MaxFileBytes = 100 }), "MaxFileBytes"},
		{"total too big",
			many(11, func(i int) tb.Entry { return tb.File(fmt.Sprintf("package/f%d", i), strings.Repeat("x", 10)) }),
			small(func(l *Limits) { l.MaxUnpackedBytes = 100 }), "MaxUnpackedBytes"},
		{"path too long",
			[]tb.Entry{tb.File("package/"+strings.Repeat("a", 33), "x")},
			small(func(l *Limits) { l.MaxPathBytes = 32 }), "MaxPathBytes"},
		{"path too deep",
			[]tb.Entry{tb.File("package/"+strings.Repeat("a/", 9)+"x", "x")},
			small(func(l *Limits) { l.MaxPathDepth = 9 }), "MaxPathDepth"},
		{"stream too big (an unknown entry type's body)",
			[]tb.Entry{{Header: tar.Header{Name: "package/blob", Typeflag: 'Z'}, Body: make([]byte, 4096)}},
			small(func(l *Limits) { l.MaxArchiveBytes = 2048 }), "MaxArchiveBytes"},
	}
	for _, tt := range tests {
		rec := newRecorder()
		_, err := Ingest(context.Background(), rec, "demo", "1.0.0", "", tb.TGZ(t, tt.entries...), tt.lim)
		var le *LimitError
		if !errors.Is(err, ErrLimit) || !errors.As(err, &le) || le.Setting != tt.setting {
			t.Errorf("%s: err = %v, want a LimitError on %s", tt.hazard, err, tt.setting)
			continue
		}
		if !strings.Contains(err.Error(), tt.setting+" = ") {
			t.Errorf("%s: error %q does not name the setting and its value", tt.hazard, err)
		}
		rec.nothingCommitted(t)
	}
}

// The limits hold on their boundary: exactly at a cap is fine.
func TestLimitsAreInclusive(t *testing.T) {
	t.Parallel()
	lim := DefaultLimits()
	lim.MaxFiles, lim.MaxEntries, lim.MaxFileBytes, lim.MaxUnpackedBytes = 2, 3, 10, 20
	tgz := tb.TGZ(t, tb.Dir("package/"), tb.File("package/a", strings.Repeat("a", 10)), tb.File("package/b", strings.Repeat("b", 10)))
	files, _ := mustIngest(t, tgz, lim)
	if len(files) != 2 {
		t.Errorf("files %v", files)
	}
}

// allocatedBy returns the bytes allocated while f runs. Callers are not
// parallel tests, so the figure is f's own.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// 16 MiB of zeros gzip to 16 KB. The header's size is refused before a
// byte of the body is decompressed, and nothing near the claimed size is
// allocated.
func TestGzipBombStopsAtCapWithoutAllocating(t *testing.T) {
	bomb := tb.TGZ(t, tb.Bytes("package/zeros", make([]byte, 16<<20)))
	if len(bomb) > 256<<10 {
		t.Fatalf("bomb is %d bytes compressed", len(bomb))
	}
	lim := DefaultLimits()
	lim.MaxUnpackedBytes, lim.MaxFileBytes = 1<<20, 128<<20
	rec := newRecorder()
	var err error
	allocated := allocatedBy(func() {
		_, err = Ingest(context.Background(), rec, "demo", "1.0.0", "", bomb, lim)
	})
	var le *LimitError
	if !errors.As(err, &le) || le.Setting != "MaxUnpackedBytes" {
		t.Fatalf("err = %v, want MaxUnpackedBytes", err)
	}
	if allocated > 2<<20 {
		t.Errorf("allocated %d bytes for a bomb capped at 1 MiB", allocated)
	}
	rec.nothingCommitted(t)

	// The same through an entry type that is skipped: its body is
	// discarded by reading it, so the stream cap stops it.
	bomb = tb.TGZ(t, tb.Entry{Header: tar.Header{Name: "package/zeros", Typeflag: 'Z'}, Body: make([]byte, 16<<20)})
	lim = DefaultLimits()
	lim.MaxArchiveBytes = 1 << 20
	allocated = allocatedBy(func() {
		_, err = Ingest(context.Background(), rec, "demo", "1.0.0", "", bomb, lim)
	})
	if !errors.As(err, &le) || le.Setting != "MaxArchiveBytes" {
		t.Fatalf("err = %v, want MaxArchiveBytes", err)
	}
	if allocated > 2<<20 {
		t.Errorf("allocated %d bytes for a stream capped at 1 MiB", allocated)
	}
}

// A truncated archive whose header claims a 200 MiB file (under the caps)
// must not make Ingest allocate 200 MiB: buffers grow with the bytes that
// actually arrive.
func TestLyingHeaderDoesNotSizeTheBuffer(t *testing.T) {
	truncated := rawTGZ(t, rawEntry{name: "package/big", typeflag: '0', size: 200 << 20, body: bytes.Repeat([]byte("x"), 64<<10)})
	rec := newRecorder()
	var err error
	allocated := allocatedBy(func() {
		_, err = Ingest(context.Background(), rec, "demo", "1.0.0", "", truncated, DefaultLimits())
	})
	if !errors.Is(err, ErrBadArchive) {
		t.Fatalf("err = %v, want ErrBadArchive", err)
	}
	if allocated > 4<<20 {
		t.Errorf("allocated %d bytes for a 64 KiB archive", allocated)
	}
	rec.nothingCommitted(t)
}

func TestReadBodyNeverReadsPastSize(t *testing.T) {
	t.Parallel()
	src := strings.NewReader(strings.Repeat("x", 1000))
	b, err := readBody(src, 300)
	if err != nil || len(b) != 300 || src.Len() != 700 {
		t.Errorf("readBody(1000 bytes, 300) = %d bytes, %v; %d left unread", len(b), err, src.Len())
	}
	if _, err := readBody(strings.NewReader("short"), 300); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short body: err = %v", err)
	}
}

func TestCorruptArchiveIsBadArchive(t *testing.T) {
	t.Parallel()
	good := tb.Package(t, map[string]string{"index.js": strings.Repeat("module.exports = 1\n", 200)})
	flipped := slices.Clone(good)
	flipped[len(flipped)/2] ^= 0xff
	tests := []struct {
		hazard string
		tgz    []byte
	}{
		{"empty", nil},
		{"not gzip", []byte("<html>502 Bad Gateway</html>")},
		{"plain tar, not gzipped", tb.Tar(t, tb.File("package/a", "a"))},
		{"gzip of something that is not tar", tb.Gzip(t, []byte("hello, this is not a tar file"))},
		{"truncated gzip", good[:len(good)/2]},
		{"corrupt deflate data", flipped},
		{"tar cut inside a body", tb.Gzip(t, tb.Tar(t, tb.File("package/a", strings.Repeat("a", 5000)))[:1500])},
	}
	for _, tt := range tests {
		rec := newRecorder()
		_, err := Ingest(context.Background(), rec, "demo", "1.0.0", "", tt.tgz, DefaultLimits())
		if !errors.Is(err, ErrBadArchive) {
			t.Errorf("%s: err = %v, want ErrBadArchive", tt.hazard, err)
		}
		rec.nothingCommitted(t)
	}
}

// Cancellation is checked between entries: a cancel during the ingest
// stops it before the next entry, and nothing is committed.
func TestContextCancelStopsBetweenEntries(t *testing.T) {
	t.Parallel()
	var entries []tb.Entry
	for i := range 10 {
		entries = append(entries, tb.File(fmt.Sprintf("package/f%d", i), fmt.Sprintf("body %d", i)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newRecorder()
	rec.onPut = func([]store.Blob) error { cancel(); return nil } // cancel after the first batch
	lim := DefaultLimits()
	lim.BatchBytes = 1
	_, err := Ingest(ctx, rec, "demo", "1.0.0", "", tb.TGZ(t, entries...), lim)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(rec.batches) != 1 {
		t.Errorf("%d batches written after the cancel, want 1", len(rec.batches))
	}
	rec.nothingCommitted(t)
}

func TestBlobsAreWrittenInBatchesOnceEach(t *testing.T) {
	t.Parallel()
	var entries []tb.Entry
	for i := range 20 {
		entries = append(entries, tb.File(fmt.Sprintf("package/f%02d", i), fmt.Sprintf("%0300d", i)))
	}
	for i := range 5 { // identical bodies: written once
		entries = append(entries, tb.File(fmt.Sprintf("package/copy%d", i), fmt.Sprintf("%0300d", 0)))
	}
	entries = append(entries, tb.File("package/big", strings.Repeat("b", 5000))) // a batch of its own
	lim := DefaultLimits()
	lim.BatchBytes = 1000
	rec := newRecorder()
	if _, err := Ingest(context.Background(), rec, "demo", "1.0.0", "", tb.TGZ(t, entries...), lim); err != nil {
		t.Fatal(err)
	}
	written := map[store.Hash]int{}
	for i, batch := range rec.batches {
		var n int64
		for _, b := range batch {
			written[b.Hash]++
			n += int64(len(b.Data))
		}
		// A batch is flushed as soon as it reaches BatchBytes, so it
		// holds at most BatchBytes plus one file.
		if last := int64(len(batch[len(batch)-1].Data)); n-last >= lim.BatchBytes {
			t.Errorf("batch %d holds %d bytes before its last file: flushed late", i, n-last)
		}
	}
	// 6000 distinct small bytes flush every 4th file, then the big one.
	if len(rec.batches) != 6 {
		t.Errorf("%d batches, want 6", len(rec.batches))
	}
	if len(written) != 21 {
		t.Errorf("%d distinct bodies written, want 21", len(written))
	}
	for h, n := range written {
		if n != 1 {
			t.Errorf("body %x written %d times", h[:4], n)
		}
	}
	if files := rec.committed(t); len(files) != 26 {
		t.Errorf("%d files committed, want 26", len(files))
	}
}

func TestStoreFailuresCommitNothing(t *testing.T) {
	t.Parallel()
	tgz := tb.Package(t, map[string]string{"a.js": "a"})
	boom := errors.New("disk full")
	rec := newRecorder()
	rec.onPut = func([]store.Blob) error { return boom }
	if _, err := Ingest(context.Background(), rec, "demo", "1.0.0", "", tgz, DefaultLimits()); !errors.Is(err, boom) {
		t.Errorf("PutBlobs failure: err = %v", err)
	}
	rec.nothingCommitted(t)

	rec = newRecorder()
	rec.onCommit = func(store.NewVersion) error { return store.ErrExists }
	if _, err := Ingest(context.Background(), rec, "demo", "1.0.0", "", tgz, DefaultLimits()); !errors.Is(err, store.ErrExists) {
		t.Errorf("lost commit race: err = %v, want store.ErrExists", err)
	}
}

func TestSkippedRecordsAreBounded(t *testing.T) {
	t.Parallel()
	var entries []tb.Entry
	for i := range 10 {
		entries = append(entries, tb.Symlink(fmt.Sprintf("package/l%d", i), "x"))
	}
	entries = append(entries, tb.File("package/"+strings.Repeat("n", 40)+"/../x", "x"))
	lim := DefaultLimits()
	lim.MaxSkipped, lim.MaxPathBytes = 3, 16
	_, res := mustIngest(t, tb.TGZ(t, append([]tb.Entry{tb.File("package/ok", "ok")}, entries...)...), lim)
	if len(res.Skipped) != 3 || res.SkippedCount != 11 {
		t.Errorf("Skipped has %d records, count %d; want 3 and 11", len(res.Skipped), res.SkippedCount)
	}
	lim.MaxSkipped = 100
	_, res = mustIngest(t, tb.TGZ(t, entries...), lim)
	if last := res.Skipped[len(res.Skipped)-1]; len(last.Path) != 16 {
		t.Errorf("a raw name was recorded with %d bytes, over MaxPathBytes 16", len(last.Path))
	}
}

func TestCheckDeclared(t *testing.T) {
	t.Parallel()
	lim := DefaultLimits()
	tests := []struct {
		size    int64
		count   int
		setting string
	}{
		{0, 0, ""}, // not declared
		{lim.MaxUnpackedBytes, lim.MaxFiles, ""},
		{lim.MaxUnpackedBytes + 1, 1, "MaxUnpackedBytes"},
		{1, lim.MaxFiles + 1, "MaxFiles"},
	}
	for _, tt := range tests {
		err := CheckDeclared(tt.size, tt.count, lim)
		var le *LimitError
		switch {
		case tt.setting == "" && err != nil:
			t.Errorf("CheckDeclared(%d, %d) = %v", tt.size, tt.count, err)
		case tt.setting != "" && (!errors.As(err, &le) || le.Setting != tt.setting || !errors.Is(err, ErrLimit)):
			t.Errorf("CheckDeclared(%d, %d) = %v, want %s", tt.size, tt.count, err, tt.setting)
		}
	}
}

func TestIsBinary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body []byte
		want bool
	}{
		{nil, false},
		{[]byte("plain text\n"), false},
		{[]byte("héllo wörld"), false},
		{[]byte{0x89, 'P', 'N', 'G', 0, 0}, true},
		{append(bytes.Repeat([]byte("a"), 7999), 0), true},  // NUL at byte 8000
		{append(bytes.Repeat([]byte("a"), 8000), 0), false}, // past the window
	}
	for _, tt := range tests {
		if got := IsBinary(tt.body); got != tt.want {
			t.Errorf("IsBinary(%.20q… %d bytes) = %v", tt.body, len(tt.body), got)
		}
	}
}

func TestLimitsValidateNamesTheSetting(t *testing.T) {
	t.Parallel()
	if err := DefaultLimits().Validate(); err != nil {
		t.Fatal(err)
	}
	l := DefaultLimits()
	l.BatchBytes = 0
	if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "BatchBytes") {
		t.Errorf("Validate = %v, want it to name BatchBytes", err)
	}
	if _, err := Ingest(context.Background(), newRecorder(), "demo", "1.0.0", "", nil, Limits{}); err == nil {
		t.Error("Ingest accepted zero Limits")
	}
}
