//go:build !amd64

package index

// haveAVX2 is false off amd64: indexPair takes its portable path.
var haveAVX2 = false

// indexPairBlocks looks at no start off amd64 (see pair_amd64.go).
func indexPairBlocks(b []byte, c1, c2 byte, d, starts int) (int, int) { return -1, 0 }
