// Package pathglob matches package file paths against doublestar globs:
// several patterns OR-ed, "!pattern" excluding. It serves the glob action
// and grep's include/exclude, so both read patterns the same way.
//
// Patterns are validated, bounded and compiled once, in Compile, into one
// RE2 program for the inclusions and one for the exclusions (translate.go),
// so matching a path costs time linear in its length whatever the pattern;
// doublestar's own matcher backtracks, and a 440-byte pattern of brace
// groups and stars cost it seconds per pattern on a few thousand paths.
// doublestar stays the reference: the answers are the same (FuzzMatch).
package pathglob

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// ErrBadPattern wraps every validation error; the API answers 400.
var ErrBadPattern = errors.New("bad glob pattern")

// Limits bound what a caller may ask for.
type Limits struct {
	// MaxPatterns is how many patterns one request may give.
	MaxPatterns int
	// MaxPatternBytes is the length of one pattern.
	MaxPatternBytes int
	// MaxBraceGroups is how many {…} groups one pattern may hold. Each
	// group multiplies the work of a match by its alternatives.
	MaxBraceGroups int
	// MaxAlternatives caps the product of the alternatives of all brace
	// groups of one pattern (a pattern expands to at most this many).
	MaxAlternatives int
	// MaxExpandedBytes caps the text of one request's patterns once the
	// brace groups whose meaning depends on their neighbours are written
	// out (translate.go); the compiled program, and so the cost per path,
	// grows with it. 0 means MaxPatterns × MaxPatternBytes.
	MaxExpandedBytes int
	// MaxWildcards caps the star runs, "?" and [classes] of one request's
	// patterns, braces written out. Each can keep a matcher position
	// alive at every byte, and the positions alive are what a path costs
	// when the automaton meets a new state: 64 patterns with 64 wildcards
	// each cost 6 s of CPU on 20,000 paths. 0 means 64.
	MaxWildcards int
}

// DefaultLimits are generous for real use: the longest globs seen in agent
// traffic are a few dozen bytes with one or two brace groups.
func DefaultLimits() Limits {
	return Limits{MaxPatterns: 64, MaxPatternBytes: 512, MaxBraceGroups: 8, MaxAlternatives: 256, MaxExpandedBytes: 32 << 10, MaxWildcards: 64}
}

// Matcher decides which paths a set of patterns selects. It is safe for
// concurrent use.
type Matcher struct {
	include *dfa // nil: every path
	exclude *dfa // nil: none
}

// errExpandBudget is returned by expand when Limits.MaxExpandedBytes is
// spent.
var errExpandBudget = errors.New("expanded patterns too large")

// errWildcardBudget is returned by translate when Limits.MaxWildcards is
// spent.
var errWildcardBudget = errors.New("too many wildcards")

// quoted is p as its refusals quote it: whole when short, else its start
// and its size, so that an answer refusing a pattern for its length is
// not the pattern again (a 900 KB include was echoed whole).
func quoted(p string) string {
	const shown = 100
	if len(p) <= shown+20 {
		return strconv.Quote(p)
	}
	cut := shown
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return strconv.Quote(p[:cut]) + fmt.Sprintf("… (%d bytes)", len(p))
}

// Compile validates patterns ("!p" excludes p) and returns their Matcher.
// An empty list, or one with only exclusions, includes every path.
func Compile(patterns []string, lim Limits) (*Matcher, error) {
	if len(patterns) > lim.MaxPatterns {
		return nil, fmt.Errorf("%w: %d patterns given, at most %d allowed (setting --max-glob-patterns)", ErrBadPattern, len(patterns), lim.MaxPatterns)
	}
	b := budget{bytes: lim.MaxExpandedBytes, wildcards: lim.MaxWildcards}
	if b.bytes <= 0 {
		b.bytes = lim.MaxPatterns * lim.MaxPatternBytes
	}
	if b.wildcards <= 0 {
		b.wildcards = 64
	}
	limit := b
	var include, exclude []string
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		body := strings.TrimPrefix(strings.TrimPrefix(p, "!"), "/")
		if err := validate(body, lim); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadPattern, quoted(p), err)
		}
		re, err := translate(body, &b)
		if errors.Is(err, errExpandBudget) {
			return nil, fmt.Errorf("%w: %s: with their braces written out the patterns exceed %d bytes (setting --max-glob-expanded-bytes); use fewer brace groups next to stars or slashes", ErrBadPattern, quoted(p), limit.bytes)
		}
		if errors.Is(err, errWildcardBudget) {
			return nil, fmt.Errorf("%w: %s: the patterns hold more than %d wildcards (*, **, ?, [...]; braces written out) (setting --max-glob-wildcards); use fewer", ErrBadPattern, quoted(p), limit.wildcards)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadPattern, quoted(p), err)
		}
		if neg {
			exclude = append(exclude, re)
		} else {
			include = append(include, re)
		}
	}
	m := &Matcher{}
	var err error
	if m.include, err = program(include); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPattern, err)
	}
	if m.exclude, err = program(exclude); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPattern, err)
	}
	return m, nil
}

// program compiles the translated patterns into one automaton matching
// whole paths; nil for none.
func program(res []string) (*dfa, error) {
	if len(res) == 0 {
		return nil, nil
	}
	return compileDFA(strings.Join(res, "|"))
}

// Match reports whether path (relative, no leading slash) is selected.
func (m *Matcher) Match(path string) bool {
	if m == nil {
		return true
	}
	if m.exclude != nil && m.exclude.match(path) {
		return false
	}
	return m.include == nil || m.include.match(path)
}

// Walk matches paths one after another, each resuming from the automaton
// states the path before it reached at the last folder they share: over
// paths in byte order (a listing), a path costs the bytes of its own name
// rather than its whole length, and the paths below a folder no pattern
// can match cost a comparison each. Matching a package's whole file and
// folder tree was a fifth of a glob's CPU (issue 27). The answers are
// Match's. A Walk is for one goroutine; m may be nil (every path).
type Walk struct {
	m        *Matcher
	inc, exc trail
}

// Walk returns a new walk over m.
func (m *Matcher) Walk() *Walk { return &Walk{m: m} }

// Match reports whether path is selected, as m.Match does.
func (w *Walk) Match(path string) bool {
	m := w.m
	if m == nil {
		return true
	}
	if m.exclude != nil && m.exclude.matchTrail(path, &w.exc) {
		return false
	}
	return m.include == nil || m.include.matchTrail(path, &w.inc)
}

// Empty reports whether the matcher selects every path.
func (m *Matcher) Empty() bool { return m == nil || m.include == nil && m.exclude == nil }

// checkEvery is how many paths Select matches between two looks at its
// context: a path costs well under a microsecond, so a cancelled request
// stops within about 0.1 ms.
const checkEvery = 256

// Select returns the items whose path m selects, in order (a Walk: items
// in byte order of their paths cost least). It stops with ctx's error
// when ctx is done, so a client that left, or a deadline that passed,
// ends the work.
func Select[T any](ctx context.Context, m *Matcher, items []T, path func(T) string) ([]T, error) {
	var out []T
	err := Each(ctx, m, len(items), func(i int) string { return path(items[i]) }, func(i int) { out = append(out, items[i]) })
	return out, err
}

// Each is Select over the indexes 0..n-1, path(i) naming the i-th: it
// calls keep with each index selected, in order, for a caller that keeps
// more about each item beside it. It stops with ctx's error when ctx is
// done.
func Each(ctx context.Context, m *Matcher, n int, path func(int) string, keep func(int)) error {
	w := m.Walk()
	for i := range n {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if w.Match(path(i)) {
			keep(i)
		}
	}
	return nil
}

func validate(p string, lim Limits) error {
	if p == "" {
		return errors.New("empty pattern")
	}
	if len(p) > lim.MaxPatternBytes {
		return fmt.Errorf("pattern is %d bytes, at most %d allowed (setting --max-glob-pattern-bytes)", len(p), lim.MaxPatternBytes)
	}
	if strings.ContainsRune(p, 0) {
		return errors.New("pattern contains a NUL byte")
	}
	if !utf8.ValidString(p) {
		return errors.New("pattern is not valid UTF-8")
	}
	if !doublestar.ValidatePattern(p) {
		return errors.New("not a valid glob (check brackets, braces and escapes)")
	}
	groups, alts := braces(p)
	if groups > lim.MaxBraceGroups {
		return fmt.Errorf("%d brace groups, at most %d allowed (setting --max-glob-brace-groups)", groups, lim.MaxBraceGroups)
	}
	if alts > lim.MaxAlternatives {
		return fmt.Errorf("braces expand to more than %d alternatives (setting --max-glob-alternatives)", lim.MaxAlternatives)
	}
	return nil
}

// braces counts the brace groups of p and the product of their
// alternatives (nested groups multiply too), saturating above 1<<20.
func braces(p string) (groups, product int) {
	product = 1
	type frame struct{ alts int }
	var stack []frame
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			groups++
			stack = append(stack, frame{alts: 1})
		case ',':
			if len(stack) > 0 {
				stack[len(stack)-1].alts++
			}
		case '}':
			if len(stack) > 0 {
				product *= stack[len(stack)-1].alts
				if product > 1<<20 {
					product = 1 << 20
				}
				stack = stack[:len(stack)-1]
			}
		}
	}
	return groups, product
}
