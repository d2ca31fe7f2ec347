package explore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/pathglob"
	"github.com/pkgscope/pkgscope/internal/search"
	"github.com/pkgscope/pkgscope/internal/store"
)

// Searcher runs a grep over one stored version (internal/search).
type Searcher interface {
	Search(ctx context.Context, name, version string, q index.Query) (index.Result, error)
}

// GrepMatch is one matching line, or (SameBytesAs set) a file whose
// lines are those of a file given before: that entry has no line, column
// or text, so its JSON is {file, sameBytesAs, matchingLines}. (Its shape
// comes from omitzero, not a MarshalJSON: encoding/json re-marshals and
// compacts a Marshaler's output, and that made encoding a 32 KB grep
// answer ten times slower, half of a small warm grep's CPU.)
type GrepMatch struct {
	File string `json:"file"`
	Line int    `json:"line,omitzero"` // 1-based: 0 only in a same-bytes entry
	// Column is the 1-based byte column of the first match in the line.
	Column int `json:"column,omitzero"`
	// Text is the line, or, for a long line, a window of it around the
	// match starting at byte TextOffset of the line (read the line in full
	// with read's column windows). It is left out of the JSON for an empty
	// line, as in a same-bytes entry.
	Text       string `json:"text,omitzero"`
	TextOffset int    `json:"textOffset,omitempty"`
	LineBytes  int    `json:"lineBytes,omitempty"`
	// Windows show a long line's later matches, one window each (up to
	// the grep-windows-per-line setting, Text's included); MoreInLine
	// counts the matches after them that no window shows (at least that
	// many with MoreInLineCapped), the first at byte MoreColumn. MoreNext
	// is the grep that shows them, a window each, as many as its page
	// holds (its own next goes on along the line); the page's next goes
	// on to the following lines, as without it.
	Windows          []GrepWindow `json:"windows,omitempty"`
	MoreInLine       int          `json:"moreInLine,omitempty"`
	MoreColumn       int          `json:"moreColumn,omitempty"`
	MoreInLineCapped bool         `json:"moreInLineCapped,omitempty"`
	MoreNext         *Request     `json:"moreNext,omitempty"`
	Before           []string     `json:"before,omitempty"`
	After            []string     `json:"after,omitempty"`
	// SameBytesAs names a file given earlier in the answer (on this page
	// or an earlier one) whose bytes File has too: its MatchingLines
	// matching lines are that file's, not repeated. Such an entry has no
	// line, column or text.
	SameBytesAs   string `json:"sameBytesAs,omitempty"`
	MatchingLines int    `json:"matchingLines,omitempty"`
}

// GrepWindow is a window of a long line around one of its later matches.
type GrepWindow struct {
	Column     int    `json:"column"`
	Text       string `json:"text"`
	TextOffset int    `json:"textOffset"`
}

// cost is Cost(m), counted rather than encoded: a page weighs every match
// it takes, and json.Marshal of each was a sixth of a warm grep's CPU
// (three 0.187.0's WebGLRenderer, 207 matches a page). TestGrepMatchCost and
// FuzzGrepMatchCost hold it to Cost.
func (m GrepMatch) cost() int {
	n := len(`{"file":}`) + StringCost(m.File)
	num := func(name string, v int) { // ,"name":v, omitted when 0
		if v != 0 {
			n += len(name) + len(`,"":`) + digits(int64(v))
		}
	}
	num("line", m.Line)
	num("column", m.Column)
	if m.Text != "" {
		n += len(`,"text":`) + StringCost(m.Text)
	}
	strs := func(name string, l []string) { // ,"name":["a","b"], omitted when empty
		if len(l) > 0 {
			n += len(name) + len(`,"":[]`) + len(l) - 1
			for _, s := range l {
				n += StringCost(s)
			}
		}
	}
	num("textOffset", m.TextOffset)
	num("lineBytes", m.LineBytes)
	if len(m.Windows) > 0 {
		n += len(`,"windows":[]`) + len(m.Windows) - 1
		for _, w := range m.Windows {
			n += len(`{"column":,"text":,"textOffset":}`) + digits(int64(w.Column)) + StringCost(w.Text) + digits(int64(w.TextOffset))
		}
	}
	num("moreInLine", m.MoreInLine)
	num("moreColumn", m.MoreColumn)
	if m.MoreInLineCapped {
		n += len(`,"moreInLineCapped":true`)
	}
	if m.MoreNext != nil {
		n += len(`,"moreNext":`) + Cost(m.MoreNext) - 1
	}
	strs("before", m.Before)
	strs("after", m.After)
	if m.SameBytesAs != "" {
		n += len(`,"sameBytesAs":`) + StringCost(m.SameBytesAs)
	}
	num("matchingLines", m.MatchingLines)
	return n + 1
}

// cost is Cost(f), counted rather than encoded (as GrepMatch.cost).
func (f GrepFile) cost() int {
	n := len(`{"path":}`) + StringCost(f.Path) + 1
	if f.Count != 0 {
		n += len(`,"count":`) + digits(int64(f.Count))
	}
	return n
}

// SkippedFile is a file grep did not search, and why (e.g. "binary").
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Values of Request.OutputMode, as agents' grep tools name them.
const (
	OutputContent          = "content"
	OutputFilesWithMatches = "files_with_matches"
	OutputCount            = "count"
)

// GrepFile is one file of a files_with_matches or count answer.
type GrepFile struct {
	Path string `json:"path"`
	// Count is the file's matching lines (count mode).
	Count int `json:"count,omitempty"`
}

// GrepResult is the answer to grep. Files come in relevance order (type
// declarations first; see rank.go) unless sort is "path", then by line.
type GrepResult struct {
	Answer
	OutputMode string `json:"outputMode"`
	// Matches are the matching lines (content mode); Files the files
	// (files_with_matches and count modes).
	Matches []GrepMatch `json:"matches,omitempty"`
	Files   []GrepFile  `json:"files,omitempty"`
	// PageMatches is, in count mode, the matching lines of the files
	// this page lists, summed.
	PageMatches int `json:"pageMatches,omitempty"`
	// FilesSearched counts the text files include/exclude select;
	// FilesSkipped the binary ones, not searched (Skipped names the first
	// few, on the first page).
	FilesSearched int           `json:"filesSearched"`
	FilesSkipped  int           `json:"filesSkipped"`
	Skipped       []SkippedFile `json:"skipped,omitempty"`
	// Complete is set on jsDelivr answers: false when files the query
	// selected were not searched (the fetch budget ran out or a fetch
	// failed), with IncompleteReason naming the setting and
	// FilesNotSearched counting them.
	Complete         *bool  `json:"complete,omitempty"`
	IncompleteReason string `json:"incompleteReason,omitempty"`
	FilesNotSearched int    `json:"filesNotSearched,omitempty"`
	// Place is where a page of a cut content grep sits among all its
	// matching lines (grepplace.go); absent on an uncut answer.
	Place *GrepPlace `json:"place,omitempty"`
}

// ErrGrepUnavailable is answered by a Service built without a Searcher.
var ErrGrepUnavailable = errors.New("grep is not available on this mirror")

// maxSkippedListed is how many binary files a grep's first page names.
const maxSkippedListed = 20

// Grep searches the text files of a version through its trigram index, a
// page at a time (page.go). Its matches are in one total order: tier
// group, pass, tier (rank.go; one tier with sort "path"), path, line.
// Pass 0 holds the first perFile matches of each file, pass 1 the rest,
// so a file with hundreds of matches cannot fill the first page alone,
// and its rest still comes; the files an agent reads get both passes
// before generated ones (tierGroups).
func (s *Service) Grep(ctx context.Context, r Request) (*GrepResult, error) {
	return s.withPlace(ctx, r) // grepplace.go: the page's place among all matching lines
}

// grep is Grep; widen says whether an answer with no match runs the
// widenings its note reports (Service.widen runs them with widen off).
func (s *Service) grep(ctx context.Context, r Request, widen bool) (*GrepResult, error) {
	g, err := s.page(ctx, r, widen, false)
	if err != nil {
		return nil, err
	}
	return g.res, nil
}

// page is grep, giving the page it built (its answer is g.res). With
// count, a first content page has the grep's matching lines counted
// beside itself if it runs long enough (scheduleCount; its caller takes
// the count with g.place or ends it with g.stopCount).
func (s *Service) page(ctx context.Context, r Request, widen, count bool) (*grepPage, error) {
	r.Action = "grep"
	if s.searcher == nil {
		return nil, ErrGrepUnavailable
	}
	if r.Pattern == "" {
		return nil, &InputError{Field: "pattern", Err: errors.New("give a pattern (an RE2 regular expression, or a literal with fixedStrings)")}
	}
	if r.MaxMatches < 0 || r.MaxMatchesPerFile < 0 || deref(r.ContextLines) < 0 {
		return nil, &InputError{Field: "maxMatches", Err: errors.New("maxMatches, maxMatchesPerFile and contextLines must not be negative")}
	}
	if m := s.lim.MaxMatches; m > 0 && r.MaxMatches > m {
		return nil, &LimitError{Setting: "max-matches", Msg: fmt.Sprintf("maxMatches %d is above the most one page holds (%d); follow next for more", r.MaxMatches, m)}
	}
	if m := s.lim.MaxContextLines; m > 0 && deref(r.ContextLines) > m {
		return nil, &LimitError{Setting: "max-context-lines", Msg: fmt.Sprintf("contextLines %d is above the most one grep shows (%d)", deref(r.ContextLines), m)}
	}
	mode := r.OutputMode
	switch mode {
	case "":
		mode = OutputContent
	case OutputContent, OutputFilesWithMatches, OutputCount:
	default:
		return nil, &InputError{Field: "outputMode", Err: fmt.Errorf("unknown %q: use content, files_with_matches or count", mode)}
	}
	if r.Sort != "" && r.Sort != "relevance" && r.Sort != "path" {
		return nil, &InputError{Field: "sort", Err: fmt.Errorf("unknown %q: use relevance or path", r.Sort)}
	}
	cur, err := parseGrepCursor(r.Cursor)
	if err != nil {
		return nil, err
	}
	sel, err := grepFilter(r.Include, r.Exclude, s.lim.Glob)
	if err != nil {
		return nil, err
	}
	// A cold version's fill holds the store's writes for a waiting grep
	// until it is answered (search.ForGrep).
	b, o, a, err := s.start(search.ForGrep(ctx), &r, false)
	if err != nil {
		return nil, err
	}
	g := &grepPage{s: s, r: r, b: b, o: o, sel: sel, mode: mode, cur: cur, ctx: ctx,
		res: &GrepResult{Answer: a, OutputMode: mode}, compiled: new(index.Compiled)}
	g.scope()
	b.ReserveHeader(g.res.Answer, r)
	g.perFile = map[string]int{OutputContent: r.MaxMatchesPerFile, OutputFilesWithMatches: 1, OutputCount: 0}[mode]
	if mode == OutputContent && g.perFile == 0 {
		g.perFile = s.lim.MatchesPerFile
	}
	if count && r.Cursor == "" && mode == OutputContent {
		g.scheduleCount()
	}
	run := g.run
	if cur.Column > 0 {
		run = g.runLine
	}
	if err := run(); err != nil {
		g.stopCount()
		if errors.Is(err, index.ErrBadPattern) && !r.FixedStrings {
			return nil, fmt.Errorf("%w (to search for the text as written, set fixedStrings: true)", err)
		}
		return nil, err
	}
	if mode == OutputContent && g.res.Matches == nil {
		g.res.Matches = []GrepMatch{}
	}
	if len(g.res.Matches)+len(g.res.Files) == 0 && widen {
		var tried []Widening
		if g.res.Source == "" {
			tried = s.widen(ctx, r, g.res.Version, g.res.FilesSearched+g.res.FilesSkipped, len(g.o.Files))
		}
		NoMatchNote(r, &g.res.Answer, g.res.FilesSearched, g.res.FilesSkipped, len(g.o.Files), "this version", tried...)
	}
	return g, nil
}

// A Widening is what a grep that matched nothing matches with one of its
// restrictions lifted: the change (Try, as the agent would set it) and,
// when run, the files it matches in (at least that many with More) and
// the first in the answer's order.
type Widening struct {
	Try   string
	Ran   bool
	Files int
	More  bool
	First string
	apply func(*Request)
}

// widenFiles is how many matching files a widening looks for: enough to
// tell one stray match from a name used throughout, and a files search
// stops there (a count of every line of lucide-react's createLucideIcon,
// its 4,500 files, took 0.5 s; a no-match answer took 20 ms).
const widenFiles = 20

// widenings are the restrictions r leaves open to lift, in the order a
// note names them: operators read as text, case, whole words, filters.
// selected is how many of total files include/exclude selected.
func widenings(r Request, selected, total int) []Widening {
	var w []Widening
	if ops := operatorsIn(r.Pattern); ops != "" && !r.FixedStrings {
		w = append(w, Widening{Try: fmt.Sprintf("fixedStrings: true (the pattern is a regular expression, so its %s are operators, not text; or escape them with \\)", ops),
			apply: func(r *Request) { r.FixedStrings = true }})
	}
	if !r.CaseInsensitive && strings.ToLower(r.Pattern) != strings.ToUpper(r.Pattern) {
		w = append(w, Widening{Try: "caseInsensitive: true", apply: func(r *Request) { r.CaseInsensitive = true }})
	}
	if r.WholeWord {
		w = append(w, Widening{Try: "without wholeWord", apply: func(r *Request) { r.WholeWord = false }})
	}
	if len(r.Include) > 0 || len(r.Exclude) > 0 {
		w = append(w, Widening{Try: fmt.Sprintf("without include/exclude (they selected %d of the %d files)", selected, total),
			apply: func(r *Request) { r.Include, r.Exclude = nil, nil }})
	}
	return w
}

// widen runs, for a package grep that matched nothing, each widening the
// request leaves open as a files_with_matches grep of the same version
// (up to widenFiles files), so the note
// can say what each would find instead of only naming it: an agent told
// "with caseInsensitive: true it matches in 3 files (first dist/index.d.ts)" fixes
// its pattern in one step, and one told that nothing matches either way
// stops retrying. Each is one more search of the version's index,
// bounded like any grep (at most four, and only when nothing matched); a
// widening that fails is reported as not run.
func (s *Service) widen(ctx context.Context, r Request, version string, selected, total int) []Widening {
	if r.Cursor != "" {
		return nil
	}
	w := widenings(r, selected, total)
	for i := range w {
		p := r
		w[i].apply(&p)
		p.Version, p.Cursor, p.OutputMode, p.MaxBytes, p.MaxMatches = version, "", OutputFilesWithMatches, 0, widenFiles
		res, err := s.grep(ctx, p, false)
		if err != nil {
			continue
		}
		w[i].Ran, w[i].Files, w[i].More = true, len(res.Files), res.Truncated
		if len(res.Files) > 0 {
			w[i].First = res.Files[0].Path
		}
	}
	return w
}

// regexpOperators are the pattern bytes that are operators in a regexp
// but often meant as text ("$emit", "foo?.bar", "[key]"). '.' is left
// out: it matches a dot too, so escaping it only narrows a search.
const regexpOperators = "$^*+?()[]{}|"

// NoMatchNote turns a grep that found nothing (a package's or a
// project's: where names it) into the next thing to try; searched and
// skipped are the files include/exclude selected, of total. An agent
// that greps for a name it guessed (an icon, an export) and reads "0
// matching lines" alone tends to conclude the name exists elsewhere or to
// retry the same search; it should widen the search the ways the request
// allows, or look at what the package does have. tried are the widenings
// the caller ran (Service.widen): the note says what those found, and
// names the others, each one that is open for this request (a filter that
// was given, an option that was not set). The caller calls it for an
// answer with no match; it notes nothing on a cut answer, a later page or
// when no file was searched.
func NoMatchNote(r Request, res *Answer, searched, skipped, total int, where string, tried ...Widening) {
	if res.Truncated || searched == 0 || r.Cursor != "" {
		return
	}
	ran := map[string]Widening{}
	for _, w := range tried {
		if w.Ran {
			ran[w.Try] = w
		}
	}
	var found, none, try []string
	for _, w := range widenings(r, searched+skipped, total) {
		t, ok := ran[w.Try]
		switch {
		case !ok:
			try = append(try, w.Try)
		case t.Files == 0 && !t.More:
			none = append(none, as(strings.SplitN(w.Try, " (", 2)[0]))
		default:
			atLeast := ""
			if t.More {
				atLeast = "at least "
			}
			found = append(found, fmt.Sprintf("%s it matches in %s%s (first %s)", as(w.Try), atLeast,
				english.Count(t.Files, "file"), t.First))
		}
	}
	if len(found) > 0 {
		res.Note("no match in %s as asked; %s", english.Count(searched, "file"), strings.Join(found, "; "))
		return
	}
	either := ""
	if len(none) > 0 {
		either = fmt.Sprintf(" (nor %s)", strings.Join(none, ", nor "))
	}
	try = append(try, "a shorter part of the name")
	res.Note("no match in %s%s: the name may not exist in %s. Try %s; or list/glob the folder that would hold it to see the names it has",
		english.Count(searched, "file"), either, where, strings.Join(try, ", "))
}

// as phrases a widening as a condition: "with caseInsensitive: true",
// "without wholeWord".
func as(try string) string {
	if strings.HasPrefix(try, "without ") {
		return try
	}
	return "with " + try
}

// operatorsIn lists the unescaped regexp operators in pattern, each
// once, quoted: "'$', '('".
func operatorsIn(pattern string) string {
	var ops []string
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '\\' {
			i++ // an escaped byte is text already
			continue
		}
		if q := fmt.Sprintf("'%c'", c); strings.IndexByte(regexpOperators, c) >= 0 && !slices.Contains(ops, q) {
			ops = append(ops, q)
		}
	}
	return strings.Join(ops, ", ")
}

// grepFilter compiles include and exclude as ripgrep reads -g: a glob
// without a slash matches a file or folder name at any depth ("*.d.ts" is
// "**/*.d.ts", "node_modules" every file below such a folder), one with a
// slash the path from the package root.
func grepFilter(include, exclude []string, lim pathglob.Limits) (func(string) bool, error) {
	var globs []string
	add := func(neg string, p string) {
		p = strings.TrimPrefix(p, "./")
		switch {
		case strings.HasPrefix(p, "/"):
			globs = append(globs, neg+p[1:], neg+p[1:]+"/**")
		case strings.HasSuffix(p, "/") && !strings.Contains(strings.TrimSuffix(p, "/"), "/"):
			globs = append(globs, neg+"**/"+p+"**")
		case !strings.Contains(p, "/"):
			globs = append(globs, neg+"**/"+p, neg+"**/"+p+"/**")
		default:
			globs = append(globs, neg+p, neg+strings.TrimSuffix(p, "/")+"/**")
		}
	}
	for _, p := range include {
		add("", p)
	}
	for _, p := range exclude {
		add("!", p)
	}
	lim.MaxPatterns *= 2 // each glob is two patterns (the path, and what is below it)
	m, err := pathglob.Compile(globs, lim)
	if err != nil {
		return nil, &InputError{Field: "include", Err: err}
	}
	if m.Empty() {
		return func(string) bool { return true }, nil
	}
	return m.Match, nil
}

// grepCursor is where a grep page stopped: after line Line of File in
// (Pass, Tier), Deferred saying pass 0 left matches for pass 1. Line
// wholeFile means all of File was given. A cursor with a Column is a
// long line's matches from that column on (GrepMatch.MoreNext), a page
// of its own beside the grep's.
type grepCursor struct {
	Pass, Tier int
	Deferred   bool
	File       string
	Line       int
	Column     int
}

const wholeFile = math.MaxInt32

func (c grepCursor) String() string {
	if c.Column > 0 {
		return fmt.Sprintf("gl%d.%d:%s", c.Line, c.Column, c.File)
	}
	d := 0
	if c.Deferred {
		d = 1
	}
	return fmt.Sprintf("g%d.%d.%d.%d:%s", c.Pass, c.Tier, d, c.Line, c.File)
}

func parseGrepCursor(s string) (grepCursor, error) {
	if s == "" {
		return grepCursor{}, nil
	}
	bad := &InputError{Field: "cursor", Err: errors.New("not a grep cursor: send the next request of a grep answer as it was given")}
	if rest, ok := strings.CutPrefix(s, "gl"); ok {
		head, file, ok := strings.Cut(rest, ":")
		l, c, ok2 := strings.Cut(head, ".")
		line, err1 := strconv.Atoi(l)
		col, err2 := strconv.Atoi(c)
		if !ok || !ok2 || err1 != nil || err2 != nil || line < 1 || col < 1 || file == "" {
			return grepCursor{}, bad
		}
		return grepCursor{File: file, Line: line, Column: col}, nil
	}
	head, file, ok := strings.Cut(strings.TrimPrefix(s, "g"), ":")
	f := strings.Split(head, ".")
	if !ok || !strings.HasPrefix(s, "g") || len(f) != 4 {
		return grepCursor{}, bad
	}
	var n [4]int
	for i, x := range f {
		v, err := strconv.Atoi(x)
		if err != nil || v < 0 {
			return grepCursor{}, bad
		}
		n[i] = v
	}
	if n[0] > 1 || n[1] >= numTiers || n[2] > 1 {
		return grepCursor{}, bad
	}
	return grepCursor{Pass: n[0], Tier: n[1], Deferred: n[2] == 1, Line: n[3], File: file}, nil
}

// grepPage builds one page of a grep.
type grepPage struct {
	s       *Service
	ctx     context.Context
	r       Request
	b       *Budget
	o       *Opened
	sel     func(string) bool
	mode    string
	cur     grepCursor
	perFile int
	res     *GrepResult
	// sc holds the selected text files' tiers and the files with the
	// same bytes as one before them (scope.go), shared with other pages;
	// fold says whether those are folded (content mode, a stored version).
	sc    *grepScope
	fold  bool
	taken int // matches on this page
	// compiled is the pattern compiled once for the page's index calls
	// (a tier and pass each).
	compiled *index.Compiled
	// A first page's count (scheduleCount): tc, what it counted; tierCounts
	// says the page counts the tiers it searches; countUntil ends the
	// counting (grep-count-time; zero: none); countAt is when it starts a
	// count beside itself (zero: never), and beside that count once
	// started.
	tc         *tierCount
	tierCounts bool
	countUntil time.Time
	countAt    time.Time
	beside     *besideCount
}

// scope counts the files include/exclude select and ranks them. A
// fallback's files are not ranked: its fetch budget is per search, so one
// search in path order keeps it what it says; its listing cannot tell
// binary files, so its counts are its search's (search).
func (g *grepPage) scope() {
	if g.o.fromElsewhere() {
		// A fallback's files are fetched within a budget: the first of
		// two alike may go unsearched, so its copies are not folded.
		g.sc = &grepScope{files: map[string]scoped{}}
		for _, f := range g.o.Files {
			if g.sel(f.Path) {
				g.sc.files[f.Path] = scoped{tier: tierDeclaration}
				g.sc.inTier[tierDeclaration]++
			}
		}
	} else {
		g.sc = g.s.scopeOf(g.o, g.r.Include, g.r.Exclude, g.sel, g.r.Sort == "path")
		g.fold = g.mode == OutputContent
		g.res.FilesSearched, g.res.FilesSkipped = g.sc.searched, g.sc.skipped
		if g.r.Cursor == "" {
			g.res.Skipped = slices.Clip(g.sc.skippedListed) // shared: an append copies
		}
	}
	if len(g.sc.files)+g.res.FilesSkipped == 0 && len(g.r.Include)+len(g.r.Exclude) > 0 {
		g.res.Note("include/exclude selected none of the %d files; a glob without '/' matches file names in any folder (e.g. '*.d.ts'), one with '/' the path from the package root (e.g. 'dist/**/*.js')", len(g.o.Files))
	}
}

// search runs q through the chain: the index, or the fallback for a
// version it answered (then the answer says so, with the fallback's own
// counts, since its listing cannot tell binary files).
func (g *grepPage) search(q index.Query) (index.Result, error) {
	sr, err := g.s.pkgs.Search(g.ctx, g.o, q)
	if err != nil {
		return index.Result{}, err
	}
	g.o = sr.Version // the stored version, when a cold fallback answer gave way to the fill
	g.res.Source = sr.Version.Source
	if !sr.Version.fromElsewhere() {
		return sr.Result, nil
	}
	g.res.FilesSearched, g.res.FilesSkipped = sr.Result.FilesSearched, sr.Result.FilesSkipped
	if g.r.Cursor == "" {
		g.res.Skipped = nil
		for _, sk := range sr.Result.Skipped[:min(len(sr.Result.Skipped), maxSkippedListed)] {
			g.res.Skipped = append(g.res.Skipped, SkippedFile{Path: sk.Path, Reason: sk.Reason})
		}
	}
	complete := sr.Complete && (g.res.Complete == nil || *g.res.Complete)
	g.res.Complete = &complete
	if !sr.Complete {
		g.res.IncompleteReason = sr.Reason
		g.res.FilesNotSearched += sr.FilesNotSearched
	}
	return sr.Result, nil
}

// query is the index query for one (pass, tier) after file:line.
func (g *grepPage) query(pass, tier int, file string, line, maxMatches int) index.Query {
	r := g.r
	q := index.Query{Pattern: r.Pattern, CaseInsensitive: r.CaseInsensitive, FixedStrings: r.FixedStrings,
		WholeWord: r.WholeWord, MaxMatches: maxMatches, Compiled: g.compiled,
		CandidatesOnly: !g.o.fromElsewhere()} // the files are counted by scope
	if g.mode == OutputContent {
		q.ContextLines = deref(r.ContextLines)
		// The index's size of a match is within a few dozen bytes of what
		// the page counts for it (its JSON, or its MCP text): a search
		// stops a quarter past what the page can hold, not at its
		// maxMatches. A bundle tier's search for next 16.4.6's
		// function\s+\w+Sync made 146 matches, with their windows, for a
		// page that took 23. Should the page still have room, it goes on
		// after the last match as after any cut call.
		// A page past its budget (its first item is always taken) still
		// gets the search's first match.
		q.MaxOutputBytes = max(g.b.Left()+g.b.Left()/4, 1)
	}
	// The files of the tier, without the copies that pass 1 leaves out
	// (their lines are given once, in pass 0), from the cursor on.
	var from func(string) bool
	if file != "" {
		from = func(p string) bool {
			if line == wholeFile {
				return p > file
			}
			return p >= file
		}
	}
	var set tierSet
	set[tier] = true
	g.selectFiles(&q, set, pass == 0 || !g.fold, from)
	if pass == 0 {
		q.MaxMatchesPerFile = g.perFile
		if g.fold && g.sc.copies > 0 {
			q.TallyMask = 1 << fileClass(tier, true) // the tier's copies (a folded scope has classes)
		}
	}
	perFile := g.perFile
	if (pass == 1 && perFile > 0) || (file != "" && line != wholeFile) {
		q.Skip = func(p string, l, n int) bool {
			return (pass == 1 && n <= perFile) || (p == file && l <= line)
		}
	}
	if g.mode == OutputCount && q.Skip == nil {
		// The index counts each file's lines itself (one Match with
		// Count): no line's number, text or windows is made only to be
		// counted. Making them, next 16.4.6's function\s+\w+Sync spent
		// 45 of its first page's 61 ms on the windows of lines it counted.
		q.Tally = func(string) bool { return true }
	}
	return q
}

// selectFiles makes q search the scope's files in the tiers of set, with
// their copies (a sameAs) or without, that from keeps (nil: all of them).
// A stored version's scope selects them by class (index.Classes, a table
// made once per index), asking from only about those; a fallback's, whose
// Filter also chooses the files it fetches, by path.
func (g *grepPage) selectFiles(q *index.Query, set tierSet, copies bool, from func(string) bool) {
	if g.sc.classes != nil {
		q.Classes, q.ClassMask, q.Filter = g.sc.classes, classMask(set, copies), from
		return
	}
	q.Filter = func(p string) bool {
		sf, ok := g.sc.files[p]
		return ok && set[sf.tier] && (copies || sf.sameAs == "") && (from == nil || from(p))
	}
}

// callMatches bounds one index call: what the page can still hold.
func (g *grepPage) callMatches() int {
	n := g.b.Left()/48 + 1 // a match costs at least ~48 bytes of JSON
	if g.mode == OutputCount {
		n = g.countMatches()
	}
	if g.r.MaxMatches > 0 {
		n = min(n, g.r.MaxMatches-g.taken+1)
	}
	if m := g.s.lim.MaxMatches; m > 0 {
		n = min(n, m)
	}
	return max(n, 1)
}

// countMatches bounds an index call that counts files (Query.Tally, one
// match each): the searcher's cap alone (index.DefaultSearchLimits').
func (g *grepPage) countMatches() int {
	if m := g.s.lim.MaxMatches; m > 0 {
		return min(m, 100_000)
	}
	return 100_000
}

// run fills the page, in order from the cursor: for each group of tiers
// (tierGroups), pass 0 then pass 1 over its tiers.
func (g *grepPage) run() error {
	c := g.cur
	lastPass := 0
	if g.mode == OutputContent && g.perFile > 0 {
		lastPass = 1
	}
	for _, grp := range tierGroups {
		if c.Tier >= grp[1] {
			continue // the cursor is past this group
		}
		resuming := c.Tier >= grp[0]
		pass0, deferred := 0, false
		if resuming {
			pass0, deferred = c.Pass, c.Deferred
		}
		for pass := pass0; pass <= lastPass; pass++ {
			if pass == 1 && !deferred {
				break
			}
			tier0 := grp[0]
			if resuming && pass == c.Pass {
				tier0 = c.Tier
			}
			for tier := tier0; tier < grp[1]; tier++ {
				if g.sc.inTier[tier] == 0 {
					continue
				}
				file, line := "", 0
				if resuming && pass == c.Pass && tier == c.Tier {
					file, line = c.File, c.Line
				}
				cut := func(why string) {
					next := grepCursor{Pass: pass, Tier: tier, Deferred: deferred, File: file, Line: line}
					g.res.Cut(why, continued(g.r, &g.res.Answer, next.String()))
				}
				for {
					g.startCount()
					q := g.query(pass, tier, file, line, g.callMatches())
					// The first search of a tier counts all its lines for
					// the page's place, unless the count beside took it.
					counts := g.tierCounts && pass == 0 && file == "" && g.tc.claim(tier)
					if counts {
						q.CountRest, q.CountUntil = true, g.countUntil
					}
					ir, err := g.search(q)
					if err != nil {
						return err
					}
					if counts {
						var set tierSet
						set[tier] = true
						g.tc.add(set, ir.Lines, ir.Files, ir.CountedAll)
					}
					if pass == 0 && g.perFile > 0 && (ir.PerFileCut || (ir.Truncated && ir.TruncatedBy != index.TruncOutputBytes)) {
						// Lines were held back for pass 1, or may have been
						// past where maxMatches stopped the call. A call
						// stopped at the page's bytes held back only what
						// PerFileCut says: the page is full there.
						deferred = true
					}
					var full string
					if g.mode == OutputCount {
						full, err = g.takeCounts(ir, &file, &line)
					} else {
						full = g.takeMatches(ir, &file, &line)
					}
					if full != "" {
						cut(full)
						return nil
					}
					switch ir.TruncatedBy {
					case index.TruncTimeout:
						cut(index.TruncTimeout)
						return nil
					case index.TruncMaxMatches, index.TruncOutputBytes:
						continue // the call's own bound: go on after the last match
					}
					break
				}
			}
			if pass == 0 && deferred && g.r.MaxMatchesPerFile > 0 && lastPass == 1 {
				// An explicit per-file cap ends the page after the first pass:
				// the caller asked for an overview; next brings the rest.
				next := grepCursor{Pass: 1, Tier: grp[0], Deferred: true}
				g.res.Cut(index.TruncMaxMatchesPerFile, continued(g.r, &g.res.Answer, next.String()))
				return nil
			}
		}
	}
	return nil
}

// runLine fills a page with one long line's matches from the cursor's
// column on: one entry, its windows those of as many searches (each
// from the last one's MoreColumn) as the page holds, window by window.
// The page's first window is always taken, so paging advances; when a
// window does not fit, the entry's MoreColumn is its match, and its
// MoreInLine counts at least the windows left and what the search
// counted after them.
func (g *grepPage) runLine() error {
	c := g.cur
	g.res.FilesSearched, g.res.FilesSkipped, g.res.Skipped = 1, 0, nil
	var gm *GrepMatch
	for col := c.Column; ; {
		q := index.Query{Pattern: g.r.Pattern, CaseInsensitive: g.r.CaseInsensitive, FixedStrings: g.r.FixedStrings,
			WholeWord: g.r.WholeWord, MaxMatches: 1, Compiled: g.compiled, CandidatesOnly: !g.o.fromElsewhere(),
			Filter:     func(p string) bool { return p == c.File },
			Skip:       func(_ string, l, _ int) bool { return l != c.Line },
			FromColumn: func(string, int) int { return col }}
		ir, err := g.search(q)
		if err != nil {
			return err
		}
		if len(ir.Matches) == 0 {
			if ir.TruncatedBy == index.TruncTimeout {
				g.res.Cut(index.TruncTimeout, g.lineNext(c.File, c.Line, col))
				return nil
			}
			break
		}
		m := grepMatch(ir.Matches[0])
		ws := append([]GrepWindow{{Column: m.Column, Text: m.Text, TextOffset: m.TextOffset}}, m.Windows...)
		full := false
		for i, w := range ws {
			if gm == nil {
				first := GrepMatch{File: m.File, Line: m.Line, Column: w.Column, Text: w.Text, TextOffset: w.TextOffset, LineBytes: m.LineBytes}
				g.b.Take(max(Cost(first), textCost(first))) // the first always fits
				gm = &first
				continue
			}
			// As textCost counts a window's line.
			if !g.b.Take(max(Cost(w), len(m.File)+len(w.Text)+56)) {
				gm.MoreInLine, gm.MoreColumn, gm.MoreInLineCapped = len(ws)-i+m.MoreInLine, w.Column, true
				full = true
				break
			}
			gm.Windows = append(gm.Windows, w)
		}
		if full {
			break
		}
		gm.MoreInLine, gm.MoreColumn, gm.MoreInLineCapped = m.MoreInLine, m.MoreColumn, m.MoreInLineCapped
		if gm.MoreInLine == 0 {
			break
		}
		col = gm.MoreColumn
	}
	if gm == nil {
		g.res.Note("line %d of %s has no match from column %d", c.Line, c.File, c.Column)
		return nil
	}
	if gm.MoreInLine > 0 {
		gm.MoreNext = g.lineNext(gm.File, gm.Line, gm.MoreColumn)
		g.res.Cut(TruncMaxBytes, gm.MoreNext)
	}
	g.res.Matches = append(g.res.Matches, *gm)
	return nil
}

// lineNext is the grep that shows line of file's matches from column on
// (runLine): the pattern and how it matches, nothing that selects files.
func (g *grepPage) lineNext(file string, line, column int) *Request {
	r := g.r
	next := &Request{Action: "grep", Pattern: r.Pattern, CaseInsensitive: r.CaseInsensitive, FixedStrings: r.FixedStrings,
		WholeWord: r.WholeWord, MaxBytes: r.MaxBytes}
	return continued(*next, &g.res.Answer, grepCursor{File: file, Line: line, Column: column}.String())
}

// takeMatches adds ir's matches (content) or files (files_with_matches)
// while the page lasts, moving file:line past each; it returns why the
// page is full, or "".
func (g *grepPage) takeMatches(ir index.Result, file *string, line *int) string {
	for _, mt := range ir.Matches {
		if g.r.MaxMatches > 0 && g.taken == g.r.MaxMatches {
			return index.TruncMaxMatches
		}
		var cost int
		var gm GrepMatch
		if g.mode == OutputContent {
			gm = grepMatch(mt)
			if gm.MoreInLine > 0 {
				gm.MoreNext = g.lineNext(gm.File, gm.Line, gm.MoreColumn)
			}
			if mt.Count > 0 {
				gm = GrepMatch{File: mt.File, SameBytesAs: g.sc.files[mt.File].sameAs, MatchingLines: mt.Count}
			}
			cost = max(gm.cost(), textCost(gm))
			for g.b.items == 0 && cost > g.b.Left() && len(gm.Windows) > 0 {
				// The page's first item is always taken: a long line's
				// windows past the budget go to its moreNext instead.
				w := gm.Windows[len(gm.Windows)-1]
				gm.Windows = gm.Windows[:len(gm.Windows)-1]
				gm.MoreInLine, gm.MoreColumn, gm.MoreInLineCapped = gm.MoreInLine+1, w.Column, true
				gm.MoreNext = g.lineNext(gm.File, gm.Line, gm.MoreColumn)
				cost = max(gm.cost(), textCost(gm))
			}
		} else {
			cost = GrepFile{Path: mt.File}.cost()
		}
		if !g.b.Take(cost) {
			return TruncMaxBytes
		}
		if g.mode == OutputContent {
			g.res.Matches = append(g.res.Matches, gm)
		} else {
			g.res.Files = append(g.res.Files, GrepFile{Path: mt.File})
		}
		g.taken++
		*file, *line = mt.File, mt.Line
		if mt.Count > 0 {
			*line = wholeFile
		}
	}
	return ""
}

// sameBytes maps each file of files that inFile selects (with its tier)
// to the first file, in tier then path order, with the same bytes (its
// hash), when that is another file. Both files hold the same matching
// lines, so an answer gives them once, under the first.
func sameBytes(files []store.File, inFile func(string) (int, bool)) map[string]string {
	type first struct {
		path string
		tier int
	}
	firsts := map[store.Hash]first{}
	var zero store.Hash
	for _, f := range files {
		t, ok := inFile(f.Path)
		if !ok || f.Hash == zero {
			continue
		}
		if fs, seen := firsts[f.Hash]; !seen || t < fs.tier || (t == fs.tier && f.Path < fs.path) {
			firsts[f.Hash] = first{f.Path, t}
		}
	}
	same := map[string]string{}
	for _, f := range files {
		if fs, ok := firsts[f.Hash]; ok && fs.path != f.Path {
			if _, in := inFile(f.Path); in {
				same[f.Path] = fs.path
			}
		}
	}
	return same
}

// takeCounts adds one file per run of ir's matches with its count. When
// the call stopped early, its last file may be incomplete: it is left for
// the next call, unless it is the only one (then its count is what one
// call can count, and a note says so).
func (g *grepPage) takeCounts(ir index.Result, file *string, line *int) (string, error) {
	type run struct {
		path string
		n    int
	}
	var runs []run
	for _, mt := range ir.Matches {
		n := max(mt.Count, 1) // a file the index counted (Query.Tally), or a line
		if k := len(runs); k > 0 && runs[k-1].path == mt.File {
			runs[k-1].n += n
			continue
		}
		runs = append(runs, run{mt.File, n})
	}
	last := len(ir.Matches) - 1
	switch counted := last >= 0 && ir.Matches[last].Count > 0; {
	case !ir.Truncated || counted: // the index counts a file whole or not at all
	case len(runs) > 1:
		runs = runs[:len(runs)-1]
	case len(runs) == 1:
		g.res.Note("%s has more matching lines than one search counts; its count is a lower bound", runs[0].path)
	}
	for _, rn := range runs {
		if !g.b.Take(GrepFile{Path: rn.path, Count: rn.n}.cost()) {
			return TruncMaxBytes, nil
		}
		g.res.Files = append(g.res.Files, GrepFile{Path: rn.path, Count: rn.n})
		g.res.PageMatches += rn.n
		*file, *line = rn.path, wholeFile
	}
	return "", nil
}

// grepMatch turns an index match into the answer's.
func grepMatch(mt index.Match) GrepMatch {
	gm := GrepMatch{File: mt.File, Line: mt.Line, Column: mt.Column, Text: mt.Text,
		Before: cutContext(mt.Before, mt.BeforeBytes, mt.Line-len(mt.Before)), After: cutContext(mt.After, mt.AfterBytes, mt.Line+1),
		MoreInLine: mt.MoreInLine, MoreColumn: mt.MoreColumn, MoreInLineCapped: mt.MoreInLineCapped}
	if mt.TextOffset > 0 || len(mt.Text) < mt.LineBytes {
		gm.TextOffset, gm.LineBytes = mt.TextOffset, mt.LineBytes
	}
	for _, w := range mt.Windows {
		gm.Windows = append(gm.Windows, GrepWindow{Column: w.Column, Text: w.Text, TextOffset: w.TextOffset})
	}
	return gm
}

// cutContext marks each context line that was cut (whole is the lines'
// lengths, first the number of the first) as read marks a line it cuts,
// naming the read that goes on with it.
func cutContext(lines []string, whole []int, first int) []string {
	var out []string
	for i, l := range lines {
		if i < len(whole) && whole[i] > len(l) {
			if out == nil {
				out = slices.Clone(lines)
			}
			out[i] = l + lineCut(first+i, len(l), whole[i])
		}
	}
	if out == nil {
		return lines
	}
	return out
}

// textCost bounds the MCP text of a match: "path:line:col:text", one
// such line per window of a long line and one saying how many more it
// holds; a same-bytes entry is one line naming both files. A match with
// context lines prints under its file's heading (ripgrep's --heading, as
// internal/mcp renders context), so its lines carry no path: "line-text",
// "line:col:text", and the path once for a heading it may start.
func textCost(m GrepMatch) int {
	if m.SameBytesAs != "" {
		return len(m.File) + len(m.SameBytesAs) + 80
	}
	path := len(m.File) // on every line
	if len(m.Before)+len(m.After) > 0 {
		path = 0
	}
	n := len(m.File) + len(m.Text) + 40
	for _, w := range m.Windows {
		n += path + len(w.Text) + 56 // "line:col:[bytes a-b of n] "
	}
	if m.MoreInLine > 0 {
		n += len(m.File) + 120 + Cost(m.MoreNext)
	}
	for _, l := range m.Before {
		n += len(l) + 12
	}
	for _, l := range m.After {
		n += len(l) + 12
	}
	return n
}

// fromElsewhere reports whether o was answered by a fallback, not the
// registry's verified bytes.
func (o *Opened) fromElsewhere() bool { return o.Source != "" && o.Source != SourceRegistry }
