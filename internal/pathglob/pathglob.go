// Package pathglob matches package file paths against doublestar globs:
// several patterns OR-ed, "!pattern" excluding. It serves the glob action
// and grep's include/exclude, so both read patterns the same way.
//
// Patterns are validated and bounded before use: doublestar expands brace
// alternatives by backtracking, so "{a,b}{a,b}..." costs 2^n per path; the
// number of brace groups and alternatives is capped.
package pathglob

import (
	"errors"
	"fmt"
	"strings"

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
}

// DefaultLimits are generous for real use: the longest globs seen in agent
// traffic are a few dozen bytes with one or two brace groups.
func DefaultLimits() Limits {
	return Limits{MaxPatterns: 64, MaxPatternBytes: 512, MaxBraceGroups: 8, MaxAlternatives: 256}
}

// Matcher decides which paths a set of patterns selects.
type Matcher struct {
	include []string
	exclude []string
}

// Compile validates patterns ("!p" excludes p) and returns their Matcher.
// An empty list, or one with only exclusions, includes every path.
func Compile(patterns []string, lim Limits) (*Matcher, error) {
	if len(patterns) > lim.MaxPatterns {
		return nil, fmt.Errorf("%w: %d patterns given, at most %d allowed (setting MaxGlobPatterns)", ErrBadPattern, len(patterns), lim.MaxPatterns)
	}
	m := &Matcher{}
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		body := strings.TrimPrefix(strings.TrimPrefix(p, "!"), "/")
		if err := validate(body, lim); err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrBadPattern, p, err)
		}
		if neg {
			m.exclude = append(m.exclude, body)
		} else {
			m.include = append(m.include, body)
		}
	}
	return m, nil
}

// Match reports whether path (relative, no leading slash) is selected.
func (m *Matcher) Match(path string) bool {
	if m == nil {
		return true
	}
	for _, p := range m.exclude {
		if ok, _ := doublestar.Match(p, path); ok {
			return false
		}
	}
	if len(m.include) == 0 {
		return true
	}
	for _, p := range m.include {
		if ok, _ := doublestar.Match(p, path); ok {
			return true
		}
	}
	return false
}

// Empty reports whether the matcher selects every path.
func (m *Matcher) Empty() bool { return m == nil || len(m.include)+len(m.exclude) == 0 }

func validate(p string, lim Limits) error {
	if p == "" {
		return errors.New("empty pattern")
	}
	if len(p) > lim.MaxPatternBytes {
		return fmt.Errorf("pattern is %d bytes, at most %d allowed (setting MaxGlobPatternBytes)", len(p), lim.MaxPatternBytes)
	}
	if strings.ContainsRune(p, 0) {
		return errors.New("pattern contains a NUL byte")
	}
	if !doublestar.ValidatePattern(p) {
		return errors.New("not a valid glob (check brackets, braces and escapes)")
	}
	groups, alts := braces(p)
	if groups > lim.MaxBraceGroups {
		return fmt.Errorf("%d brace groups, at most %d allowed (setting MaxGlobBraceGroups)", groups, lim.MaxBraceGroups)
	}
	if alts > lim.MaxAlternatives {
		return fmt.Errorf("braces expand to more than %d alternatives (setting MaxGlobAlternatives)", lim.MaxAlternatives)
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
