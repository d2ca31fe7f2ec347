package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"time"
	"unicode/utf8"

	csindex "github.com/google/codesearch/index"
)

// Query is one grep request.
type Query struct {
	// Pattern is an RE2 regular expression (Go regexp syntax), or a
	// literal string when FixedStrings is set. It is matched within each
	// line, never across a newline, as ripgrep does.
	Pattern string
	// CaseInsensitive is (?i); FixedStrings quotes the pattern; WholeWord
	// requires the match to be preceded by a line start or a non-word
	// character and followed by one or a line end, like rg -w.
	CaseInsensitive, FixedStrings, WholeWord bool
	// Filter selects files by path (include/exclude globs, built by the
	// caller); nil selects every file. It is called once per file.
	Filter func(path string) bool `json:"-"`
	// Classes, when set, selects files before Filter: a file is visited
	// only when its class (Classes) is in ClassMask, bit k for class k,
	// and Filter, when set, is asked about those alone. Callers set it
	// for what a file's selection depends on that does not change from
	// one search to the next (internal/explore: a file's tier), and
	// Filter for the rest (the files before a cursor).
	Classes   *Classes `json:"-"`
	ClassMask uint64   `json:",omitempty"`
	// CandidatesOnly makes a search's cost follow its candidates, not
	// the index's file count: only files holding candidate lines are
	// visited, so Filter is asked about those alone, and FilesSearched,
	// FilesSkipped and Skipped count only them. Callers that count a
	// version's files from its listing set it (internal/explore: next
	// 16.4.6 has 8,711 files, and a grep for useRouter reaches 297 of
	// them; asking Filter about every file in each of a page's calls was
	// a fifth of a warm grep's time).
	CandidatesOnly bool `json:",omitempty"`
	// ContextLines is the number of lines given before and after each
	// match, like grep -C. Each match carries its own context, so the
	// contexts of nearby matches overlap and repeat lines.
	ContextLines int
	// MaxMatches caps the matching lines returned; 0 means
	// SearchLimits.DefaultMaxMatches.
	MaxMatches int
	// MaxMatchesPerFile caps the matching lines returned per file; 0
	// means no per-file cap.
	MaxMatchesPerFile int
	// MaxOutputBytes caps the bytes of text returned, as
	// SearchLimits.MaxOutputBytes does, when smaller than it (0: the
	// limit's). Callers filling an answer of a few KB set it to what the
	// answer can still hold: a search stops at a match past it instead
	// of making windows for lines nobody will be given.
	MaxOutputBytes int
	// CountRest has the search count every matching line of the files
	// it visits, past its caps: a file MaxMatchesPerFile cuts is scanned
	// on, and a search MaxMatches or MaxOutputBytes stops visits the rest
	// of its files, counting their lines (Result.Lines, Files,
	// CountedAll) without returning more. The matches it returns are the
	// ones it returns without. A caller paging a grep counts the lines of
	// what it searches as it goes, not in a second search (explore's
	// GrepPlace). Skip and FromColumn are not to be set with it.
	CountRest bool `json:",omitempty"`
	// CountUntil, when set, ends a CountRest search's counting past its
	// caps at that time (CountedAll false): a count costs no more than
	// its caller allows, however long the search's Timeout.
	CountUntil time.Time `json:",omitzero"`
	// Skip, when set, is asked about each matching line before it is
	// returned, with n its 1-based rank within its file. A skipped line is
	// not returned and does not count toward MaxMatches or the output
	// bytes, but counts toward MaxMatchesPerFile. Callers page with it:
	// skip what an earlier page returned, or defer the first matches of
	// each file to a later pass (internal/explore's paging).
	Skip func(path string, line, n int) bool `json:"-"`
	// Tally, when set, is asked about each file with candidate lines
	// before its lines are scanned. A file it returns true for is counted,
	// not listed: its matching lines give one Match with Count set to
	// their number (Line 0, no text). MaxMatchesPerFile and Skip do not
	// apply to it; it counts as one match toward MaxMatches. Callers use
	// it for a file with the same bytes as one already answered
	// (internal/explore), whose lines would repeat that file's.
	Tally func(path string) bool `json:"-"`
	// TallyMask, with Classes, tallies the files whose class it holds
	// (bit k for class k) as Tally does, without asking it: a grep page
	// tallies the copies in its tier (internal/explore), and asking Tally
	// about each file it scanned was a map lookup by path, 5% of a warm
	// next 16.4.6 useRouter page over HTTP. A file is tallied when either
	// says so.
	TallyMask uint64 `json:",omitempty"`
	// FromColumn, when set, is asked about each matching line that Skip
	// kept: a column c > 1 starts the line's matches at its byte c
	// (1-based). The line's first match is then the first starting there
	// or after, found as Match.Windows' matches are (the byte before is
	// its context), and a line with none there is not returned. Callers
	// continue a long line past its last window with it, from
	// Match.MoreColumn (internal/explore).
	FromColumn func(path string, line int) int `json:"-"`
	// Compiled, when set, keeps the pattern compiled from one Search to
	// the next: a caller running one query over many indexes sets it to
	// one new(Compiled) for all of them (see Compiled). Nil compiles the
	// pattern in every Search.
	Compiled *Compiled `json:"-"`
}

// SearchLimits bound what one Search may cost. The zero value is not
// usable; start from DefaultSearchLimits.
type SearchLimits struct {
	// MaxPatternBytes caps the pattern length.
	MaxPatternBytes int
	// MaxProgramSize caps the compiled regexp, in instructions. Go's
	// regexp takes time proportional to text times program size and
	// memory proportional to program size, so this bounds both. 5000
	// admits [a-z]{1000}-sized patterns.
	MaxProgramSize int
	// MaxLineWindow is the most bytes of a line returned as Match.Text
	// (and of each context line); a longer line is cut to a window
	// around the match. Minified bundles have lines of several MB.
	MaxLineWindow int
	// MaxWindowsPerLine is the most windows one long line shows: Text
	// around its first match, then Match.Windows around later matches
	// that no window before shows. A 2 MB one-line bundle holds useState
	// dozens of times; 5 windows of 512 bytes cost 2.6 KB, under a tenth
	// of a 32 KiB answer. The matches after the last window are counted
	// (Match.MoreInLine), up to MaxLineMatchesCounted.
	MaxWindowsPerLine int
	// MaxLineMatchesCounted caps Match.MoreInLine: counting runs the
	// pattern once per match, so a pattern matching every byte of a
	// multi-MB line stops at this count (Match.MoreInLineCapped).
	MaxLineMatchesCounted int
	// MaxOutputBytes caps the bytes of text returned (paths, lines and
	// context); the search stops with TruncatedBy "outputBytes".
	MaxOutputBytes int
	// Timeout caps the time of one search; the search stops with what it
	// found and TruncatedBy "timeout".
	Timeout time.Duration
	// DefaultMaxMatches is used when Query.MaxMatches is 0.
	DefaultMaxMatches int
	// MaxMatches is the largest Query.MaxMatches accepted.
	MaxMatches int
	// MaxContextLines is the largest Query.ContextLines accepted.
	MaxContextLines int
	// MaxSkippedListed caps Result.Skipped (FilesSkipped still counts all).
	MaxSkippedListed int
	// MaxFastWork bounds one uninterruptible regexp call: text bytes
	// times program size. Longer calls go through a reader that checks
	// the deadline every 2^20 steps, which loses the literal-prefix skip
	// of Go's regexp (about 100x slower for function\s+\w+Sync, no
	// slower for patterns without a literal prefix). Go's regexp runs
	// about 5-15 ns per unit, so 1<<25 keeps a call under about 0.5 s.
	MaxFastWork int64
}

// DefaultSearchLimits returns the limits used by pkgscope's API.
func DefaultSearchLimits() SearchLimits {
	return SearchLimits{
		MaxPatternBytes:   4096,
		MaxProgramSize:    5000,
		MaxLineWindow:     512,
		MaxWindowsPerLine: 5,
		// 1000 counts costs about 1 ms for a literal; an agent needs to
		// know "many", not the exact number, to decide to read the line.
		MaxLineMatchesCounted: 1000,
		MaxOutputBytes:        8 << 20,
		Timeout:               10 * time.Second,
		DefaultMaxMatches:     100,
		MaxMatches:            100_000,
		MaxContextLines:       20,
		MaxSkippedListed:      1000,
		MaxFastWork:           1 << 25,
	}
}

func (l SearchLimits) validate() error {
	if l.MaxPatternBytes <= 0 || l.MaxProgramSize <= 0 || l.MaxLineWindow < 16 || l.MaxOutputBytes <= 0 ||
		l.MaxWindowsPerLine < 1 || l.MaxLineMatchesCounted < 0 ||
		l.Timeout <= 0 || l.DefaultMaxMatches <= 0 || l.MaxMatches < l.DefaultMaxMatches ||
		l.MaxContextLines < 0 || l.MaxSkippedListed < 0 || l.MaxFastWork <= 0 {
		return fmt.Errorf("index: invalid SearchLimits %+v", l)
	}
	return nil
}

// Match is one matching line.
type Match struct {
	// File is the path of the file.
	File string
	// Line is the 1-based line number.
	Line int
	// Column is the 1-based byte column of the first match in the line.
	Column int
	// Text is the line without its newline (a trailing \r stays, as
	// ripgrep prints it), or, for a line over MaxLineWindow bytes, a
	// window of it around the first match.
	Text string
	// TextOffset is the byte offset in the line where Text starts: 0
	// unless Text is a window.
	TextOffset int
	// LineBytes is the length of the whole line.
	LineBytes int
	// Windows are, for a line over MaxLineWindow bytes, windows around
	// its later matches, each around the first match that the windows
	// before it (Text's too) do not show in full, at most
	// MaxWindowsPerLine-1.
	Windows []Window
	// MoreInLine counts the line's matches after the last window that
	// no window shows (at most MaxLineMatchesCounted, then
	// MoreInLineCapped is set); MoreColumn is the 1-based byte column of
	// the first of them.
	MoreInLine, MoreColumn int
	MoreInLineCapped       bool
	// Before and After are up to ContextLines lines around the match,
	// each cut to MaxLineWindow bytes from its start; BeforeBytes and
	// AfterBytes are their whole lengths (longer than the text for a line
	// that was cut).
	Before, After           []string
	BeforeBytes, AfterBytes []int
	// Count is, for a file Query.Tally chose, its number of matching
	// lines; Line is then 0 and the other fields empty.
	Count int
}

// Window is a part of a long line around one match.
type Window struct {
	// Column is the 1-based byte column of the match in the line.
	Column int
	// Text is the window, starting at byte TextOffset of the line.
	Text       string
	TextOffset int
}

// SkippedFile is a file not searched, with the reason.
type SkippedFile struct {
	Path   string
	Reason string // SkipBinary
}

// SkipBinary is the reason for a file with a NUL byte near its start.
const SkipBinary = "binary"

// Values of Result.TruncatedBy.
const (
	TruncMaxMatches        = "maxMatches"
	TruncMaxMatchesPerFile = "maxMatchesPerFile"
	TruncOutputBytes       = "outputBytes"
	TruncTimeout           = "timeout"
)

// Result is the answer to a Search.
type Result struct {
	// Matches are ordered by file path, then line.
	Matches []Match
	// FilesSearched counts the text files selected by the filter that the
	// search reached; FilesSkipped the binary files it passed over.
	FilesSearched, FilesSkipped int
	// Skipped lists the first MaxSkippedListed skipped files.
	Skipped []SkippedFile
	// Truncated is set when a cap cut the result. TruncatedBy names the
	// cap: a cap that stopped the whole search (maxMatches, outputBytes,
	// timeout) wins over maxMatchesPerFile.
	Truncated   bool
	TruncatedBy string
	// PerFileCut says MaxMatchesPerFile held back a file's later lines,
	// whatever TruncatedBy names.
	PerFileCut bool
	// With Query.CountRest, Lines and Files count the matching lines of
	// the files the search visited and the files holding them, and
	// CountedAll says it visited every file it would have without its
	// caps (no timeout or cancellation ended it first).
	Lines, Files int  `json:",omitempty"`
	CountedAll   bool `json:",omitempty"`
}

// Search greps the index. Matching lines are those ripgrep (rg -n) prints
// for the same pattern, where RE2 and ripgrep's dialect agree. A pattern
// error wraps ErrBadPattern, a bad field ErrBadQuery; a cancelled ctx
// returns what was found with ctx's error. A panic inside the search (a
// bug, or in Filter) is returned as an error.
//
// On an index opened with OpenStored, a content's text is read through
// its TextSource when the search reaches it; Timeout and ctx bound that
// wait as they bound the scan. A source's error (or a body that is not the
// content's text, wrapping ErrCorrupt) ends the search with what was found
// and an error that wraps it and names the file being read.
func (ix *Index) Search(ctx context.Context, q Query, lim SearchLimits) (res Result, err error) {
	if err := lim.validate(); err != nil {
		return Result{}, err
	}
	maxMatches := q.MaxMatches
	switch {
	case q.MaxMatches < 0 || q.MaxMatches > lim.MaxMatches:
		return Result{}, fmt.Errorf("maxMatches %d is outside [0, %d]: %w", q.MaxMatches, lim.MaxMatches, ErrBadQuery)
	case q.MaxMatchesPerFile < 0:
		return Result{}, fmt.Errorf("maxMatchesPerFile %d is negative: %w", q.MaxMatchesPerFile, ErrBadQuery)
	case q.MaxOutputBytes < 0:
		return Result{}, fmt.Errorf("maxOutputBytes %d is negative: %w", q.MaxOutputBytes, ErrBadQuery)
	case q.ContextLines < 0 || q.ContextLines > lim.MaxContextLines:
		return Result{}, fmt.Errorf("contextLines %d is outside [0, %d]: %w", q.ContextLines, lim.MaxContextLines, ErrBadQuery)
	case q.TallyMask != 0 && q.Classes == nil:
		// Ignored, the files it names would be listed line by line:
		// an answer that differs without an error.
		return Result{}, fmt.Errorf("tallyMask without classes: %w", ErrBadQuery)
	case maxMatches == 0:
		maxMatches = lim.DefaultMaxMatches
	}

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return Result{}, ErrClosed
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = Result{}, fmt.Errorf("index: search for %q: %v: %w", q.Pattern, r, errInternal)
		}
	}()
	p, err := q.Compiled.plan(q, lim)
	if err != nil {
		return Result{}, err
	}
	maxOut := lim.MaxOutputBytes
	if q.MaxOutputBytes > 0 {
		maxOut = min(maxOut, q.MaxOutputBytes)
	}
	s := &searcher{ix: ix, p: p, q: q, lim: lim, ctx: ctx, maxMatches: maxMatches, maxOut: maxOut, deadline: time.Now().Add(lim.Timeout), textCi: -1}
	defer s.release()
	units, err := q.Compiled.candidates(s)
	if err != nil {
		return Result{}, fmt.Errorf("index: %w", err)
	}
	s.run(units)
	s.res.CountedAll = q.CountRest && !s.stopped && !s.countCut
	if s.canceled != nil {
		return s.res, fmt.Errorf("index: search: %w", s.canceled)
	}
	if s.failed != nil {
		return s.res, fmt.Errorf("index: search: %w", s.failed)
	}
	return s.res, nil
}

type searcher struct {
	ix         *Index
	p          *plan
	q          Query
	lim        SearchLimits
	ctx        context.Context
	deadline   time.Time
	ticks      int
	maxMatches int
	maxOut     int    // the output bytes cap: MaxOutputBytes, the query's or the limit's
	group      bool   // the pattern's query is evaluated per group
	unitGroups bool   // the units scanned are groups, not blocks
	lit        []byte // literal prefilter, nil for none
	find       finder
	res        Result
	outBytes   int
	stopped    bool
	canceled   error
	failed     error // reading a content's text failed

	// bodyCtx, made at the first read through the index's TextSource,
	// ends with ctx or at the deadline; cancelBody releases it.
	bodyCtx    context.Context
	cancelBody context.CancelFunc
	// countCtx is bodyCtx ending at Query.CountUntil too, for the bodies
	// only a count reads.
	countCtx    context.Context
	cancelCount context.CancelFunc
	textCi      int    // the content whose text was read last, or -1
	textOfCi    []byte // and that text: files holding one body read it once
	units       unitSet
	classes     []int8 // Query.Classes' table for the index, or nil
	ahead       ahead  // the contents a Prefetcher is offered (prefetch.go)
	hits        []span // where the current file's literal hits can start (scanHits)
	// candCont marks the contents holding candidate units, with
	// Query.CandidatesOnly (nil: every content may hold one).
	candCont []bool
	// order is the files run visits, in order (nil: every file), and at
	// the place in it of the file being visited.
	order []int32
	at    int

	// The file being scanned.
	fi          int
	path        string
	text        []byte
	blo, bhi    int // its blocks
	fileMatches int
	fileDone    bool
	// counting: a CountRest search past its stop (stop), or recounting
	// the files MaxMatchesPerFile cut (cut; fileCut: this one), only
	// counts lines. countCut: CountUntil passed or a body could not be
	// read while counting: the count is not whole.
	counting, fileCut, countCut bool
	cut                         []int32
	tally                       bool // the file is counted, not listed (Query.Tally)
	curPos                      int  // a line start whose number is curLine
	curLine                     int
}

// candidates evaluates the trigram query and returns the units to scan:
// blocks or groups of the pattern's query, or, when a prefilter literal
// is set in group mode, the blocks holding the literal's trigrams within
// those groups (every match holds a hit of the literal, and a hit lies in
// such a block, so a multi-megabyte line is searched only where the
// literal can be).
func (s *searcher) candidates() (unitSet, error) {
	p, ix := s.p, s.ix
	s.group = !(p.maxLen >= 0 && p.maxLen <= ix.overlap+3)
	s.unitGroups = s.group
	if l := s.chooseLiteral(); l != "" {
		s.lit = []byte(l)
		s.find = newFinder(s.lit, &ix.freq)
	}
	if p.trig == nil {
		return unitSet{all: true}, nil
	}
	u, err := ix.eval(p.trig, s.group)
	if err != nil {
		return u, err
	}
	if !u.all && len(ix.stats.NotIndexed) > 0 {
		u = union(u, unitSet{ids: ix.unindexedUnits(s.group)})
	}
	if s.lit == nil || !s.group || len(s.lit) < 3 || len(s.lit) > ix.overlap+3 {
		return u, nil
	}
	lq := &csindex.Query{Op: csindex.QAnd}
	for i := 0; i+3 <= len(s.lit); i++ {
		lq.Trigram = append(lq.Trigram, string(s.lit[i:i+3]))
	}
	lb, err := ix.eval(lq, false)
	if err != nil || lb.all {
		return u, err
	}
	if len(ix.stats.NotIndexed) > 0 {
		lb = union(lb, unitSet{ids: ix.unindexedUnits(false)})
	}
	if !u.all {
		lb.ids = s.inGroups(lb.ids, u.ids)
	}
	s.unitGroups = false
	return lb, nil
}

// inGroups keeps the blocks whose group is in groups (both sorted).
func (s *searcher) inGroups(blocks, groups []uint32) []uint32 {
	out := blocks[:0]
	j := 0
	for _, b := range blocks {
		g := s.ix.blocks[b].group
		for j < len(groups) && groups[j] < g {
			j++
		}
		if j < len(groups) && groups[j] == g {
			out = append(out, b)
		}
	}
	return out
}

// chooseLiteral picks the prefilter literal whose rarest trigram has the
// shortest posting list: "Sync" rather than "function" for
// function\s+\w+Sync. Literals under 2 bytes hit too often to help.
func (s *searcher) chooseLiteral() string {
	if s.p.pure {
		return s.p.lits[0]
	}
	best, bestCost := "", -1
	for _, l := range s.p.lits {
		if len(l) < 2 {
			continue
		}
		cost := 1 << 40
		if len(l) < 3 {
			cost = 1 << 41
		}
		for i := 0; i+3 <= len(l); i++ {
			cost = min(cost, len(s.ix.postings(trigramKey(l[i:]))))
		}
		if bestCost < 0 || cost < bestCost || (cost == bestCost && len(l) > len(best)) {
			best, bestCost = l, cost
		}
	}
	return best
}

// tick reports whether the search must stop, checking the clock and ctx
// every 64 calls.
func (s *searcher) tick() bool {
	if s.stopped || s.fileDone {
		return true
	}
	s.ticks++
	if s.ticks&63 == 0 {
		s.checkTime()
	}
	return s.stopped
}

func (s *searcher) checkTime() {
	if err := s.ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			s.stop(TruncTimeout)
		} else {
			s.stopped = true
			s.canceled = err
		}
		return
	}
	now := time.Now()
	if now.After(s.deadline) {
		s.stop(TruncTimeout)
		return
	}
	if s.counting && !s.q.CountUntil.IsZero() && now.After(s.q.CountUntil) {
		s.countCut, s.stopped = true, true // out of counting time
	}
}

// stop ends the search for reason, or, with CountRest and a reason other
// than the timeout, ends what it returns and counts on (counting); the
// reason a counting search stops for after is not TruncatedBy, which
// names what cut its matches.
func (s *searcher) stop(reason string) {
	if s.counting {
		s.stopped = true
		return
	}
	s.res.Truncated = true
	s.res.TruncatedBy = reason
	if s.q.CountRest && reason != TruncTimeout {
		s.counting = true
		s.checkTime() // CountUntil may have passed already
		return
	}
	s.stopped = true
}

func (s *searcher) run(units unitSet) {
	s.visit(units)
	if s.q.CountRest {
		s.recountCut(units)
	}
}

// visit scans the files in order until the search stops.
func (s *searcher) visit(units unitSet) {
	ix := s.ix
	s.units = units
	if s.q.Classes != nil {
		s.classes = s.q.Classes.of(ix)
	}
	if s.q.CandidatesOnly && !units.all {
		s.candCont, s.order = s.q.Compiled.candidateFiles(s, units)
	}
	s.checkTime()
	n := len(ix.files)
	if s.order != nil {
		n = len(s.order)
	}
	for k := 0; k < n; k++ {
		if s.stopped {
			return
		}
		fi := k
		if s.order != nil {
			fi = int(s.order[k])
		}
		s.at = k
		ci := int(ix.files[fi].content)
		if !s.inClass(fi) || !s.candidate(ci) {
			continue
		}
		f := ix.conts[ci]
		lo, hi := ix.contBlocks(ci)
		mine := units.within(lo, hi)
		path := ""
		if s.q.Filter != nil {
			path = ix.filePath(fi)
			if !s.keep(fi, path) {
				continue
			}
		}
		if f.flags&fileBinary != 0 {
			if s.counting {
				continue // counted files are not the result's
			}
			s.res.FilesSkipped++
			if len(s.res.Skipped) < s.lim.MaxSkippedListed {
				if path == "" {
					path = ix.filePath(fi)
				}
				s.res.Skipped = append(s.res.Skipped, SkippedFile{Path: path, Reason: SkipBinary})
			}
			continue
		}
		if !s.counting {
			s.res.FilesSearched++
		}
		if (!units.all && len(mine) == 0) || lo == hi {
			continue
		}
		if !s.scanFile(fi, ci, path, mine) {
			return
		}
		if s.q.CountRest && s.fileMatches > 0 && !s.fileCut {
			s.res.Lines += s.fileMatches
			s.res.Files++
		}
		if s.tally && s.fileMatches > 0 && !s.stopped && !s.counting {
			if len(s.res.Matches) >= s.maxMatches {
				if s.stop(TruncMaxMatches); s.stopped {
					return
				}
				continue
			}
			if s.path == "" {
				s.path = ix.filePath(fi) // tallied by its class
			}
			s.add(Match{File: s.path, Count: s.fileMatches}, len(s.path)+64)
		}
	}
}

// scanFile scans file fi (content ci, path path or "" when not yet known)
// in its units mine; false when the search must stop.
func (s *searcher) scanFile(fi, ci int, path string, mine []uint32) bool {
	ix := s.ix
	lo, hi := ix.contBlocks(ci)
	text, ok := s.contText(ci, fi, path)
	if !ok {
		return false
	}
	s.fi, s.path, s.text, s.blo, s.bhi = fi, path, text, lo, hi
	s.fileMatches, s.fileDone, s.fileCut, s.curPos, s.curLine = 0, false, false, 0, 1
	s.tally = false
	if !s.counting {
		if s.classes != nil && s.q.TallyMask != 0 {
			k := s.classes[fi]
			s.tally = k >= 0 && s.q.TallyMask&(1<<k) != 0
		}
		if !s.tally && s.q.Tally != nil {
			if s.path == "" {
				s.path = ix.filePath(fi)
			}
			s.tally = s.q.Tally(s.path)
		}
	}
	if s.tick() {
		return false
	}
	switch {
	case s.lit != nil:
		s.hits = s.hitRanges(mine, s.units.all)
		s.scanHits(s.hits)
	case s.p.alpha != nil && s.p.minLen > 0:
		s.scanRuns(s.lineRanges(mine, s.units.all))
	default:
		s.scanLines(s.lineRanges(mine, s.units.all))
	}
	return true
}

// recountCut counts, once a CountRest search has done with its matches
// and the files past its stop, the lines of the files MaxMatchesPerFile cut
// (s.cut): each is scanned again whole, only counting. Counting a file's
// rest where the cut was would spend the search's own time, and a Timeout
// reached there would cut the matches the search returns.
func (s *searcher) recountCut(units unitSet) {
	if s.stopped {
		return
	}
	s.counting = true
	for _, fi := range s.cut {
		ci := int(s.ix.files[fi].content)
		lo, hi := s.ix.contBlocks(ci)
		if !s.scanFile(int(fi), ci, "", units.within(lo, hi)) || s.stopped {
			return
		}
		if s.fileMatches > 0 {
			s.res.Lines += s.fileMatches
			s.res.Files++
		}
	}
}

// candidateFiles marks the contents holding units (a search's candidates,
// with Query.CandidatesOnly) and returns them with the files holding
// those, in order: a search then visits its candidates alone, not each of
// the version's files (next 16.4.6: 8,711 files, 297 of them holding
// useRouter's candidates). The result is read only.
func candidateFiles(ix *Index, units unitSet) (cont []bool, order []int32) {
	cont = make([]bool, len(ix.conts))
	for _, u := range units.ids {
		cont[ix.blocks[u].file] = true
	}
	for ci, c := range cont {
		if c {
			order = append(order, ix.contFiles[ix.contFileAt[ci]:ix.contFileAt[ci+1]]...)
		}
	}
	slices.Sort(order)
	return cont, order
}

// candidate reports whether content ci is to be visited: always, unless
// Query.CandidatesOnly leaves out the contents with no candidate unit
// (or no text: binary and empty files).
func (s *searcher) candidate(ci int) bool {
	if !s.q.CandidatesOnly {
		return true
	}
	lo, hi := s.ix.contBlocks(ci)
	return lo < hi && (s.candCont == nil || s.candCont[ci])
}

// within returns the units of the content whose blocks are [lo, hi), or
// nil when u is all. Files sharing a body share its blocks, so the units
// of a file are found by search, not by walking units in order.
func (u unitSet) within(lo, hi int) []uint32 {
	if u.all {
		return nil
	}
	i := sort.Search(len(u.ids), func(i int) bool { return int(u.ids[i]) >= lo })
	j := i
	for j < len(u.ids) && int(u.ids[j]) < hi {
		j++
	}
	return u.ids[i:j]
}

// keep reports whether Query.Filter selects file fi (whose path is path),
// calling it once per file: a prefetch plan may have called it already.
// The filter's time counts in the search's: a file it drops ticks the
// clock as a searched one does.
func (s *searcher) keep(fi int, path string) bool {
	if k, ok := s.ahead.kept(fi); ok {
		return k
	}
	keep := s.q.Filter(path)
	if s.ticks++; s.ticks&63 == 0 {
		s.checkTime()
	}
	return keep
}

// contText returns the text of content ci, held by file fi (whose path
// is path, or "" when not yet known), or false when the search must stop:
// the wait for the index's TextSource passed the deadline, ctx ended, or
// the read failed (s.failed).
func (s *searcher) contText(ci, fi int, path string) ([]byte, bool) {
	if s.ix.src == nil {
		text, _ := s.ix.contText(s.ctx, ci) // a slice of the mapping: no error
		return text, true
	}
	if ci == s.textCi {
		return s.textOfCi, true
	}
	text, held, err := s.heldText(ci)
	if !held {
		ctx := s.readCtx()
		s.prefetch(ctx, ci, fi)
		text, err = s.ix.contText(ctx, ci)
	}
	if err != nil && s.counting {
		// A body only the count needed, not read by CountUntil or not at
		// all: the count ends short; what the search returns stands.
		s.countCut, s.stopped = true, true
		return nil, false
	}
	if err != nil {
		if s.bodyCtx != nil && s.bodyCtx.Err() != nil {
			// The source gave up because the search's time ran out or ctx
			// ended: the search ends as it would have in a scan.
			s.checkTime()
			if !s.stopped {
				s.stop(TruncTimeout)
			}
			return nil, false
		}
		if path == "" {
			path = s.ix.filePath(fi)
		}
		s.failed = fmt.Errorf("reading the text of %s: %w", path, err)
		s.stopped = true
		return nil, false
	}
	s.textCi, s.textOfCi = ci, text
	return text, true
}

// readCtx is the context a body is read with: it ends with the search's
// ctx or at its deadline, and, for a body only a CountRest search's count
// needs, at CountUntil.
func (s *searcher) readCtx() context.Context {
	if s.bodyCtx == nil {
		s.bodyCtx, s.cancelBody = context.WithDeadline(s.ctx, s.deadline)
	}
	if !s.counting || s.q.CountUntil.IsZero() {
		return s.bodyCtx
	}
	if s.countCtx == nil {
		s.countCtx, s.cancelCount = context.WithDeadline(s.bodyCtx, s.q.CountUntil)
	}
	return s.countCtx
}

// heldText is content ci's text when the index's source is a Prefetcher
// that holds its body (Prefetcher.Held), checked as contText checks a
// body, and whether it is held.
func (s *searcher) heldText(ci int) ([]byte, bool, error) {
	pf, ok := s.ix.src.(Prefetcher)
	if !ok {
		return nil, false, nil
	}
	b, ok := pf.Held(s.ix.contKey(ci))
	if !ok {
		return nil, false, nil
	}
	text, err := s.ix.bodyText(ci, b)
	return text, true, err
}

// release lets go of what the search holds past its end.
func (s *searcher) release() {
	if s.cancelCount != nil {
		s.cancelCount()
	}
	if s.cancelBody != nil {
		s.cancelBody()
	}
	s.text, s.textOfCi = nil, nil
}

// span is a byte range [a, b) of the current file.
type span struct{ a, b int }

func appendSpan(out []span, sp span) []span {
	if n := len(out); n > 0 && sp.a <= out[n-1].b {
		out[n-1].b = max(out[n-1].b, sp.b)
		return out
	}
	return append(out, sp)
}

// unitSpan returns the byte range of unit u.
func (s *searcher) unitSpan(u uint32) span {
	k := int(u)
	a := int(s.ix.blocks[k].start)
	if s.unitGroups {
		for k+1 < s.bhi && s.ix.blocks[k].flags&blockCont != 0 {
			k++
		}
	}
	return span{a, int(s.ix.blockEnd(k))}
}

// hitRanges returns where a prefilter literal hit can start: within a
// candidate block, or up to maxLen bytes after it, since the match that
// holds the hit starts in the block.
func (s *searcher) hitRanges(units []uint32, all bool) []span {
	n := len(s.text)
	if all {
		return []span{{0, n}}
	}
	ext := 0
	if !s.group && !s.p.pure {
		ext = s.p.maxLen
	}
	var out []span
	for _, u := range units {
		sp := s.unitSpan(u)
		sp.b = min(sp.b+ext, n)
		out = appendSpan(out, sp)
	}
	return out
}

// lineRanges returns the whole lines holding candidate units, each span
// from a line start to a line end (a newline's offset, or the text end).
func (s *searcher) lineRanges(units []uint32, all bool) []span {
	n := len(s.text)
	trim := func(b int) int {
		if b > 0 && s.text[b-1] == '\n' {
			return b - 1
		}
		return b
	}
	if all {
		return []span{{0, trim(n)}}
	}
	var out []span
	for _, u := range units {
		sp := s.unitSpan(u)
		sp.a = int(s.ix.blocks[u].lineStart)
		if s.unitGroups || s.ix.blocks[u].flags&blockCont == 0 {
			sp.b = trim(sp.b)
		} else {
			sp.b = s.lineEnd(sp.b)
		}
		// Spans of adjacent lines join: the next one starts just past the
		// newline that ends this one.
		if k := len(out); k > 0 && sp.a <= out[k-1].b+1 {
			out[k-1].b = max(out[k-1].b, sp.b)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// scanHits finds lines through a literal every match contains.
func (s *searcher) scanHits(ranges []span) {
	text, lit, n := s.text, s.lit, len(s.text)
	alpha := s.p.alpha
	skip := 0
	for _, r := range ranges {
		pos := max(r.a, skip)
		for pos < r.b && !s.tick() {
			end := min(r.b+len(lit)-1, n)
			if end-pos < len(lit) {
				break
			}
			i := s.find.index(text[pos:end])
			if i < 0 {
				break
			}
			h := pos + i
			switch {
			case s.p.pure:
				le := s.lineEnd(h + len(lit))
				if !s.counted() {
					s.emit(s.lineStart(h), le, h, h+len(lit))
				}
				pos = le + 1
			case alpha != nil:
				// Every match lies in a run of alphabet bytes, so the run
				// around the hit (plus the byte on each side, for ^, $ and
				// \b) decides it; the first run with a match holds the
				// line's first match.
				r0, r1 := h, h+len(lit)
				for r0 > 0 && alpha[text[r0-1]] {
					r0--
				}
				for r1 < n && alpha[text[r1]] {
					r1++
				}
				wa, wb := max(r0-1, 0), min(r1+1, n)
				ms, me, ok := s.exec(text[wa:wb])
				if !ok {
					pos = r1
					break
				}
				le := s.lineEnd(wa + me)
				if !s.counted() {
					s.emit(s.lineStart(wa+ms), le, wa+ms, wa+me)
				}
				pos = le + 1
			default:
				ls, le := s.lineStart(h), s.lineEnd(h+len(lit))
				if ms, me, ok := s.exec(text[ls:le]); ok {
					s.emit(ls, le, ls+ms, ls+me)
				}
				pos = le + 1
			}
			skip = pos
		}
	}
}

// scanRuns finds lines through the pattern's alphabet when it has no
// literal to look for: every match lies in a run of at least minLen
// alphabet bytes, so the regexp runs only on such runs (plus the byte on
// each side), and the first run with a match holds the line's first
// match. a[ab]{16}c then looks only at runs of 18 or more a, b and c.
func (s *searcher) scanRuns(ranges []span) {
	text, n := s.text, len(s.text)
	skip := 0
	for _, r := range ranges {
		pos := max(r.a, skip)
		for pos < r.b && !s.tick() {
			i, j := nextRun(text[pos:r.b], s.p.alpha, s.p.minLen)
			if i < 0 {
				break
			}
			i, j = pos+i, pos+j
			pos = j + 1 // text[j] is outside the alphabet (or the range end)
			wa, wb := max(i-1, 0), min(j+1, n)
			ms, me, ok := s.exec(text[wa:wb])
			if !ok {
				continue
			}
			ls, le := s.lineStart(wa+ms), s.lineEnd(wa+ms)
			s.emit(ls, le, wa+ms, wa+me)
			pos = le + 1
			skip = pos
		}
	}
}

// nextRun returns the first maximal run [i, j) of alphabet bytes in b at
// least m long, or -1, -1. b must not start inside a run (its first byte
// follows a byte outside the alphabet, or nothing). It looks at every m-th
// byte until one is in the alphabet: a run of m bytes must cover it.
func nextRun(b []byte, alpha *[256]bool, m int) (int, int) {
	for i := 0; i+m <= len(b); {
		k := i + m - 1
		if !alpha[b[k]] {
			i = k + 1
			continue
		}
		s := k
		for s > i && alpha[b[s-1]] {
			s--
		}
		e := k + 1
		for e < len(b) && alpha[b[e]] {
			e++
		}
		if e-s >= m {
			return s, e
		}
		i = e + 1
	}
	return -1, -1
}

// scanLines runs the regexp over spans of whole lines, in chunks of at
// most MaxFastWork/progLen bytes so that each call stays bounded. A
// pattern anchored at line starts runs once per line instead.
func (s *searcher) scanLines(ranges []span) {
	text := s.text
	if s.p.anch != nil {
		skip := 0
		for _, r := range ranges {
			for ls := max(r.a, skip); ls <= r.b && !s.tick(); ls = skip {
				le := min(s.lineEnd(ls), r.b)
				if ms, me, ok := s.execRe(s.p.anch, text[ls:le]); ok {
					s.emit(ls, le, ls+ms, ls+me)
				}
				skip = le + 1
			}
		}
		return
	}
	chunk := int(max(s.lim.MaxFastWork/int64(max(s.p.progLen, 1)), 4096))
	skip := 0
	for _, r := range ranges {
		pos := max(r.a, skip)
		for pos <= r.b && !s.tick() {
			e := r.b
			if e-pos > chunk {
				if i := bytes.LastIndexByte(text[pos:pos+chunk], '\n'); i >= 0 {
					e = pos + i
				} else {
					e = s.lineEnd(pos + chunk)
				}
			}
			ms, me, ok := s.exec(text[pos:e])
			if !ok {
				pos = e + 1
			} else {
				ms, me = pos+ms, pos+me
				ls := pos
				if i := bytes.LastIndexByte(text[pos:ms], '\n'); i >= 0 {
					ls = pos + i + 1
				}
				le := s.lineEnd(ms)
				s.emit(ls, le, ms, me)
				pos = le + 1
			}
			skip = pos
		}
	}
}

// lineStart returns the start of the line holding offset p.
func (s *searcher) lineStart(p int) int {
	k := s.blockOf(p)
	bs := int(s.ix.blocks[k].start)
	if i := bytes.LastIndexByte(s.text[bs:p], '\n'); i >= 0 {
		return bs + i + 1
	}
	return int(s.ix.blocks[k].lineStart)
}

// lineEnd returns the offset of the newline ending the line holding p,
// or the text length. A block cut mid-line holds no newline, so it jumps
// over such blocks instead of scanning a multi-megabyte line.
func (s *searcher) lineEnd(p int) int {
	n := len(s.text)
	if p >= n {
		return n
	}
	k := s.blockOf(p)
	for s.ix.blocks[k].flags&blockCont != 0 && k+1 < s.bhi {
		k++
	}
	p = max(p, int(s.ix.blocks[k].start))
	if i := bytes.IndexByte(s.text[p:], '\n'); i >= 0 {
		return p + i
	}
	return n
}

// blockOf returns the block of the current file holding offset p.
func (s *searcher) blockOf(p int) int {
	blocks := s.ix.blocks[s.blo:s.bhi]
	i := sort.Search(len(blocks), func(i int) bool { return int(blocks[i].start) > p })
	return s.blo + max(i-1, 0)
}

// lineNumber returns the 1-based number of the line starting at ls,
// counting newlines from the nearer of the last answer and the block start.
func (s *searcher) lineNumber(ls int) int {
	k := s.blockOf(ls)
	base, line := int(s.ix.blocks[k].start), int(s.ix.blocks[k].line)
	if s.curPos >= base && s.curPos <= ls {
		base, line = s.curPos, s.curLine
	}
	line += bytes.Count(s.text[base:ls], newline)
	s.curPos, s.curLine = ls, line
	return line
}

// counted counts a matching line when the search only counts the lines
// of the file (a tallied file, or a CountRest search past its caps), and
// reports whether it did: then its caller need not find where the line
// starts. That was a backward scan of up to a block for each line, a fifth
// of the count of next 16.4.6's useRouter, whose source maps are lines of
// megabytes.
func (s *searcher) counted() bool {
	if s.tally || s.counting {
		s.fileMatches++
		return true
	}
	return false
}

// emit records a match at [ms, me) on the line [ls, le).
func (s *searcher) emit(ls, le, ms, me int) {
	if s.counted() {
		return
	}
	if s.q.MaxMatchesPerFile > 0 && s.fileMatches >= s.q.MaxMatchesPerFile {
		s.res.Truncated, s.res.PerFileCut = true, true
		if s.res.TruncatedBy == "" {
			s.res.TruncatedBy = TruncMaxMatchesPerFile
		}
		if s.q.CountRest && !s.fileCut {
			s.fileCut = true
			s.cut = append(s.cut, int32(s.fi)) // recountCut counts it whole
		}
		s.fileDone = true
		return
	}
	if s.q.Skip != nil {
		if s.path == "" {
			s.path = s.ix.filePath(s.fi)
		}
		if s.q.Skip(s.path, s.lineNumber(ls), s.fileMatches+1) {
			s.fileMatches++
			return
		}
	}
	if s.path == "" {
		s.path = s.ix.filePath(s.fi)
	}
	if s.q.FromColumn != nil {
		if c := s.q.FromColumn(s.path, s.lineNumber(ls)); c > 1 {
			a, b, ok := 0, 0, false
			if ls+c-1 <= le {
				a, b, ok = s.nextMatch(le, ls+c-1)
			}
			if !ok {
				return
			}
			ms, me = a, b
		}
	}
	if len(s.res.Matches) >= s.maxMatches {
		s.stop(TruncMaxMatches)
		if s.counting {
			s.fileMatches++
		}
		return
	}
	m := Match{File: s.path, Line: s.lineNumber(ls), Column: ms - ls + 1, LineBytes: le - ls}
	m.Text, m.TextOffset = s.window(ls, le, ms, ls)
	size := len(m.File) + len(m.Text) + 64
	if le-ls > s.lim.MaxLineWindow {
		s.lineWindows(&m, ls, le, ms, me)
		for _, w := range m.Windows {
			size += len(w.Text) + 32
		}
	}
	if c := s.q.ContextLines; c > 0 {
		for a, i := ls, 0; i < c && a > 0; i++ {
			b := a - 1
			a = bytes.LastIndexByte(s.text[:b], '\n') + 1
			t := s.prefix(a, b)
			m.Before = append(m.Before, t)
			m.BeforeBytes = append(m.BeforeBytes, b-a)
			size += len(t) + 8
		}
		slices.Reverse(m.Before)
		slices.Reverse(m.BeforeBytes)
		for b, i := le, 0; i < c && b+1 < len(s.text); i++ {
			a := b + 1
			b = s.lineEnd(a)
			t := s.prefix(a, b)
			m.After = append(m.After, t)
			m.AfterBytes = append(m.AfterBytes, b-a)
			size += len(t) + 8
		}
	}
	if s.add(m, size) || s.counting {
		s.fileMatches++
	}
}

// add appends m, of size bytes, to the result unless it would pass
// MaxOutputBytes (then the search stops); it reports whether it did. The
// first match is always added, so a caller paging with a small
// Query.MaxOutputBytes gets on.
func (s *searcher) add(m Match, size int) bool {
	if len(s.res.Matches) > 0 && s.outBytes+size > s.maxOut {
		s.stop(TruncOutputBytes)
		return false
	}
	s.outBytes += size
	s.res.Matches = append(s.res.Matches, m)
	return true
}

// lineWindows gives m, the first match [ms, me) of the long line
// [ls, le), a window per later match that the windows before it do not
// show in full, up to MaxWindowsPerLine in all, then counts the matches
// left. Matches are found as Go's FindAll finds them: each the leftmost
// one starting at or after the end of the one before (one byte on, after
// an empty match), an empty one that abuts the match before dropped.
func (s *searcher) lineWindows(m *Match, ls, le, ms, me int) {
	shown := ls + m.TextOffset + len(m.Text) // the end of the last window
	last := me                               // the end of the match before
	for p := max(me, ms+1); p <= le; {
		a, b, ok := s.nextMatch(le, p)
		if !ok || a < p {
			return // a < p cannot be; it would loop
		}
		p = max(b, a+1)
		if a == b && a == last {
			continue // FindAll drops an empty match that abuts the one before
		}
		last = b
		switch {
		case b <= shown:
			continue // the window before shows it
		case len(m.Windows)+1 < s.lim.MaxWindowsPerLine:
			w := Window{Column: a - ls + 1}
			w.Text, w.TextOffset = s.window(ls, le, a, min(shown, a))
			m.Windows = append(m.Windows, w)
			shown = ls + w.TextOffset + len(w.Text)
			continue
		case m.MoreInLine == 0:
			m.MoreColumn = a - ls + 1
		}
		if m.MoreInLine >= s.lim.MaxLineMatchesCounted {
			m.MoreInLineCapped = true
			return
		}
		m.MoreInLine++
		if s.tick() {
			return
		}
	}
}

// nextMatch returns the leftmost match (of submatch p.col) of the line
// ending at le that starts at or after p, itself after the line start:
// the byte before p is the match's context (for ^, \b and wholeWord).
func (s *searcher) nextMatch(le, p int) (int, int, bool) {
	switch {
	case s.p.pure && s.lit != nil:
		return s.nextHit(le, p)
	case s.lit != nil && s.p.alpha != nil:
		return s.nextInRuns(le, p)
	case s.p.alpha != nil && s.p.minLen > 0:
		return s.nextInAlphaRuns(le, p)
	}
	return s.matchFrom(le, p)
}

// nextInAlphaRuns is nextMatch for a pattern with no literal but an
// alphabet every match lies in, at least minLen long (scanRuns' case):
// the regexp runs only on the runs of alphabet bytes long enough to hold
// a match, from p at the earliest. Running it over the rest of the line
// from each match, to count a bundle line's later matches, made next
// 16.4.6's [A-Z]{5}_[A-Z]{5} take 2.1 s against 0.15 s without the count.
func (s *searcher) nextInAlphaRuns(le, p int) (int, int, bool) {
	text, alpha, m := s.text, s.p.alpha, s.p.minLen
	// The run p is in, from p: a match may start there.
	e := p
	for e < le && alpha[text[e]] {
		e++
	}
	if e-p >= m {
		if a, b, ok := s.matchFrom(min(e+1, le), p); ok {
			return a, b, true
		}
	}
	for q := e + 1; q < le; { // text[q-1] is outside the alphabet
		i, j := nextRun(text[q:le], alpha, m)
		if i < 0 {
			return 0, 0, false
		}
		if a, b, ok := s.matchFrom(min(q+j+1, le), q+i); ok {
			return a, b, true
		}
		q += j + 1
	}
	return 0, 0, false
}

// matchFrom is nextMatch by running the regexp over the line from p.
func (s *searcher) matchFrom(le, p int) (int, int, bool) {
	a := p - 1
	ms, me, ok := s.exec(s.text[a:le])
	if !ok {
		return 0, 0, false
	}
	if a+ms >= p {
		return a + ms, a + me, true
	}
	// The leftmost match starts at the byte before p: it overlaps the
	// match before, or matched for want of its own context (^ at the
	// slice start). Look again for one behind that byte.
	ms, me, ok = s.execCol(s.p.afterRe(), s.p.col+1, s.text[a:le])
	if !ok {
		return 0, 0, false
	}
	return a + ms, a + me, true
}

// nextInRuns is nextMatch for a pattern with a literal every match holds
// and an alphabet every match lies in (scanHits' alpha case): the match
// lies in the run of alphabet bytes around a hit of the literal at or
// after p, so the regexp runs on those runs alone (from p at the
// earliest, with the byte on each side as context), the first run with a
// match holding it. Running it over the rest of each megabyte line, to
// count the matches after its windows, was two thirds of next 16.4.6's
// function\s+\w+Sync grep.
func (s *searcher) nextInRuns(le, p int) (int, int, bool) {
	text, alpha := s.text, s.p.alpha
	for q := p; q < le; {
		h, e, ok := s.nextHit(le, q)
		if !ok {
			return 0, 0, false
		}
		r0, r1 := h, e
		for r0 > p && alpha[text[r0-1]] {
			r0--
		}
		for r1 < le && alpha[text[r1]] {
			r1++
		}
		if a, b, ok := s.matchFrom(min(r1+1, le), r0); ok {
			return a, b, true
		}
		q = r1 + 1 // text[r1] is outside the alphabet, or the line's end
	}
	return 0, 0, false
}

// nextHit is nextMatch for a pure literal: its first hit in [p, le),
// looked for only where the index says a hit can start (s.hits, the
// file's candidate spans). Counting the matches after a long line's last
// window scanned the rest of the line: next 16.4.6's bundles hold
// useRouter in lines of megabytes, and that scan was two thirds of a warm
// grep's index time.
func (s *searcher) nextHit(le, p int) (int, int, bool) {
	n := len(s.lit)
	hits := s.hits
	i := sort.Search(len(hits), func(i int) bool { return hits[i].b+n-1 > p })
	for ; i < len(hits) && hits[i].a < le; i++ {
		a, b := max(hits[i].a, p), min(hits[i].b+n-1, le)
		if b-a < n {
			continue
		}
		if j := s.find.index(s.text[a:b]); j >= 0 {
			return a + j, a + j + n, true
		}
	}
	return 0, 0, false
}

// window returns the line [ls, le), or for a long line MaxLineWindow bytes
// of it starting a third of a window before the match at ms (but not
// before floor, where the window before ends), cut at UTF-8 boundaries,
// with its offset in the line.
func (s *searcher) window(ls, le, ms, floor int) (string, int) {
	w := s.lim.MaxLineWindow
	if le-ls <= w {
		return string(s.text[ls:le]), 0
	}
	a := max(ls, floor, ms-w/3)
	b := a + w
	if b > le {
		b = le
		a = b - w
	}
	a, b = s.runeAlign(a, b, ls, le)
	return string(s.text[a:b]), a - ls
}

// prefix returns the line [a, b) cut to MaxLineWindow bytes.
func (s *searcher) prefix(a, b int) string {
	if b-a > s.lim.MaxLineWindow {
		_, b = s.runeAlign(a, a+s.lim.MaxLineWindow, a, b)
	}
	return string(s.text[a:b])
}

// runeAlign moves a forward and b backward (by at most 3 bytes each, the
// longest UTF-8 tail) so that neither cuts a multi-byte character.
func (s *searcher) runeAlign(a, b, ls, le int) (int, int) {
	for i := 0; i < utf8.UTFMax-1 && a > ls && a < b && !utf8.RuneStart(s.text[a]); i++ {
		a++
	}
	for i := 0; i < utf8.UTFMax-1 && b < le && b > a && !utf8.RuneStart(s.text[b]); i++ {
		b--
	}
	return a, b
}

// exec finds the leftmost match of p.re in b (of submatch p.col) and
// returns its bounds. Calls whose bytes times program size exceed MaxFastWork read b
// through a reader that checks the deadline about every 2^20 instruction
// steps, so no call outlives the timeout by more than about 10 ms.
func (s *searcher) exec(b []byte) (int, int, bool) {
	return s.execRe(s.p.re, b)
}

// execRe is exec with another regexp of the same plan (p.anch).
func (s *searcher) execRe(re *regexp.Regexp, b []byte) (int, int, bool) {
	return s.execCol(re, s.p.col, b)
}

// execCol is execRe giving the bounds of submatch c.
func (s *searcher) execCol(re *regexp.Regexp, c int, b []byte) (int, int, bool) {
	if int64(len(b))*int64(s.p.progLen) <= s.lim.MaxFastWork {
		var loc []int
		if c == 0 {
			loc = re.FindIndex(b)
		} else {
			loc = re.FindSubmatchIndex(b)
		}
		if loc == nil {
			return 0, 0, false
		}
		return loc[2*c], loc[2*c+1], true
	}
	var loc []int
	interrupted := func() (stopped bool) {
		defer func() {
			if r := recover(); r != nil {
				if r != any(errInterrupted) {
					panic(r)
				}
				stopped = true
			}
		}()
		// Check the clock about every 2^20 instruction steps (~10 ms).
		rd := &deadlineReader{b: b, s: s, every: max(256, 1<<20/max(s.p.progLen, 1))}
		if c == 0 {
			loc = re.FindReaderIndex(rd)
		} else {
			loc = re.FindReaderSubmatchIndex(rd)
		}
		return false
	}()
	if interrupted || loc == nil {
		return 0, 0, false
	}
	return loc[2*c], loc[2*c+1], true
}

// errInternal wraps a panic recovered in Search: a bug, never the
// caller's fault. Tests and fuzzers look for it.
var errInternal = errors.New("internal error")

// errInterrupted is panicked by deadlineReader, through Go's regexp, and
// recovered in exec.
var errInterrupted = errors.New("interrupted")

// deadlineReader feeds a regexp from memory and stops it when the search
// must end.
type deadlineReader struct {
	b     []byte
	i     int
	count int
	every int // runes between checks
	s     *searcher
}

func (r *deadlineReader) ReadRune() (rune, int, error) {
	if r.i >= len(r.b) {
		return 0, 0, io.EOF
	}
	if r.count++; r.count >= r.every {
		r.count = 0
		r.s.checkTime()
		if r.s.stopped {
			panic(errInterrupted)
		}
	}
	c := r.b[r.i]
	if c < utf8.RuneSelf {
		r.i++
		return rune(c), 1, nil
	}
	ru, n := utf8.DecodeRune(r.b[r.i:])
	r.i += n
	return ru, n, nil
}
