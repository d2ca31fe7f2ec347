package index

import "bytes"

// finder looks for a literal by its two rarest bytes in this index's
// text, the way ripgrep's memchr "packed pair" prefilter does: it stops
// only where both bytes sit at their distance apart, 32 starts at a time
// (indexPair). A search by the single rarest byte (IndexByte, the portable
// path) stopped too often in a literal's candidate blocks, which hold its
// neighbours: useRouter's 'R' every ~120 bytes of next 16.4.6's 2.3 MB of
// candidates (19k stops for 457 hits), Sync's 'S' 72k times in 9.3 MB, a
// third of a warm grep's CPU. When the pair turns out common here it
// hands over to bytes.Index.
type finder struct {
	lit []byte
	// a, b are the offsets in lit of the pair (a < b), x = lit[a] and
	// y = lit[b]; b == a for a one-byte literal.
	a, b int
	x, y byte
}

func newFinder(lit []byte, freq *[256]uint64) finder {
	f := finder{lit: lit}
	if len(lit) == 0 {
		return f
	}
	r1 := 0
	for i, c := range lit {
		if freq[c] < freq[lit[r1]] {
			r1 = i
		}
	}
	r2 := -1
	for i, c := range lit {
		if i != r1 && (r2 < 0 || freq[c] < freq[lit[r2]]) {
			r2 = i
		}
	}
	if r2 < 0 {
		r2 = r1
	}
	f.a, f.b = min(r1, r2), max(r1, r2)
	f.x, f.y = lit[f.a], lit[f.b]
	return f
}

// index returns the offset of the first occurrence of the literal in b,
// or -1.
func (f *finder) index(b []byte) int {
	n := len(f.lit)
	d := f.b - f.a
	fails := 0
	for i := 0; len(b)-i >= n; {
		var j int
		if d == 0 {
			j = bytes.IndexByte(b[i+f.a:len(b)-n+f.a+1], f.x)
		} else {
			// The pair's first byte of each start i..len(b)-n, and its
			// second d bytes on.
			j = indexPair(b[i+f.a:len(b)-n+f.b+1], f.x, f.y, d)
		}
		if j < 0 {
			return -1
		}
		c := i + j
		if bytes.Equal(b[c:c+n], f.lit) {
			return c
		}
		i = c + 1
		// Same cutover rule as bytes.Index: give up on the pair once it
		// has failed more than once per 8 bytes scanned.
		if fails++; fails > 4+(i>>3) {
			if k := bytes.Index(b[i:], f.lit); k >= 0 {
				return i + k
			}
			return -1
		}
	}
	return -1
}

// indexPair returns the first i with b[i] == x and b[i+d] == y (d > 0),
// or -1: 32 starts at a time with AVX2 (pair_amd64.s), else by IndexByte
// on x.
func indexPair(b []byte, x, y byte, d int) int {
	starts := len(b) - d
	if starts <= 0 {
		return -1
	}
	j, i := indexPairBlocks(b, x, y, d, starts)
	if j >= 0 {
		return j
	}
	for i < starts {
		k := bytes.IndexByte(b[i:starts], x)
		if k < 0 {
			return -1
		}
		i += k
		if b[i+d] == y {
			return i
		}
		i++
	}
	return -1
}
