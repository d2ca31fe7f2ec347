package index

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	csindex "github.com/google/codesearch/index"
)

// ErrBadPattern is returned (wrapped, with a message saying what to fix)
// by Search for a pattern that cannot be searched: invalid RE2 syntax, too
// long, too large once compiled, or matching a line break.
var ErrBadPattern = errors.New("bad pattern")

// ErrBadQuery is returned (wrapped) by Search for a Query field out of
// range, such as negative MaxMatches or ContextLines above the limit.
var ErrBadQuery = errors.New("bad query")

// plan is a compiled query: the regexp to run plus what the index and the
// scanner need to know about it.
type plan struct {
	re      *regexp.Regexp // runs on lines and windows; nil when pure
	anch    *regexp.Regexp // re anchored at \A, for a pattern that starts every match at a line start; run once per line
	col     int            // submatch whose start is the column: 0, or 1 for WholeWord
	progLen int            // compiled program size, for the per-call work bound
	trig    *csindex.Query // trigram query; nil means every block
	maxLen  int            // longest possible match in bytes, -1 if unbounded
	minLen  int            // shortest possible match in bytes
	lits    []string       // case-sensitive literals every match contains
	pure    bool           // the pattern is the single literal lits[0]
	alpha   *[256]bool     // bytes a match may contain; nil if nearly any

	// src is re's source; after is src behind one rune of the line
	// ([^\n](src)), compiled on first use (afterOnce): it finds the first
	// match that starts after a given byte, with that byte as context
	// (Match.Windows).
	src       string
	afterOnce sync.Once
	after     *regexp.Regexp
}

// afterRe returns p.after, compiling it on first use. It cannot fail: src
// compiled, and one more rune and group keep it valid.
func (p *plan) afterRe() *regexp.Regexp {
	p.afterOnce.Do(func() { p.after = regexp.MustCompile(`[^\n](` + p.src + `)`) })
	return p.after
}

// Compiled keeps a query's compiled pattern across Search calls. Parsing,
// checking and compiling a pattern costs about as much as searching a small
// package's index for it, so a caller running one query over many indexes
// (a project grep searches every package of a lockfile: 406 indexes for a
// mid-size app, 17% of whose grep CPU went to compiling the same pattern
// again each time) compiles it once: it sets Query.Compiled to one
// new(Compiled) for every Search, and the first compiles. Compiled holds
// the plan of the pattern, flags and limits it last saw, so a Query whose
// pattern changed in between is compiled again, never searched with a
// stale plan; a pattern error is kept and returned like a plan. It is safe
// for concurrent use; the zero value is ready.
type Compiled struct {
	mu   sync.Mutex
	done bool
	key  compileKey
	p    *plan
	err  error
	// The candidates of plan candP in index candIx, the one searched
	// last: a caller searching one index several times with one query (a
	// grep page of internal/explore makes a call per tier and pass, up to
	// twelve) evaluates its trigram query once. Evaluating it was 30% of
	// a warm grep's CPU on next 16.4.6.
	candIx *Index
	candP  *plan
	cand   candSet
	evals  int // candidate evaluations made (tests count them)
}

// candSet is what searcher.candidates sets: the units and how to scan
// them. Read only once made.
type candSet struct {
	units             unitSet
	group, unitGroups bool
	lit               []byte
	find              finder
	// cont and order are candidateFiles of units, made at the first
	// search that visits candidates only (nil before).
	cont  []bool
	order []int32
}

// candidates returns s's candidates (searcher.candidates), c's when c
// holds those of the same plan in the same index.
func (c *Compiled) candidates(s *searcher) (unitSet, error) {
	if c == nil {
		return s.candidates()
	}
	c.mu.Lock()
	if c.candIx == s.ix && c.candP == s.p {
		cs := c.cand
		c.mu.Unlock()
		s.group, s.unitGroups, s.lit, s.find = cs.group, cs.unitGroups, cs.lit, cs.find
		return cs.units, nil
	}
	c.mu.Unlock()
	u, err := s.candidates()
	if err != nil {
		return u, err
	}
	c.mu.Lock()
	c.candIx, c.candP, c.cand = s.ix, s.p, candSet{units: u, group: s.group, unitGroups: s.unitGroups, lit: s.lit, find: s.find}
	c.evals++
	c.mu.Unlock()
	return u, nil
}

// candidateFiles is candidateFiles(s.ix, units), c's when c made it for
// the same candidates: a grep page's searches (a tier and pass each, and
// its counts) made the table and sorted the files each time, 6% of a warm
// grep's CPU on next 16.4.6.
func (c *Compiled) candidateFiles(s *searcher, units unitSet) ([]bool, []int32) {
	if c == nil {
		return candidateFiles(s.ix, units)
	}
	c.mu.Lock()
	if c.candIx == s.ix && c.candP == s.p && c.cand.cont != nil {
		cont, order := c.cand.cont, c.cand.order
		c.mu.Unlock()
		return cont, order
	}
	c.mu.Unlock()
	cont, order := candidateFiles(s.ix, units)
	c.mu.Lock()
	if c.candIx == s.ix && c.candP == s.p {
		c.cand.cont, c.cand.order = cont, order
	}
	c.mu.Unlock()
	return cont, order
}

// compileKey is what a plan depends on.
type compileKey struct {
	pattern                                  string
	caseInsensitive, fixedStrings, wholeWord bool
	maxPatternBytes, maxProgramSize          int
}

// plan returns q's plan under lim: c's, when c holds the plan of the same
// pattern, flags and limits, else a new one (kept in c). A nil c compiles.
// A plan is read-only once made, so searches share it.
func (c *Compiled) plan(q Query, lim SearchLimits) (*plan, error) {
	if c == nil {
		return compile(q, lim)
	}
	k := compileKey{q.Pattern, q.CaseInsensitive, q.FixedStrings, q.WholeWord, lim.MaxPatternBytes, lim.MaxProgramSize}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done || c.key != k {
		c.p, c.err = compile(q, lim)
		c.done, c.key = true, k
	}
	return c.p, c.err
}

// compile turns q into a plan, enforcing the pattern limits.
func compile(q Query, lim SearchLimits) (*plan, error) {
	pat := q.Pattern
	if len(pat) > lim.MaxPatternBytes {
		return nil, fmt.Errorf("pattern is %d bytes, over the limit of %d: %w", len(pat), lim.MaxPatternBytes, ErrBadPattern)
	}
	if !utf8.ValidString(pat) {
		return nil, fmt.Errorf("pattern is not valid UTF-8: %w", ErrBadPattern)
	}
	if q.FixedStrings {
		pat = regexp.QuoteMeta(pat)
	}
	// Not syntax.Perl: without OneLine, ^ and $ match at line boundaries,
	// so one regexp call can scan many lines at once.
	flags := syntax.ClassNL | syntax.PerlX | syntax.UnicodeGroups
	if q.CaseInsensitive {
		flags |= syntax.FoldCase
	}
	inner, err := syntax.Parse(pat, flags)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.TrimPrefix(err.Error(), "error parsing regexp: "), ErrBadPattern)
	}
	if err := lineOnly(inner); err != nil {
		return nil, err
	}
	src := inner.String()
	p := &plan{}
	if q.WholeWord {
		// ripgrep's -w: the match must be preceded by the line start or a
		// non-word character and followed by one or the line end
		// (\b{start-half} ... \b{end-half}). Group 1 is the word itself.
		const nonWord = `[^0-9A-Za-z_\n]`
		src = `(?:(?m:^)|` + nonWord + `)(` + src + `)(?:` + nonWord + `|(?m:$))`
		p.col = 1
	}
	if err := checkProgram(src, lim, p); err != nil {
		return nil, err
	}
	p.re, err = regexp.Compile(src)
	p.src = src
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, ErrBadPattern)
	}

	if !q.WholeWord && lineAnchored(inner) {
		if p.anch, err = anchorText(src); err != nil {
			return nil, err
		}
	}
	p.maxLen = maxLen(inner)
	p.minLen = minLen(inner)
	if hasReplacementChar(inner) {
		// Go's regexp matches an invalid UTF-8 byte as U+FFFD, but the
		// trigram of U+FFFD is its three-byte encoding: the index cannot
		// find such matches, so search every block without prefilters.
		return p, nil
	}
	p.trig = csindex.RegexpQuery(inner)
	p.lits = requiredLiterals(inner)
	if lit, ok := pureLiteral(inner); ok && !q.WholeWord {
		p.pure = true
		p.lits = []string{lit}
	}
	p.alpha = alphabet(inner)
	return p, nil
}

// lineOnly rewrites re in place so that it can never match a newline, as
// grep matches within one line: \n leaves every class, . never matches it,
// and \A, \z mean the line start and end (as in ripgrep). A literal \n is
// an error, as in ripgrep.
func lineOnly(re *syntax.Regexp) error {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return fmt.Errorf("the pattern matches a line break (\\n), but grep matches within one line: %w", ErrBadPattern)
			}
		}
	case syntax.OpCharClass:
		var out []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo <= '\n' && '\n' <= hi {
				if lo < '\n' {
					out = append(out, lo, '\n'-1)
				}
				if hi > '\n' {
					out = append(out, '\n'+1, hi)
				}
				continue
			}
			out = append(out, lo, hi)
		}
		if len(out) == 0 {
			*re = syntax.Regexp{Op: syntax.OpNoMatch}
		} else {
			re.Rune = out
		}
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op = syntax.OpEndLine
		re.Flags &^= syntax.WasDollar
	}
	for _, sub := range re.Sub {
		if err := lineOnly(sub); err != nil {
			return err
		}
	}
	return nil
}

// lineAnchored reports whether every match of re starts with ^.
func lineAnchored(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine:
		return true
	case syntax.OpConcat, syntax.OpCapture:
		return len(re.Sub) > 0 && lineAnchored(re.Sub[0])
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !lineAnchored(sub) {
				return false
			}
		}
		return true
	}
	return false
}

// anchorText compiles src with its leading ^ turned into \A. Run on one
// line, it means the same, but Go's regexp then tries only offset 0
// instead of every offset: ^$ costs one call per line instead of a scan
// of every byte by the NFA (1.3 s on typescript@5.9.3, rg 0.09 s).
func anchorText(src string) (*regexp.Regexp, error) {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, ErrBadPattern)
	}
	var anchor func(*syntax.Regexp)
	anchor = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpBeginLine:
			re.Op = syntax.OpBeginText
		case syntax.OpConcat, syntax.OpCapture:
			anchor(re.Sub[0])
		case syntax.OpAlternate:
			for _, sub := range re.Sub {
				anchor(sub)
			}
		}
	}
	anchor(re)
	a, err := regexp.Compile(re.String())
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, ErrBadPattern)
	}
	return a, nil
}

// checkProgram bounds the compiled size of src. Go's regexp runs in time
// proportional to text length times program size, with memory
// proportional to program size, so this bounds both per byte scanned.
func checkProgram(src string, lim SearchLimits, p *plan) error {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return fmt.Errorf("%s: %w", strings.TrimPrefix(err.Error(), "error parsing regexp: "), ErrBadPattern)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return fmt.Errorf("%s: %w", strings.TrimPrefix(err.Error(), "error parsing regexp: "), ErrBadPattern)
	}
	if len(prog.Inst) > lim.MaxProgramSize {
		return fmt.Errorf("pattern compiles to %d instructions, over the limit of %d; use smaller repetition counts: %w",
			len(prog.Inst), lim.MaxProgramSize, ErrBadPattern)
	}
	p.progLen = len(prog.Inst)
	return nil
}

// maxLen returns the longest match of re in bytes, or -1 if unbounded.
// Every rune counts as utf8.UTFMax bytes unless it is ASCII without case
// folding, an upper bound that is exact for ASCII patterns.
func maxLen(re *syntax.Regexp) int {
	runeLen := func(r rune, fold bool) int {
		if r < utf8.RuneSelf && !(fold && unicode.SimpleFold(r) != r) {
			return 1
		}
		return utf8.UTFMax
	}
	switch re.Op {
	case syntax.OpNoMatch, syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += runeLen(r, re.Flags&syntax.FoldCase != 0)
		}
		return n
	case syntax.OpCharClass:
		n := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n = max(n, runeLen(re.Rune[i+1], false))
		}
		return n
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return utf8.UTFMax
	case syntax.OpCapture:
		return maxLen(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return -1
	case syntax.OpQuest:
		return maxLen(re.Sub[0])
	case syntax.OpRepeat:
		if re.Max < 0 {
			return -1
		}
		n := maxLen(re.Sub[0])
		if n < 0 {
			return -1
		}
		return n * re.Max
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			m := maxLen(sub)
			if m < 0 {
				return -1
			}
			n += m
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, sub := range re.Sub {
			m := maxLen(sub)
			if m < 0 {
				return -1
			}
			n = max(n, m)
		}
		return n
	}
	return -1
}

// minLen returns a lower bound on the length of a match of re in bytes
// (every rune counts one byte).
func minLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLen(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minLen(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			n += minLen(sub)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, sub := range re.Sub {
			if m := minLen(sub); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	return 0 // empty-width operators, x*, x?, no-match
}

// hasReplacementChar reports whether re can match U+FFFD explicitly.
func hasReplacementChar(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == utf8.RuneError {
				return true
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= utf8.RuneError && utf8.RuneError <= re.Rune[i+1] {
				return true
			}
		}
	}
	for _, sub := range re.Sub {
		if hasReplacementChar(sub) {
			return true
		}
	}
	return false
}

// caseless reports whether a FoldCase literal is unaffected by folding.
func caseless(runes []rune) bool {
	for _, r := range runes {
		if unicode.SimpleFold(r) != r {
			return false
		}
	}
	return true
}

// pureLiteral reports whether re matches exactly one byte string and
// nothing else, with no assertions: then a match is an occurrence of it.
func pureLiteral(re *syntax.Regexp) (string, bool) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpLiteral || (re.Flags&syntax.FoldCase != 0 && !caseless(re.Rune)) {
		return "", false
	}
	return string(re.Rune), true
}

// requiredLiterals returns case-sensitive strings that every match of re
// contains.
func requiredLiterals(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 && !caseless(re.Rune) {
			return nil
		}
		return []string{string(re.Rune)}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var out []string
		for _, sub := range re.Sub {
			out = append(out, requiredLiterals(sub)...)
		}
		return out
	}
	return nil
}

// alphabet returns the bytes that can occur in a match of re, or nil when
// that is every byte but the newline (then a window is a whole line). Any
// non-ASCII rune admits every byte >= 0x80.
func alphabet(re *syntax.Regexp) *[256]bool {
	var a [256]bool
	if !addAlphabet(re, &a) {
		return nil
	}
	for c := range a {
		if !a[c] && c != '\n' {
			return &a
		}
	}
	return nil
}

func addAlphabet(re *syntax.Regexp, a *[256]bool) bool {
	addRune := func(r rune) {
		if r < utf8.RuneSelf {
			a[r] = true
			return
		}
		for c := 0x80; c < 0x100; c++ {
			a[c] = true
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			addRune(r)
			if re.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					addRune(f)
				}
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			for r := lo; r <= hi && r < utf8.RuneSelf; r++ {
				a[r] = true
			}
			if hi >= utf8.RuneSelf {
				addRune(hi)
			}
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return false
	}
	for _, sub := range re.Sub {
		if !addAlphabet(sub, a) {
			return false
		}
	}
	return true
}
