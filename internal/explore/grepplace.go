package explore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pkgscope/pkgscope/internal/index"
)

// GrepPlace is where a content grep's page sits among all its matching
// lines: "lines 164–330 of 427 in 12 files". A paged grep that gave only
// "163 matching lines on this page" left an agent guessing how many pages
// were left (issue 28: typescript's checkGrammar\w+ took 3 pages, 427
// lines, and no page said so).
type GrepPlace struct {
	// First and Last number this page's matching lines among all (1-based).
	First int `json:"first"`
	Last  int `json:"last"`
	// Lines and Files are the grep's matching lines and files in all;
	// AtLeast says the count stopped at a limit (the count's own page,
	// max-answer-bytes of files) and there are more.
	Lines   int  `json:"lines"`
	Files   int  `json:"files"`
	AtLeast bool `json:"atLeast,omitempty"`
}

// placeCursor carries a page's place into the next request's cursor,
// before the grep's own: "p<last>.<lines>.<files>.<atLeast>|<cursor>", so
// a later page says where it sits without counting again.
const placeCursor = 'p'

// withPlace answers a content grep with its place: the first page of a
// cut grep counts every matching line (countAll: beside the page when a
// slot is free, else after it, and only when the page was cut: an uncut
// page is its own total), later pages read theirs from the cursor. A
// count that fails leaves the place out; the page is answered as it was.
func (s *Service) withPlace(ctx context.Context, r Request) (*GrepResult, error) {
	prev, cursor, err := cutPlace(r.Cursor)
	if err != nil {
		return nil, err
	}
	r.Cursor = cursor
	g, err := s.page(ctx, r, true, prev == nil)
	if err != nil {
		return nil, err
	}
	defer g.stopCount()
	res := g.res
	if res.OutputMode != OutputContent || strings.HasPrefix(r.Cursor, "gl") {
		return res, nil
	}
	n := pageLines(res.Matches)
	place := prev
	switch {
	case prev == nil && !res.Truncated:
		return res, nil // the page is the whole grep: its header is the total
	case prev == nil && r.Cursor != "":
		return res, nil // a cursor from before places were kept: it cannot say where it is
	case prev == nil:
		place = g.place()
		if place == nil {
			return res, nil
		}
	}
	place.First, place.Last = place.Last+1, place.Last+n
	// The version's files are fixed: never say less than was shown (a
	// count stopped by grep-count-time may have counted fewer).
	place.Lines = max(place.Lines, place.Last)
	if place.AtLeast {
		place.Files = max(place.Files, pageFiles(res.Matches))
	}
	res.Place = place
	if res.Next != nil && res.Next.Cursor != "" && !strings.HasPrefix(res.Next.Cursor, "gl") {
		res.Next.Cursor = fmt.Sprintf("%c%d.%d.%d.%d|%s", placeCursor, place.Last, place.Lines, place.Files, b2i(place.AtLeast), res.Next.Cursor)
	}
	return res, nil
}

// pageLines counts a page's matching lines: one a match, a same-bytes
// file's own.
func pageLines(ms []GrepMatch) int {
	n := 0
	for _, m := range ms {
		if m.SameBytesAs != "" {
			n += m.MatchingLines
		} else {
			n++
		}
	}
	return n
}

// pageFiles counts the files a page's matches are in.
func pageFiles(ms []GrepMatch) int {
	seen := map[string]bool{}
	for _, m := range ms {
		seen[m.File] = true
	}
	return len(seen)
}

// tierCount is a first page's count of its grep's matching lines and
// files (GrepPlace), made tier by tier (rank.go), each tier once, by
// whoever claims it first: the page counts each tier it searches from its
// start as it searches it (index.Query.CountRest: its first search of the
// tier goes on counting past the page's caps), a count beside it counts
// from the last tier down until it meets one the page took, and the page,
// once done, counts what neither reached. When the page and the count
// beside it each searched every tier, next 16.4.6's function\s+\w+Sync
// scanned its 2,444 candidate blocks twice. Copies count as the page
// counts them (the page's Tally of a same-bytes file is its lines).
type tierCount struct {
	mu           sync.Mutex
	taken, whole [numTiers]bool // claimed; counted to the end
	lines, files int
	failed       bool
}

// claim takes tier t for the caller to count, unless someone has.
func (c *tierCount) claim(t int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.taken[t] {
		return false
	}
	c.taken[t] = true
	return true
}

// tierSet is a set of tiers.
type tierSet [numTiers]bool

// add records the count of the claimed tiers in set; whole says it
// counted them to their end (else it ran out of grep-count-time).
func (c *tierCount) add(set tierSet, lines, files int, whole bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines, c.files = c.lines+lines, c.files+files
	for t, in := range set {
		if in {
			c.whole[t] = whole
		}
	}
}

// fail records a count that failed: the grep gets no place.
func (c *tierCount) fail() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed = true
}

// place is the count of every tier sc holds files in: at least, when one
// was not counted to its end; nil when a count failed.
func (c *tierCount) place(sc *grepScope) *GrepPlace {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed {
		return nil
	}
	p := &GrepPlace{Lines: c.lines, Files: c.files}
	for t := range numTiers {
		if sc.inTier[t] > 0 && !c.whole[t] {
			p.AtLeast = true
		}
	}
	return p
}

// countTiers counts the tiers with files that nobody has claimed: beside
// the page, one at a time from the last down, stopping at the first one
// claimed (the page counts those before it); after the page, all of them
// in one count (a search each cost next 16.4.6's useRouter with
// maxMatches 5 four searches more). grep-count-time bounds it, from its
// start, as it bounds the page's own counting from the page's: a tier it
// cuts is not whole, and no tier is counted after.
func (g *grepPage) countTiers(ctx context.Context, o *Opened, beside bool) {
	if d := g.s.lim.GrepCountTime; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	var set tierSet
	claimed := false
	for t := numTiers - 1; t >= 0; t-- {
		if g.sc.inTier[t] == 0 {
			continue
		}
		if !g.tc.claim(t) {
			if beside {
				return
			}
			continue
		}
		set[t], claimed = true, true
		if !beside && t > 0 {
			continue // claim the rest, count them at once
		}
		if !g.countIn(ctx, o, set) {
			return
		}
		set, claimed = tierSet{}, false
	}
	if claimed {
		g.countIn(ctx, o, set)
	}
}

// countIn counts the matching lines and files of g's grep in the tiers of
// its scope in set and records them (tierCount.add), each file counted by
// the index (Query.Tally), through the page's version and compiled
// pattern, in one search unless a search's max-matches of files cuts it.
// It reports whether counting may go on: not when ctx's deadline
// (grep-count-time) or a limit stopped it (the tiers are not whole) or it
// failed.
func (g *grepPage) countIn(ctx context.Context, o *Opened, set tierSet) bool {
	lines, files, whole, err := g.countFiles(ctx, o, set)
	if err != nil {
		g.tc.fail()
		return false
	}
	g.tc.add(set, lines, files, whole)
	return whole
}

// countFiles is countIn's count, not recorded.
func (g *grepPage) countFiles(ctx context.Context, o *Opened, set tierSet) (lines, files int, whole bool, err error) {
	r := g.r
	after := "" // the last file counted
	for {
		q := index.Query{Pattern: r.Pattern, CaseInsensitive: r.CaseInsensitive, FixedStrings: r.FixedStrings,
			WholeWord: r.WholeWord, MaxMatches: g.countMatches(), Compiled: g.compiled, CandidatesOnly: !o.fromElsewhere(),
			Tally: func(string) bool { return true }}
		var from func(string) bool
		if after != "" {
			from = func(path string) bool { return path > after }
		}
		g.selectFiles(&q, set, true, from)
		sr, err := g.s.pkgs.Search(ctx, o, q)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
				return lines, files, false, nil // out of time: what was counted
			}
			return 0, 0, false, err
		}
		for _, m := range sr.Result.Matches {
			lines += m.Count
			files++
			after = m.File
		}
		switch sr.Result.TruncatedBy {
		case "":
			return lines, files, true, nil
		case index.TruncMaxMatches, index.TruncOutputBytes:
			if len(sr.Result.Matches) > 0 {
				continue // the call's own bound: go on after the last file
			}
		}
		return lines, files, false, nil
	}
}

// besideAfter is how long a first page runs before the count of the
// tiers it has not reached starts beside it (the page looks before each
// of its index searches). A page done sooner needs no count (uncut:
// typescript 5.9.3's createProgram, 107 lines in 0.29 ms) or one that
// costs little after it: after 100 us, createProgram lost 40% to a count
// it never used. A timer would not do: the runtime wakes an idle core for
// one about a millisecond late. Scans beside each other share the
// memory's bandwidth: on the 2-core build machine, next 16.4.6's
// function\s+\w+Sync scanned its source tier in 0.55 ms alone and in
// 2.9 ms beside a count of its source maps.
var besideAfter = 300 * time.Microsecond

// besideStarts counts the counts started beside their pages (tests read
// it: a count after the page gives the same place).
var besideStarts atomic.Int64

// besideCount is a count running beside its page.
type besideCount struct {
	stop context.CancelFunc
	done chan struct{}
}

// scheduleCount has the page count its place (tierCount): it counts the
// tiers it searches, and starts a count of the others beside itself once
// it has run besideAfter (startCount), for a stored version (a fallback's
// count would fetch its files a second time at once; its count is made
// after the page).
func (g *grepPage) scheduleCount() {
	g.tc = &tierCount{}
	if g.s.lim.GrepCountTime > 0 {
		g.countUntil = time.Now().Add(g.s.lim.GrepCountTime)
	}
	if !g.o.fromElsewhere() {
		g.tierCounts = true
		if g.s.counts != nil {
			g.countAt = time.Now().Add(besideAfter)
		}
	}
}

// startCount starts the scheduled count beside the page, if it is time
// and one of the service's slots for it (grep-counts-beside) is free. The
// page calls it before each index search.
func (g *grepPage) startCount() {
	if g.countAt.IsZero() || g.beside != nil || time.Now().Before(g.countAt) || !g.s.counts.TryAcquire(1) {
		return
	}
	ctx, stop := context.WithCancel(g.ctx)
	c := &besideCount{stop: stop, done: make(chan struct{})}
	sem, o := g.s.counts, g.o
	besideStarts.Add(1)
	go func() {
		defer close(c.done)
		defer sem.Release(1)
		g.countTiers(ctx, o, true)
	}()
	g.beside = c
}

// stopCount ends a count beside the page, if one started, and waits for
// it: the page needs no total (or failed). It may be called again.
func (g *grepPage) stopCount() {
	g.countAt = time.Time{}
	if c := g.beside; c != nil {
		c.stop()
		<-c.done
	}
}

// place is the grep's count: the tiers the page and the count beside it
// counted, and the ones neither reached, counted now.
func (g *grepPage) place() *GrepPlace {
	g.countAt = time.Time{}
	if g.tc == nil {
		return nil
	}
	g.countTiers(g.ctx, g.o, false)
	if c := g.beside; c != nil {
		<-c.done
		c.stop()
	}
	return g.tc.place(g.sc)
}

// cutPlace splits a cursor withPlace wrote into the place so far (with
// Last the last line given) and the grep's own cursor.
func cutPlace(cursor string) (*GrepPlace, string, error) {
	if cursor == "" || cursor[0] != placeCursor {
		return nil, cursor, nil
	}
	head, rest, ok := strings.Cut(cursor[1:], "|")
	f := strings.Split(head, ".")
	bad := &InputError{Field: "cursor", Err: errors.New("not a grep cursor: send the next request of a grep answer as it was given")}
	if !ok || len(f) != 4 {
		return nil, "", bad
	}
	var n [4]int
	for i, x := range f {
		v, err := strconv.Atoi(x)
		if err != nil || v < 0 {
			return nil, "", bad
		}
		n[i] = v
	}
	return &GrepPlace{Last: n[0], Lines: n[1], Files: n[2], AtLeast: n[3] == 1}, rest, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
