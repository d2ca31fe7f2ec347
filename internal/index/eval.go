package index

import (
	"encoding/binary"
	"sort"

	csindex "github.com/google/codesearch/index"
)

// unitSet is a sorted set of block ids (or group ids, which are the ids of
// their first blocks), or every unit when all is set.
type unitSet struct {
	all bool
	ids []uint32
}

// postings returns the raw posting list of trigram t (nil if absent).
func (ix *Index) postings(t uint32) []byte {
	n := len(ix.tris) / triRecSize
	i := sort.Search(n, func(i int) bool {
		return binary.LittleEndian.Uint32(ix.tris[i*triRecSize:]) >= t
	})
	if i == n || binary.LittleEndian.Uint32(ix.tris[i*triRecSize:]) != t {
		return nil
	}
	off := binary.LittleEndian.Uint64(ix.tris[i*triRecSize+4:])
	end := uint64(len(ix.post))
	if i+1 < n {
		end = binary.LittleEndian.Uint64(ix.tris[(i+1)*triRecSize+4:])
	}
	return ix.post[off:end]
}

func trigramKey(s string) uint32 {
	return uint32(s[0])<<16 | uint32(s[1])<<8 | uint32(s[2])
}

// skipListBytesPerUnit: an AND term whose posting list is longer than
// this many bytes per remaining candidate is not decoded (see eval).
// Decoding runs about 2 ns a byte and scanning a candidate block for a
// literal about 1 us (the pair finder), so a list past 64 bytes a
// candidate costs more than the scans it could save unless it removes
// over a tenth of them, which the common trigrams left after the rare
// ones seldom do. At 1024, next 16.4.6's useRouter decoded seven lists
// for 0.29 ms of its 0.45 ms search; at 64 its candidates are the same
// 593 blocks and the search takes a fifth less (createProgram 0.43 →
// 0.11 ms with 96 candidates for 39).
const skipListBytesPerUnit = 64

// decode expands a posting list into block ids (or group ids when group
// is set).
func (ix *Index) decode(b []byte, group bool) ([]uint32, error) {
	out := make([]uint32, 0, len(b)) // each id takes at least a byte
	it := newPostingIter(ix, b, group)
	for {
		n := it.fill(out[len(out):cap(out)])
		if n == 0 {
			return out, it.err
		}
		out = out[:len(out)+n]
	}
}

// intersectList returns the ids of acc (sorted, owned by the caller and
// reused for the result) that posting list b also holds, decoding b only
// as far as the last id of acc.
//
// Intersecting a short acc with a common trigram's list is most of a
// candidate evaluation's time (next 16.4.6's useRouter: six lists of
// 4-21 KB against 2,319 candidates), and nearly every id of such a list
// lies before the next id of acc. So the loop that decodes it does the
// least per byte: one compare for a one-byte delta, one unsigned compare
// that finds both a zero delta and one past the blocks, one against the
// next id wanted. A group id is the id of its group's first block, and a
// group's blocks are consecutive (Open checks), so a block before the
// wanted id is in a group before it too: the group is looked up only at
// or past it. Walking acc and the list's checks in one loop per id, with
// the group looked up for each, ran at 120 MB/s (BenchmarkIntersectList);
// this runs at 360-480 MB/s.
func (ix *Index) intersectList(acc []uint32, b []byte, group bool) ([]uint32, error) {
	out := acc[:0]
	if len(acc) == 0 || len(b) == 0 {
		return out, nil
	}
	n := uint64(len(ix.blocks))
	j, want := 0, uint64(acc[0])
	// The first delta is the first id and may be 0; each later one is at
	// least 1, and every id is below n.
	id, i := uint64(0), 0
	if c := b[0]; c < 0x80 {
		id, i = uint64(c), 1
	} else {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return out, corrupt("bad posting list")
		}
		id, i = v, k
	}
	if id >= n {
		return out, corrupt("posting names a block past the %d", n)
	}
	for {
		if id >= want {
			u := id
			if group {
				u = uint64(ix.blocks[id].group)
			}
			for want < u {
				if j++; j == len(acc) {
					return out, nil
				}
				want = uint64(acc[j])
			}
			if want == u {
				out = append(out, acc[j])
				if j++; j == len(acc) {
					return out, nil
				}
				want = uint64(acc[j])
			}
		}
		if i >= len(b) {
			return out, nil
		}
		var d uint64
		if c := b[i]; c < 0x80 {
			d = uint64(c)
			i++
		} else {
			v, k := binary.Uvarint(b[i:])
			if k <= 0 {
				return out, corrupt("bad posting list")
			}
			d = v
			i += k
		}
		if d-1 >= n-1-id { // d is 0 (wraps), or id+d is past the blocks or 2^64
			if d == 0 {
				return out, corrupt("posting list not increasing")
			}
			return out, corrupt("posting names a block past the %d", n)
		}
		id += d
	}
}

// postingIter decodes a posting list, a buffer of ids at a time: a call
// per id (a closure over each) made an intersection cost ~9 ns a byte,
// most of a warm grep's candidate evaluation (next 16.4.6's useRouter:
// 0.39 ms for seven lists of 2-21 KB).
type postingIter struct {
	ix    *Index
	b     []byte // what is left to decode
	group bool   // map block ids to group ids (each group once)
	more  bool   // an id was decoded: the next delta must not be 0
	id    uint64
	last  uint32 // the last group id given; none is 1<<32-1
	err   error
}

func newPostingIter(ix *Index, b []byte, group bool) postingIter {
	return postingIter{ix: ix, b: b, group: group, last: 1<<32 - 1}
}

// fill decodes the next ids of the list into buf and returns how many;
// 0 at its end or at a defect (it.err). A list that is not strictly
// increasing or names a block out of range is corrupt.
func (it *postingIter) fill(buf []uint32) int {
	b, blocks := it.b, it.ix.blocks
	k := 0
	for k < len(buf) && len(b) > 0 {
		var d uint64
		if b[0] < 0x80 {
			d, b = uint64(b[0]), b[1:]
		} else {
			v, n := binary.Uvarint(b)
			if n <= 0 {
				it.err, it.b = corrupt("bad posting list"), nil
				return 0
			}
			d, b = v, b[n:]
		}
		if it.more && d == 0 {
			it.err, it.b = corrupt("posting list not increasing"), nil
			return 0
		}
		it.more = true
		if d >= uint64(len(blocks))-it.id { // past the blocks, or past 2^64
			it.err, it.b = corrupt("posting names a block past the %d", len(blocks)), nil
			return 0
		}
		it.id += d
		u := uint32(it.id)
		if it.group {
			if u = blocks[it.id].group; u == it.last {
				continue
			}
			it.last = u
		}
		buf[k] = u
		k++
	}
	it.b = b
	return k
}

// eval evaluates a codesearch trigram query over the units.
func (ix *Index) eval(q *csindex.Query, group bool) (unitSet, error) {
	switch q.Op {
	case csindex.QAll:
		return unitSet{all: true}, nil
	case csindex.QNone:
		return unitSet{}, nil
	case csindex.QAnd:
		// Intersect the shortest lists first: a selective trigram empties
		// the set before the common ones are decoded.
		lists := make([][]byte, 0, len(q.Trigram))
		for _, t := range q.Trigram {
			lists = append(lists, ix.postings(trigramKey(t)))
		}
		sort.Slice(lists, func(i, j int) bool { return len(lists[i]) < len(lists[j]) })
		acc := unitSet{all: true}
		for _, l := range lists {
			// Each term only narrows the candidates, and the scan checks
			// them anyway, so a long list is worth decoding only while it
			// can save more scanning than it costs (skipListBytesPerUnit).
			if !acc.all && len(l) > skipListBytesPerUnit*len(acc.ids) {
				break
			}
			if acc.all {
				ids, err := ix.decode(l, group)
				if err != nil {
					return unitSet{}, err
				}
				acc = unitSet{ids: ids}
			} else {
				ids, err := ix.intersectList(acc.ids, l, group)
				if err != nil {
					return unitSet{}, err
				}
				acc.ids = ids
			}
			if len(acc.ids) == 0 {
				return acc, nil
			}
		}
		for _, sub := range q.Sub {
			s, err := ix.eval(sub, group)
			if err != nil {
				return unitSet{}, err
			}
			acc = intersect(acc, s)
			if !acc.all && len(acc.ids) == 0 {
				return acc, nil
			}
		}
		return acc, nil
	case csindex.QOr:
		var acc unitSet
		for _, t := range q.Trigram {
			ids, err := ix.decode(ix.postings(trigramKey(t)), group)
			if err != nil {
				return unitSet{}, err
			}
			acc = union(acc, unitSet{ids: ids})
		}
		for _, sub := range q.Sub {
			s, err := ix.eval(sub, group)
			if err != nil {
				return unitSet{}, err
			}
			if s.all {
				return s, nil
			}
			acc = union(acc, s)
		}
		return acc, nil
	}
	return unitSet{all: true}, nil
}

func intersect(a, b unitSet) unitSet {
	if a.all {
		return b
	}
	if b.all {
		return a
	}
	out := a.ids[:0:0]
	i, j := 0, 0
	for i < len(a.ids) && j < len(b.ids) {
		switch {
		case a.ids[i] < b.ids[j]:
			i++
		case a.ids[i] > b.ids[j]:
			j++
		default:
			out = append(out, a.ids[i])
			i++
			j++
		}
	}
	return unitSet{ids: out}
}

func union(a, b unitSet) unitSet {
	if a.all || b.all {
		return unitSet{all: true}
	}
	out := make([]uint32, 0, len(a.ids)+len(b.ids))
	i, j := 0, 0
	for i < len(a.ids) || j < len(b.ids) {
		switch {
		case j == len(b.ids) || (i < len(a.ids) && a.ids[i] < b.ids[j]):
			out = append(out, a.ids[i])
			i++
		case i == len(a.ids) || b.ids[j] < a.ids[i]:
			out = append(out, b.ids[j])
			j++
		default:
			out = append(out, a.ids[i])
			i++
			j++
		}
	}
	return unitSet{ids: out}
}

// unindexedUnits returns the units of bodies stored without trigrams,
// which every query must scan.
func (ix *Index) unindexedUnits(group bool) []uint32 {
	var out []uint32
	for ci, c := range ix.conts {
		if c.flags&fileNotIndexed == 0 {
			continue
		}
		lo, hi := ix.contBlocks(ci)
		for k := lo; k < hi; k++ {
			if !group || ix.blocks[k].group == uint32(k) {
				out = append(out, uint32(k))
			}
		}
	}
	return out
}
