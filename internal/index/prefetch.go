package index

import "context"

// Prefetcher is a TextSource that can read many bodies in one request.
// A search of an index opened with OpenStored reads each content's text
// when it reaches it, one Body call after another; on Postgres each call
// that misses the source's cache is a round trip, and a grep can reach
// thousands of contents (lucide-react's createLucideIcon 4,254, most of
// next's 8,398 for function\s+\w+Sync). When its source is a Prefetcher,
// the search offers it, before it reads a content not offered yet, that
// content and the ones it will read after it, in order, so the source
// can read a batch of them at once and answer the Body calls from what
// it read. A source's cache usually holds what a warm search reads, so
// the search asks it first (Held) and plans and offers nothing while every
// content it reaches is held: planning the rest of a search (its files'
// Filter answers, each content's key) and offering it was a sixth of a
// warm grep's CPU on next 16.4.6 when the cache held every body already.
type Prefetcher interface {
	// Prefetch is offered the keys of the bodies the search will read
	// next, in order, sizes[i] being the length of body keys[i]. It
	// returns how many of the leading keys it dealt with (read ahead,
	// found held, or left to Body), at least 1 when keys is not empty;
	// the search offers the rest when it reaches them. It reports no
	// error: a body it could not read is read, and its error reported,
	// by Body. ctx ends with the search.
	Prefetch(ctx context.Context, keys []string, sizes []int64) int
	// Held returns the body named key when the source holds it in memory
	// (the bytes Body would return), without reading or waiting for
	// anything; false sends the search to Prefetch and Body.
	Held(key []byte) ([]byte, bool)
}

// Offers grow: the first is firstOffer contents, each later one as many
// as were offered before it, up to maxOffer. A search often ends early
// (its answer's budget is full after a few hundred files, or maxMatches
// is reached), and a source reading everything offered would then have
// read bodies nobody scans; growing offers keep that waste under what
// the search did read. The source takes what its memory bound allows, so
// a longer offer than maxOffer would only cost the keys' copies.
const (
	firstOffer = 16
	maxOffer   = 1024
)

// ahead is a search's plan of the contents it will read, in order, made
// at its first read through a Prefetcher: the files after that one that
// Filter keeps, that are not binary and that hold candidate units. Filter
// is called once per file, as Query promises: the plan keeps its answers
// for run.
type ahead struct {
	planned  bool
	filtered []int8  // Filter's answers by file: 0 not asked, kept or dropped
	conts    []int32 // the contents to read, in order of first read
	pos      []int32 // pos[ci] is ci's place in conts plus one, 0 when not there
	next     int     // conts[:next] have been offered
}

const (
	filterKept    = 1
	filterDropped = 2
)

// kept returns Filter's answer for file fi and true when the plan holds it.
func (a *ahead) kept(fi int) (bool, bool) {
	if a.filtered == nil || a.filtered[fi] == 0 {
		return false, false
	}
	return a.filtered[fi] == filterKept, true
}

// prefetch offers the index's source, when it is a Prefetcher, content ci
// (held by file fi, which the search is about to read) and the contents
// after it, unless ci was offered already; ctx bounds the reading.
func (s *searcher) prefetch(ctx context.Context, ci, fi int) {
	pf, ok := s.ix.src.(Prefetcher)
	if !ok {
		return
	}
	a := &s.ahead
	if !a.planned {
		s.plan(ci)
	}
	p := int(a.pos[ci]) - 1
	if p < a.next { // offered already, or not in the plan
		return
	}
	end := min(len(a.conts), p+min(maxOffer, max(firstOffer, a.next)))
	keys := make([]string, 0, end-p)
	sizes := make([]int64, 0, end-p)
	for _, c := range a.conts[p:end] {
		key, _, _ := nextKey(s.ix.keys[s.ix.keyOff[c]:]) // checked at open
		size := int64(s.ix.conts[c].textLen)
		if s.ix.conts[c].flags&fileBOM != 0 {
			size += int64(len(utf8BOM))
		}
		keys = append(keys, string(key))
		sizes = append(sizes, size)
	}
	n := pf.Prefetch(ctx, keys, sizes)
	a.next = p + min(max(n, 1), len(keys))
}

// plan makes s.ahead from content ci, held by the file run visits (s.at),
// and the files it visits after that one, with the tests run makes of each (Filter, binary,
// candidate units). The plan's Filter calls tick the clock as run's do; a
// search that stops while planning keeps the plan made so far.
func (s *searcher) plan(ci int) {
	ix, a := s.ix, &s.ahead
	a.planned = true
	a.pos = make([]int32, len(ix.conts))
	add := func(c int) {
		if a.pos[c] == 0 {
			a.conts = append(a.conts, int32(c))
			a.pos[c] = int32(len(a.conts))
		}
	}
	add(ci)
	if s.q.Filter != nil {
		a.filtered = make([]int8, len(ix.files))
	}
	n := len(ix.files)
	if s.order != nil {
		n = len(s.order)
	}
	for k := s.at + 1; k < n && !s.stopped; k++ {
		f := k
		if s.order != nil {
			f = int(s.order[k])
		}
		if !s.candidate(int(ix.files[f].content)) || !s.inClass(f) {
			continue // run does not ask Filter either
		}
		if s.q.Filter != nil {
			keep := s.q.Filter(ix.filePath(f))
			a.filtered[f] = filterDropped
			if keep {
				a.filtered[f] = filterKept
			}
			if s.ticks++; s.ticks&63 == 0 {
				s.checkTime()
			}
			if !keep {
				continue
			}
		}
		c := int(ix.files[f].content)
		if ix.conts[c].flags&fileBinary != 0 {
			continue
		}
		lo, hi := ix.contBlocks(c)
		if lo == hi || (!s.units.all && len(s.units.within(lo, hi)) == 0) {
			continue
		}
		add(c)
	}
}
