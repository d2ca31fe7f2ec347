package ingest

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/pkgscope/pkgscope/internal/pkgpath"
	"github.com/pkgscope/pkgscope/internal/store"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// FuzzIngest feeds arbitrary bytes as a tarball. With gzipFirst the bytes
// are gzipped before Ingest sees them, so the fuzzer explores tar headers
// instead of breaking deflate streams. Ingest must never panic, never
// exceed a cap, and either commit a clean file list or fail with one of
// its error kinds and commit nothing.
func FuzzIngest(f *testing.F) {
	tarOf := func(entries ...tb.Entry) []byte { return tb.Tar(f, entries...) }
	seeds := [][]byte{
		tarOf(tb.File("package/package.json", `{"name":"x"}`), tb.File("package/lib/a.js", "a"), tb.Dir("package/lib/")),
		tarOf(tb.File("package/../../x", "x"), tb.Symlink("package/l", "/etc"), tb.File("README", "r")),
		tarOf(tb.File("package/a.js", "1"), tb.File("package/a.js", "2"), tb.File("package/A.js", "3")),
		rawTar(f, rawEntry{name: "package/big", typeflag: tar.TypeGNUSparse, gnu: true, size: 512,
			realSize: 1 << 40, sparse: [][2]int64{{0, 512}}, body: make([]byte, 512)}),
		rawTar(f, rawEntry{name: "package/old", typeflag: '\x00', size: 2, body: []byte("ok")}),
	}
	for _, s := range seeds {
		f.Add(s, true)
		f.Add(tb.Gzip(f, s), false)
	}
	f.Add([]byte{}, false)
	f.Add([]byte("\x1f\x8b"), false)

	lim := Limits{
		MaxUnpackedBytes: 1 << 20, MaxFiles: 50, MaxEntries: 100, MaxFileBytes: 256 << 10,
		MaxPathBytes: 128, MaxPathDepth: 8, MaxArchiveBytes: 2 << 20, MaxSkipped: 5, BatchBytes: 4 << 10,
	}
	f.Fuzz(func(t *testing.T, data []byte, gzipFirst bool) {
		if gzipFirst {
			data = cheapGzip(t, data)
		}
		rec := newRecorder()
		res, err := Ingest(context.Background(), rec, "fuzz", "1.0.0", "", data, lim)
		var written int64
		for _, b := range rec.blobs {
			written += int64(len(b))
		}
		if written > lim.MaxUnpackedBytes {
			t.Fatalf("%d bytes written, over MaxUnpackedBytes", written)
		}
		if err != nil {
			if !errors.Is(err, ErrLimit) && !errors.Is(err, ErrBadArchive) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error of no known kind: %v", err)
			}
			rec.nothingCommitted(t)
			return
		}
		rec.committed(t) // exactly one commit, checked by the recorder
		if len(res.Files) > lim.MaxFiles || res.TotalBytes > lim.MaxUnpackedBytes || len(res.Skipped) > lim.MaxSkipped {
			t.Fatalf("result over the caps: %d files, %d bytes, %d skipped", len(res.Files), res.TotalBytes, len(res.Skipped))
		}
		for _, file := range res.Files {
			if file.Size > lim.MaxFileBytes {
				t.Fatalf("%q: %d bytes", file.Path, file.Size)
			}
			if p, err := (pkgpath.Limits{MaxPathBytes: lim.MaxPathBytes, MaxDepth: lim.MaxPathDepth}).Clean(file.Path); err != nil || p != file.Path {
				t.Fatalf("stored path %q is not clean: %q, %v", file.Path, p, err)
			}
		}
	})
}

// cheapGzip is tarballtest.Gzip without the 800 KB compressor state that
// stdlib gzip allocates per call, which dominated each fuzz exec.
func cheapGzip(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.StatelessCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sink is a store.Writer that keeps nothing, so the benchmark measures
// ingest alone.
type sink struct{}

func (sink) PutBlobs(context.Context, []store.Blob) error             { return nil }
func (sink) CommitVersion(context.Context, store.NewVersion) error    { return nil }
func (sink) MarkFailed(context.Context, string, string, string) error { return nil }

// BenchmarkIngest ingests a generated tarball of 3,000 source-like files,
// about 20 MB unpacked (a large package: typescript is about 23 MB).
func BenchmarkIngest(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("const let function return if else export import from module require async await class this new")
	var entries []tb.Entry
	var total int64
	for i := range 3000 {
		var sb strings.Builder
		for sb.Len() < 6000+r.IntN(2000) {
			sb.WriteString(words[r.IntN(len(words))])
			sb.WriteString(fmt.Sprintf(" v%d", r.IntN(1000)))
			if r.IntN(8) == 0 {
				sb.WriteString(";\n")
			} else {
				sb.WriteByte(' ')
			}
		}
		entries = append(entries, tb.File(fmt.Sprintf("package/lib/d%02d/f%04d.js", i%50, i), sb.String()))
		total += int64(sb.Len())
	}
	tgz := tb.TGZ(b, entries...)
	b.SetBytes(total)
	for b.Loop() {
		if _, err := Ingest(context.Background(), sink{}, "bench", "1.0.0", "", tgz, DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(tgz)), "tgz-bytes")
}
