package index

import "golang.org/x/sys/cpu"

// haveAVX2 selects indexPairAVX2; tests turn it off to run the portable
// path on the same inputs.
var haveAVX2 = cpu.X86.HasAVX2

//go:noescape
func indexPairAVX2(p *byte, blocks int, c1, c2 byte, d int) int

// indexPairBlocks looks at the first blocks*32 starts of b (see
// indexPair) 32 at a time, when the CPU can; it returns the first start
// found, or -1 and how many starts it looked at.
func indexPairBlocks(b []byte, c1, c2 byte, d, starts int) (int, int) {
	if !haveAVX2 || starts < 32 {
		return -1, 0
	}
	blocks := starts / 32
	return indexPairAVX2(&b[0], blocks, c1, c2, d), blocks * 32
}
