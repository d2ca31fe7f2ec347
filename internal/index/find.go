package index

import "bytes"

// finder looks for a literal by its rarest byte in this index's text, the
// way ripgrep's memchr-based prefilter does: IndexByte on a rare byte
// runs at memory speed and seldom stops for nothing. When the rare byte
// turns out common here, it hands over to bytes.Index.
type finder struct {
	lit  []byte
	rare byte
	off  int // offset of rare in lit
}

func newFinder(lit []byte, freq *[256]uint64) finder {
	f := finder{lit: lit}
	for i, c := range lit {
		if freq[c] < freq[f.rare] || i == 0 {
			f.rare, f.off = c, i
		}
	}
	return f
}

// index returns the offset of the first occurrence of the literal in b,
// or -1.
func (f *finder) index(b []byte) int {
	n := len(f.lit)
	fails := 0
	for i := 0; len(b)-i >= n; {
		j := bytes.IndexByte(b[i+f.off:len(b)-n+f.off+1], f.rare)
		if j < 0 {
			return -1
		}
		c := i + j
		if bytes.Equal(b[c:c+n], f.lit) {
			return c
		}
		i = c + 1
		// Same cutover rule as bytes.Index: give up on the rare byte once
		// it has failed more than once per 8 bytes scanned.
		if fails++; fails > 4+(i>>3) {
			if k := bytes.Index(b[i:], f.lit); k >= 0 {
				return i + k
			}
			return -1
		}
	}
	return -1
}
