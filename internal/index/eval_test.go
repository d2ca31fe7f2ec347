package index

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// postingSample is a posting list of about n ids below limit, its gaps
// drawn up to gap, and its encoding.
func postingSample(rng *rand.Rand, n, gap, limit int) ([]uint32, []byte) {
	var ids []uint32
	var b []byte
	prev := uint32(0)
	for id := rng.IntN(gap + 1); id < limit && len(ids) < n; id += 1 + rng.IntN(gap) {
		ids = append(ids, uint32(id))
		b = binary.AppendUvarint(b, uint64(uint32(id)-prev))
		prev = uint32(id)
	}
	return ids, b
}

// groupsOf is ids as the group mode takes them: each id's group (the id
// with the bits of mask cleared), once each.
func groupsOf(ids []uint32, mask uint32) []uint32 {
	var g []uint32
	for _, id := range ids {
		if k := id &^ mask; len(g) == 0 || g[len(g)-1] != k {
			g = append(g, k)
		}
	}
	return g
}

// BenchmarkIntersectList intersects candidates with a common trigram's
// list, as next 16.4.6's useRouter does: 701 candidates among 120,000
// blocks against lists of 14-21 KB.
func BenchmarkIntersectList(b *testing.B) {
	const blocks = 120_000
	ix := &Index{blocks: make([]blockRec, blocks)}
	for k := range ix.blocks {
		ix.blocks[k].group = uint32(k) &^ 1
	}
	rng := rand.New(rand.NewPCG(1, 2))
	acc, _ := postingSample(rng, 701, 2*blocks/701, blocks)
	_, list := postingSample(rng, 1<<30, 14, blocks)
	b.Logf("%d candidates, a list of %d bytes", len(acc), len(list))
	buf := make([]uint32, len(acc))
	for _, group := range []bool{false, true} {
		name := "blocks"
		if group {
			name = "groups"
		}
		b.Run(name, func(b *testing.B) {
			a := acc
			if group {
				a = groupsOf(acc, 1)
			}
			b.SetBytes(int64(len(list)))
			for b.Loop() {
				copy(buf, a)
				if _, err := ix.intersectList(buf[:len(a)], list, group); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzIntersectList holds intersectList to the plain path, decoding the
// whole list and merging (decode, intersect), in block and group mode, on
// any bytes as the list: where the list decodes, the same ids; where it
// is corrupt, ErrCorrupt or (stopping before the defect, past acc's
// last id) ids of acc.
func FuzzIntersectList(f *testing.F) {
	const blocks = 300
	ix := &Index{blocks: make([]blockRec, blocks)}
	for k := range ix.blocks {
		ix.blocks[k].group = uint32(k) &^ 3 // groups of four, as Open checks them
	}
	f.Add([]byte{0, 1, 1, 5, 0x81, 1}, uint64(0b1011), uint64(1<<40|1<<7))
	f.Add([]byte{3, 0, 2}, uint64(1<<3|1<<4), uint64(0))
	f.Add([]byte{0x80}, uint64(1), uint64(1<<63))
	f.Fuzz(func(t *testing.T, list []byte, lo, hi uint64) {
		var acc []uint32 // the ids the 128 bits of lo and hi name, spread over the blocks
		for k := range 128 {
			w := lo
			if k >= 64 {
				w = hi
			}
			if w&(1<<(k%64)) != 0 {
				acc = append(acc, uint32(k*blocks/128))
			}
		}
		for _, group := range []bool{false, true} {
			a := acc
			if group {
				a = groupsOf(acc, 3)
			}
			got, err := ix.intersectList(slices.Clone(a), list, group)
			ids, derr := ix.decode(list, group)
			switch {
			case derr == nil && err != nil:
				t.Fatalf("group %v: %v on a list that decodes", group, err)
			case derr == nil:
				if want := intersect(unitSet{ids: slices.Clone(a)}, unitSet{ids: ids}).ids; !slices.Equal(got, want) {
					t.Fatalf("group %v: got %v, want %v", group, got, want)
				}
			case err != nil && !errors.Is(err, ErrCorrupt):
				t.Fatalf("group %v: %v, not ErrCorrupt", group, err)
			}
			for _, id := range got {
				if _, ok := slices.BinarySearch(a, id); !ok {
					t.Fatalf("group %v: %d is not a candidate", group, id)
				}
			}
		}
	})
}
