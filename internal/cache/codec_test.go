package cache

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/store"
)

func TestFilesRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		files []store.File
	}{
		{"empty", []store.File{}},
		{"one", []store.File{{Path: "index.js", Size: 12, Hash: store.HashOf([]byte("x"))}}},
		{"binary, large, odd bytes", []store.File{
			{Path: "a\xff\xfe.bin", Size: 1 << 40, Hash: store.HashOf([]byte("a")), Binary: true, Mode: 0o100755, Order: 1},
			{Path: "b/\u00e9.js", Size: 0, Hash: store.HashOf(nil), Mode: 0o100644, Order: 0},
		}},
		{"UTF-8 validities", []store.File{
			{Path: "a.bin", Binary: true, UTF8: store.UTF8Invalid},
			{Path: "b.js", UTF8: store.UTF8Valid},
			{Path: "c.js", Binary: true, UTF8: store.UTF8Valid},
			{Path: "d.js", UTF8: store.UTF8Invalid},
			{Path: "e.js", UTF8: store.UTF8Unknown},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeFiles(encodeFiles(tt.files))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.files) {
				t.Fatalf("%d files, want %d", len(got), len(tt.files))
			}
			for i := range got {
				if got[i] != tt.files[i] {
					t.Errorf("file %d = %+v, want %+v", i, got[i], tt.files[i])
				}
			}
		})
	}
}

func TestDecodeFilesRefusesWhatEncodeCannotProduce(t *testing.T) {
	good := encodeFiles([]store.File{{Path: "a"}, {Path: "b"}})
	flag := len(good) - 3
	tests := map[string][]byte{
		"empty":           nil,
		"huge count":      {0xff, 0xff, 0xff, 0xff, 0x0f},
		"trailing":        append(bytes.Clone(good), 0),
		"truncated":       good[:len(good)-3],
		"UTF-8 3":         func() []byte { b := bytes.Clone(good); b[flag] = 3 << 1; return b }(),
		"flag 8":          func() []byte { b := bytes.Clone(good); b[flag] = 8; return b }(),
		"out of order":    encodeFiles([]store.File{{Path: "b"}, {Path: "a"}}),
		"duplicate paths": encodeFiles([]store.File{{Path: "a"}, {Path: "a"}}),
	}
	for name, b := range tests {
		if _, err := decodeFiles(b); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: %v, want errCorrupt", name, err)
		}
	}
}

// TestFilesBeforeUTF8 reads a file list written before the flags byte
// carried UTF-8 validity (a binary flag of 0 or 1): unknown, as the store
// has it for versions stored then.
func TestFilesBeforeUTF8(t *testing.T) {
	b := encodeFiles([]store.File{{Path: "a.bin", Binary: true}, {Path: "b.js"}})
	got, err := decodeFiles(b)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].UTF8 != store.UTF8Unknown || !got[0].Binary || got[1].UTF8 != store.UTF8Unknown || got[1].Binary {
		t.Errorf("decoded %+v, want binary then not, both of unknown validity", got)
	}
}

func TestEnvelope(t *testing.T) {
	exp := time.UnixMilli(1_700_000_000_123)
	for _, e := range []time.Time{{}, exp} {
		p, got, err := unseal(seal([]byte("payload"), e))
		if err != nil || string(p) != "payload" || !got.Equal(e) {
			t.Errorf("unseal(seal(%v)) = %q, %v, %v", e, p, got, err)
		}
	}
	// {1, …}: a V1 entry, written before file lists carried modes.
	for _, b := range [][]byte{nil, {envelopeV2}, {1, 0, 0, 0, 0, 0, 0, 0, 0}} {
		if _, _, err := unseal(b); !errors.Is(err, errCorrupt) {
			t.Errorf("unseal(%v): %v", b, err)
		}
	}
}

// FuzzDecodeFiles: decoding never panics, and whatever decodes survives an
// encode/decode round trip unchanged. (Bytes may differ: a varint has
// non-minimal spellings, such as 80 00 for 0.)
func FuzzDecodeFiles(f *testing.F) {
	f.Add(encodeFiles(nil))
	f.Add(encodeFiles([]store.File{{Path: "a", Size: 3, Binary: true}, {Path: "b\xff", Size: 1 << 33}}))
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		files, err := decodeFiles(b)
		if err != nil {
			return
		}
		again, err := decodeFiles(encodeFiles(files))
		if err != nil || len(again) != len(files) {
			t.Fatalf("round trip of %x: %v", b, err)
		}
		for i := range files {
			if again[i] != files[i] {
				t.Fatalf("round trip changed file %d: %+v → %+v", i, files[i], again[i])
			}
		}
	})
}

func TestLocalEvictsByBytes(t *testing.T) {
	const budget = 16 << 10
	clock := time.Unix(100, 0)
	l := newLocal(budget, func() time.Time { return clock })
	never := time.Time{}
	entry := int64(1000) // cost with overhead and key: about 1.3 KiB
	for i := range 40 {
		l.put(string(rune('a'+i%26))+string(rune('A'+i/26)), i, entry, never)
	}
	bytes, n := l.size()
	if bytes > budget || n == 0 || n >= 40 {
		t.Fatalf("after 40 puts: %d bytes in %d entries, want at most %d bytes", bytes, n, budget)
	}
	if _, ok := l.get("aA"); ok {
		t.Error("the oldest entry survived eviction")
	}
	if v, ok := l.get("nB"); !ok || v != 39 {
		t.Errorf("the newest entry = %v, %v", v, ok)
	}
	// Replacing a key does not count it twice.
	before, _ := l.size()
	l.put("nB", 40, entry, never)
	if after, _ := l.size(); after != before {
		t.Errorf("replacing an entry moved the size %d → %d", before, after)
	}
	// An entry over a quarter of the budget is not kept.
	l.put("huge", 1, budget/2, never)
	if _, ok := l.get("huge"); ok {
		t.Error("an entry over a quarter of the budget was kept")
	}
	// Expired entries are dropped on read.
	l.put("ttl", 1, 10, clock.Add(time.Second))
	if _, ok := l.get("ttl"); !ok {
		t.Error("a live entry was missed")
	}
	clock = clock.Add(time.Second)
	if _, ok := l.get("ttl"); ok {
		t.Error("an expired entry was served")
	}
}
