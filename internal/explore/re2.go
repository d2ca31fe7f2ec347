package explore

import (
	"errors"
	"fmt"
	"strings"
)

// checkRE2 refuses the regexp syntax of other engines that RE2 reads
// differently or not at all, before a pattern is compiled, with what to
// write instead. GNU grep's \< and \> are word boundaries there but a
// literal '<' and '>' in RE2, so `\<Home\>` matched nothing and the
// no-match note told the model the name may not exist. Look-around and
// backreferences fail to compile with messages ("invalid named capture",
// "invalid escape sequence") that sent models to fixedStrings, which
// searches for the pattern's text as written.
func checkRE2(pattern string) error {
	inClass := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			next := pattern[i+1]
			i++
			if inClass {
				continue
			}
			switch {
			case next == '<' || next == '>':
				return &InputError{Field: "pattern", Err: fmt.Errorf(`\%c is GNU grep's word boundary, a literal '%c' in RE2: use \b (e.g. \bHome\b) or wholeWord: true; for a literal '%c', leave out the backslash`, next, next, next)}
			case next >= '1' && next <= '9':
				return &InputError{Field: "pattern", Err: fmt.Errorf(`RE2 has no backreferences (\%c): spell out each case, e.g. (a|b)x\1 as axa|bxb, or grep the wider pattern and read the matches`, next)}
			}
		case c == '[' && !inClass:
			inClass = true
			// ']' first in a class ("[]a]", "[^]a]") is a literal.
			if j := i + 1; j < len(pattern) && pattern[j] == '^' {
				i = j
			}
			if j := i + 1; j < len(pattern) && pattern[j] == ']' {
				i = j
			}
		case c == ']' && inClass:
			inClass = false
		case c == '(' && !inClass:
			rest := pattern[i+1:]
			for _, la := range []string{"?<=", "?<!", "?=", "?!"} {
				if strings.HasPrefix(rest, la) {
					return &InputError{Field: "pattern", Err: errors.New("RE2 has no look-around ((?=, (?!, (?<=, (?<!): match the context as part of the pattern instead (e.g. 'foo(?=\\()' as 'foo\\(') and read the matching lines, or use \\b or wholeWord: true for a word boundary; to leave out matches, narrow include/exclude or grep the wider pattern")}
				}
			}
		}
	}
	return nil
}
