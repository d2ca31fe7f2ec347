package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// smallDocs are the docs of smallIndex: text and binary files, a byte order
// mark, an empty body, a line cut into blocks.
func smallDocs() []Doc {
	return []Doc{
		{Path: "a.js", Data: []byte("function readSync() { return useRouter(); }\n" + string(bytes.Repeat([]byte("xy"), 80)) + "\nend\n")},
		{Path: "b.bin", Data: []byte("\x00\x01")},
		{Path: "c.txt", Data: []byte("\ufeffhello\r\nworld")},
		{Path: "d/empty", Data: nil},
	}
}

// smallIndex returns the bytes of a small index spanning every table:
// text and binary files, mid-line blocks, postings.
func smallIndex(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := Build(&buf, smallDocs(), smallBlocks()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fixCRC rewrites the checksum of data so that only structural checks can
// reject it.
func fixCRC(data []byte) {
	if len(data) >= 4 {
		binary.LittleEndian.PutUint32(data[len(data)-4:], crc32Checksum(data[:len(data)-4]))
	}
}

// TestOpenCorrupt: any single changed byte and any truncation are caught
// at Open by the checksum, never later.
func TestOpenCorrupt(t *testing.T) {
	good := smallIndex(t)
	if _, err := OpenBytes(good); err != nil {
		t.Fatalf("good index: %v", err)
	}
	for i := range good {
		b := bytes.Clone(good)
		b[i] ^= 0x5a
		if _, err := OpenBytes(b); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d changed: err %v, want ErrCorrupt", i, err)
		}
	}
	for n := range good {
		if _, err := OpenBytes(good[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: err %v, want ErrCorrupt", n, err)
		}
	}
	b := bytes.Clone(good)
	binary.LittleEndian.PutUint32(b[8:], FormatVersion+1)
	fixCRC(b)
	if _, err := OpenBytes(b); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("future format version: err %v", err)
	}
}

// TestOpenStructure: with a valid checksum, each table's checks still
// reject a lie about the layout.
func TestOpenStructure(t *testing.T) {
	good := smallIndex(t)
	tr := good[len(good)-trailerSize:]
	var hdr trailer
	hdr.decode(tr)
	mutate := []struct {
		name string
		f    func(b []byte)
	}{
		{"section offset", func(b []byte) { binary.LittleEndian.PutUint64(b[len(b)-trailerSize+16:], hdr.pathsOff+1) }},
		{"huge file count", func(b []byte) { binary.LittleEndian.PutUint64(b[len(b)-trailerSize+5*8:], 1<<60) }},
		{"file text out of range", func(b []byte) { binary.LittleEndian.PutUint64(b[hdr.filesOff+16:], 1<<40) }},
		{"paths not sorted", func(b []byte) { b[hdr.pathsOff] = 'z' }},
		{"block out of order", func(b []byte) { binary.LittleEndian.PutUint64(b[hdr.blocksOff+blockRecSize:], 0) }},
		{"block group", func(b []byte) { binary.LittleEndian.PutUint32(b[hdr.blocksOff+24:], 5) }},
		{"trigrams unsorted", func(b []byte) { binary.LittleEndian.PutUint32(b[hdr.trisOff:], 1<<23) }},
		{"posting offset", func(b []byte) { binary.LittleEndian.PutUint64(b[hdr.trisOff+4:], 1<<40) }},
		{"stats", func(b []byte) { binary.LittleEndian.PutUint64(b[len(b)-trailerSize+15*8:], 7) }},
	}
	for _, m := range mutate {
		b := bytes.Clone(good)
		m.f(b)
		fixCRC(b)
		if _, err := OpenBytes(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", m.name, err)
		}
	}
}

// TestOpenFiles: Open reports missing, empty and garbage files as errors.
func TestOpenFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	if _, err := Open(empty); !errors.Is(err, ErrCorrupt) {
		t.Errorf("empty file: %v", err)
	}
	garbage := filepath.Join(dir, "garbage")
	os.WriteFile(garbage, bytes.Repeat([]byte("garbage!"), 1000), 0o644)
	if _, err := Open(garbage); !errors.Is(err, ErrCorrupt) {
		t.Errorf("garbage file: %v", err)
	}
}

// FuzzOpen: Open never panics, and an index it accepts never makes
// Search panic. With fix set the checksum is recomputed, so mutations
// reach the structural checks.
func FuzzOpen(f *testing.F) {
	good := smallIndex(f)
	f.Add(good, false)
	f.Add(good, true)
	f.Add([]byte(headerMagic), true)
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		data = bytes.Clone(data)
		if fix {
			fixCRC(data)
		}
		ix, err := OpenBytes(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		defer ix.Close()
		_ = ix.Stats()
		for _, q := range []Query{{Pattern: "useRouter"}, {Pattern: `read\w+\(`}, {Pattern: "x*", ContextLines: 2}, {Pattern: "(?i)WORLD$"}, {Pattern: `a.{0,300}b`}} {
			if _, err := ix.Search(context.Background(), q, DefaultSearchLimits()); errors.Is(err, errInternal) {
				t.Fatalf("%q: %v", q.Pattern, err)
			}
		}
	})
}

// TestOpenFileSkipChecksum: SkipChecksum skips only the checksum; a file
// whose tables are bad is still refused.
func TestOpenFileSkipChecksum(t *testing.T) {
	good := smallIndex(t)
	open := func(data []byte, skip bool) error {
		path := filepath.Join(t.TempDir(), "x.idx")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		ix, err := OpenFile(f, OpenOptions{SkipChecksum: skip})
		if err == nil {
			ix.Close()
		}
		return err
	}
	b := bytes.Clone(good)
	binary.LittleEndian.PutUint32(b[len(b)-4:], ^binary.LittleEndian.Uint32(b[len(b)-4:])) // a wrong checksum only
	if err := open(b, false); !errors.Is(err, ErrCorrupt) {
		t.Errorf("wrong checksum, checked: %v, want ErrCorrupt", err)
	}
	if err := open(b, true); err != nil {
		t.Errorf("wrong checksum, skipped: %v, want it opened", err)
	}
	b = bytes.Clone(good)
	binary.LittleEndian.PutUint32(b[8:], FormatVersion+1)
	if err := open(b, true); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad format version with the checksum skipped: %v, want ErrCorrupt", err)
	}
}
