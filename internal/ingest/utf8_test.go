package ingest

import (
	"testing"
	"unicode/utf8"
)

// FuzzUTF8Writer: written in any two cuts, utf8Writer agrees with
// utf8.Valid of the whole, runes cut between writes included.
func FuzzUTF8Writer(f *testing.F) {
	for _, s := range []string{"", "abc", "é", "€uro", "\U0001F600", "a\xffb", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "é\xa9"} {
		f.Add([]byte(s), uint8(1), uint8(2))
	}
	f.Fuzz(func(t *testing.T, b []byte, i, j uint8) {
		cuts := []int{min(int(i), len(b)), min(int(j), len(b))}
		if cuts[0] > cuts[1] {
			cuts[0], cuts[1] = cuts[1], cuts[0]
		}
		var w utf8Writer
		for _, part := range [][]byte{b[:cuts[0]], b[cuts[0]:cuts[1]], b[cuts[1]:]} {
			if n, err := w.Write(part); n != len(part) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", part, n, err)
			}
		}
		if got, want := w.valid(), utf8.Valid(b); got != want {
			t.Errorf("%q cut at %v: valid %v, utf8.Valid %v", b, cuts, got, want)
		}
	})
}

// TestUTF8WriterByteAtATime writes runes of every length one byte at a
// time, each cut inside every rune.
func TestUTF8WriterByteAtATime(t *testing.T) {
	for _, s := range []string{"aé€\U0001F600z", "€\xe2\x82", "\xe2\x82", "é\xff", "\xed\xa0\x80", "\xf0\x9f\x98"} {
		var w utf8Writer
		for i := range len(s) {
			w.Write([]byte{s[i]})
		}
		if got, want := w.valid(), utf8.Valid([]byte(s)); got != want {
			t.Errorf("%q a byte at a time: valid %v, want %v", s, got, want)
		}
	}
}
