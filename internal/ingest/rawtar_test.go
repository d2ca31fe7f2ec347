package ingest

import (
	"fmt"
	"testing"

	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// archive/tar's writer normalises or refuses the entries below (it writes
// '\x00' as '0', drops GNU.sparse.* PAX records and cannot write old GNU
// sparse headers), so these tests write the 512-byte blocks themselves.

// rawEntry is one tar entry written block by block.
type rawEntry struct {
	name     string
	typeflag byte
	size     int64  // the header's size field, whatever body follows
	body     []byte // written as is, then padded to a block
	gnu      bool   // GNU magic instead of ustar
	realSize int64  // GNU sparse: the claimed logical size
	sparse   [][2]int64
}

// rawTar assembles entries and the end-of-archive marker.
func rawTar(t testing.TB, entries ...rawEntry) []byte {
	t.Helper()
	var out []byte
	for _, e := range entries {
		var b [512]byte
		if len(e.name) > 100 {
			t.Fatalf("rawTar: name %q over 100 bytes", e.name)
		}
		copy(b[0:100], e.name)
		putNumeric(b[100:108], 0o644)
		putNumeric(b[108:116], 0)
		putNumeric(b[116:124], 0)
		putNumeric(b[124:136], e.size)
		putNumeric(b[136:148], 0)
		b[156] = e.typeflag
		if e.gnu {
			copy(b[257:], "ustar  \x00")
			for i, s := range e.sparse {
				putNumeric(b[386+24*i:][:12], s[0])
				putNumeric(b[386+24*i+12:][:12], s[1])
			}
			putNumeric(b[483:495], e.realSize)
		} else {
			copy(b[257:], "ustar\x0000")
		}
		copy(b[148:156], "        ")
		var sum int64
		for _, c := range b {
			sum += int64(c)
		}
		copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
		out = append(out, b[:]...)
		out = append(out, e.body...)
		if r := len(e.body) % 512; r != 0 {
			out = append(out, make([]byte, 512-r)...)
		}
	}
	return append(out, make([]byte, 1024)...)
}

// putNumeric writes v as NUL-terminated octal, or in base-256 when it does
// not fit (tar's encoding for sizes of 8 GiB and more).
func putNumeric(b []byte, v int64) {
	s := fmt.Sprintf("%0*o", len(b)-1, v)
	if len(s) < len(b) {
		copy(b, s)
		b[len(b)-1] = 0
		return
	}
	for i := len(b) - 1; i > 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	b[0] = 0x80
}

// paxRecords encodes PAX extended-header records ("%d key=value\n").
func paxRecords(kv ...string) []byte {
	var out []byte
	for i := 0; i+1 < len(kv); i += 2 {
		rec := " " + kv[i] + "=" + kv[i+1] + "\n"
		n := len(rec)
		for n != len(fmt.Sprint(n))+len(rec) {
			n = len(fmt.Sprint(n)) + len(rec)
		}
		out = append(out, fmt.Sprint(n)+rec...)
	}
	return out
}

func rawTGZ(t testing.TB, entries ...rawEntry) []byte {
	t.Helper()
	return tarballtest.Gzip(t, rawTar(t, entries...))
}

func TestRawTarIsReadable(t *testing.T) {
	t.Parallel()
	tgz := rawTGZ(t, rawEntry{name: "package/a.js", typeflag: '0', size: 3, body: []byte("abc")})
	files, _ := mustIngest(t, tgz, DefaultLimits())
	if files["a.js"] != "abc" {
		t.Fatalf("raw tar helper: got %q", files)
	}
}
