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

// decode expands a posting list into block ids (or group ids when group
// is set). A list that is not strictly increasing or names a block out of
// range is corrupt.
func (ix *Index) decode(b []byte, group bool) ([]uint32, error) {
	out := make([]uint32, 0, len(b))
	var id uint64
	for i := 0; len(b) > 0; i++ {
		d, n := binary.Uvarint(b)
		if n <= 0 || (i > 0 && d == 0) {
			return nil, corrupt("bad posting list")
		}
		b = b[n:]
		id += d
		if id >= uint64(len(ix.blocks)) {
			return nil, corrupt("posting names block %d of %d", id, len(ix.blocks))
		}
		u := uint32(id)
		if group {
			u = ix.blocks[id].group
			if len(out) > 0 && out[len(out)-1] == u {
				continue
			}
		}
		out = append(out, u)
	}
	return out, nil
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
			ids, err := ix.decode(l, group)
			if err != nil {
				return unitSet{}, err
			}
			acc = intersect(acc, unitSet{ids: ids})
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

// unindexedUnits returns the units of files stored without trigrams,
// which every query must scan.
func (ix *Index) unindexedUnits(group bool) []uint32 {
	var out []uint32
	for fi, f := range ix.files {
		if f.flags&fileNotIndexed == 0 {
			continue
		}
		lo, hi := ix.fileBlocks(fi)
		for k := lo; k < hi; k++ {
			if !group || ix.blocks[k].group == uint32(k) {
				out = append(out, uint32(k))
			}
		}
	}
	return out
}
