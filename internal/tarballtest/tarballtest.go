// Package tarballtest builds npm-style .tgz archives in code, for tests of
// ingest, the registry client and the API. Hostile archives are built from
// raw tar headers so every hazard can be written down as a test.
package tarballtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"maps"
	"slices"
	"testing"
)

// Entry is one tar entry. A zero Header.Typeflag means a regular file with
// Body as its content; set Header fields to build anything else (symlinks,
// hardlinks, devices, GNU sparse files, PAX records). Header.Size defaults
// to len(Body) when zero and Body is not empty.
type Entry struct {
	Header tar.Header
	Body   []byte
}

// File is a regular file entry with mode 0644.
func File(name, body string) Entry {
	return Entry{Header: tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg}, Body: []byte(body)}
}

// Bytes is a regular file entry with a binary body.
func Bytes(name string, body []byte) Entry {
	return Entry{Header: tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg}, Body: body}
}

// Symlink is a symbolic link entry.
func Symlink(name, target string) Entry {
	return Entry{Header: tar.Header{Name: name, Linkname: target, Mode: 0o777, Typeflag: tar.TypeSymlink}}
}

// Hardlink is a hard link entry.
func Hardlink(name, target string) Entry {
	return Entry{Header: tar.Header{Name: name, Linkname: target, Mode: 0o644, Typeflag: tar.TypeLink}}
}

// Dir is a directory entry.
func Dir(name string) Entry {
	return Entry{Header: tar.Header{Name: name, Mode: 0o755, Typeflag: tar.TypeDir}}
}

// Tar returns the uncompressed tar stream of entries.
func Tar(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := e.Header
		if h.Size == 0 && len(e.Body) > 0 {
			h.Size = int64(len(e.Body))
		}
		if h.Format == tar.FormatUnknown && h.Typeflag != tar.TypeGNUSparse {
			h.Format = tar.FormatPAX
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatalf("tarballtest: header %q: %v", h.Name, err)
		}
		if len(e.Body) > 0 {
			if _, err := tw.Write(e.Body); err != nil {
				t.Fatalf("tarballtest: body %q: %v", h.Name, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatalf("tarballtest: close: %v", err)
	}
	return buf.Bytes()
}

// Gzip compresses b.
func Gzip(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatalf("tarballtest: gzip: %v", err)
	}
	if err := zw.Close(); err != nil {
		t.Fatalf("tarballtest: gzip close: %v", err)
	}
	return buf.Bytes()
}

// TGZ returns a gzipped tar of entries: an npm tarball.
func TGZ(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	return Gzip(t, Tar(t, entries...))
}

// Package returns an npm tarball with every file of files (path → body)
// under the conventional "package/" top folder.
func Package(t testing.TB, files map[string]string) []byte {
	t.Helper()
	return PackageUnder(t, "package", files)
}

// PackageUnder is Package with another top folder, as @types/* tarballs
// use the package's own name.
func PackageUnder(t testing.TB, top string, files map[string]string) []byte {
	t.Helper()
	entries := make([]Entry, 0, len(files))
	for _, p := range slices.Sorted(maps.Keys(files)) {
		entries = append(entries, File(top+"/"+p, files[p]))
	}
	return TGZ(t, entries...)
}

// LongLine returns an npm tarball whose one file, package/<name>, is a
// single line of n bytes (no newline) starting with prefix: the hostile
// package of issue 25 §1, where a 300 KB download unpacks to one 200 MiB
// body. It is written through tar and gzip a block at a time, so building
// it holds the compressed tarball, never the body. The line repeats a
// 4 KiB block of letters, which deflate's 32 KiB window compresses about
// 1000 to 1.
func LongLine(t testing.TB, name, prefix string, n int64) []byte {
	t.Helper()
	if int64(len(prefix)) > n {
		t.Fatalf("tarballtest: prefix %q is longer than the line (%d bytes)", prefix, n)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "package/" + name, Mode: 0o644, Typeflag: tar.TypeReg, Size: n, Format: tar.FormatPAX}); err != nil {
		t.Fatalf("tarballtest: header %q: %v", name, err)
	}
	block := make([]byte, 4<<10)
	for i := range block {
		block[i] = 'a' + byte(i*7%26)
	}
	chunk := bytes.Repeat(block, 16)
	write := func(b []byte) {
		if _, err := tw.Write(b); err != nil {
			t.Fatalf("tarballtest: body %q: %v", name, err)
		}
	}
	write([]byte(prefix))
	for left := n - int64(len(prefix)); left > 0; {
		k := min(left, int64(len(chunk)))
		write(chunk[:k])
		left -= k
	}
	if err := tw.Close(); err != nil {
		t.Fatalf("tarballtest: close: %v", err)
	}
	if err := zw.Close(); err != nil {
		t.Fatalf("tarballtest: gzip close: %v", err)
	}
	return buf.Bytes()
}
