package pathglob

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Patterns are matched by Go's regexp (RE2), which runs in time linear in
// the path for a compiled program and never backtracks. doublestar's own
// matcher backtracks over brace alternatives and star positions: a 440-byte
// pattern of "{*,*}" groups and a run of stars cost seconds per pattern on a
// package of a few thousand files. Each pattern is translated once, in
// Compile, into a regexp with the same answers as doublestar.Match.
//
// doublestar's meaning of "**" depends on its neighbours in the pattern as
// braces expand it ("{a/,b}**/c" is a doublestar after "a/" and a star
// after "b"), so a brace group whose edges touch a star or a slash is
// expanded into its alternatives before translation; other groups become
// regexp alternations as they are. expandBudget bounds the expanded text.

// budget is what one request's patterns may still spend.
type budget struct {
	// bytes of expanded pattern text (Limits.MaxExpandedBytes).
	bytes int
	// wildcards: star runs, "?" and classes (Limits.MaxWildcards).
	wildcards int
}

// translate returns the regexp (unanchored) for one validated pattern,
// spending from b.
func translate(p string, b *budget) (string, error) {
	alts, err := expand(p, &b.bytes)
	if err != nil {
		return "", err
	}
	seen := map[string]bool{}
	var parts []string
	for _, e := range alts {
		re := translateFlat(e)
		if !seen[re] {
			seen[re] = true
			parts = append(parts, re)
			if b.wildcards -= wildcards(e); b.wildcards < 0 {
				return "", errWildcardBudget
			}
		}
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return "(?:" + strings.Join(parts, "|") + ")", nil
}

// expand rewrites p into patterns whose remaining brace groups may be
// translated in place: every group touching a star or a slash at an edge
// is replaced by each of its alternatives. Runs of three or more stars
// are collapsed to three first (doublestar reads any such run as one
// star, except at the end of a name, where three behave like more).
func expand(p string, budget *int) ([]string, error) {
	p = collapseStars(p)
	out := []string{}
	work := []string{p}
	seen := map[string]bool{p: true}
	for len(work) > 0 {
		cur := work[len(work)-1]
		work = work[:len(work)-1]
		open, close := sensitiveGroup(cur)
		if open < 0 {
			*budget -= len(cur)
			if *budget < 0 {
				return nil, errExpandBudget
			}
			out = append(out, cur)
			continue
		}
		for _, a := range alternatives(cur[open+1 : close]) {
			e := collapseStars(cur[:open] + a + cur[close+1:])
			if seen[e] {
				continue
			}
			seen[e] = true
			*budget -= len(e)
			if *budget < 0 {
				return nil, errExpandBudget
			}
			work = append(work, e)
		}
	}
	return out, nil
}

// wildcards counts the star runs, "?" and classes of p: each can keep a
// position of the matcher alive at every byte of a path.
func wildcards(p string) int {
	n := 0
	walk(p, func(i int) int {
		switch p[i] {
		case '[', '?':
			n++
		case '*':
			for i+1 < len(p) && p[i+1] == '*' {
				i++
			}
			n++
		}
		return i
	})
	return n
}

// walk calls f with the offset of each byte of p that is neither escaped
// nor inside a [class] (a class is seen once, at its '['), in order. f
// returns the offset to go on after, or -1 to stop.
func walk(p string, f func(i int) int) {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			end := classEnd(p, i)
			if f(i) < 0 {
				return
			}
			i = end
		default:
			if i = f(i); i < 0 {
				return
			}
		}
	}
}

// collapseStars shortens every run of more than three unescaped stars to
// three.
func collapseStars(p string) string {
	if !strings.Contains(p, "****") {
		return p
	}
	var b strings.Builder
	run := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' && i+1 < len(p) {
			b.WriteByte(c)
			b.WriteByte(p[i+1])
			i++
			run = 0
			continue
		}
		if c == '*' {
			run++
			if run > 3 {
				continue
			}
		} else {
			run = 0
		}
		b.WriteByte(c)
	}
	return b.String()
}

// sensitiveGroup returns the byte offsets of the first top-level brace
// group of p that must be expanded, or -1, -1. A group must be expanded
// when a star or a slash lies at one of its edges (inside or outside), or
// when it holds a nested group or is empty-alternative adjacent to another
// group: there the meaning of stars depends on which alternative is taken.
func sensitiveGroup(p string) (open, close int) {
	open, close = -1, -1
	walk(p, func(i int) int {
		if p[i] != '{' {
			return i
		}
		end := matchingBrace(p, i)
		switch {
		case end < 0:
			return -1
		case groupSensitive(p, i, end):
			open, close = i, end
			return -1
		}
		return end
	})
	return open, close
}

func groupSensitive(p string, open, close int) bool {
	edge := func(c byte) bool { return c == '*' || c == '/' || c == '{' || c == '}' }
	if open > 0 && edge(p[open-1]) || close+1 < len(p) && edge(p[close+1]) {
		return true
	}
	for _, a := range alternatives(p[open+1 : close]) {
		if a == "" || edge(a[0]) || edge(a[len(a)-1]) || strings.ContainsAny(a, "{") {
			return true
		}
		if a[len(a)-1] == '\\' {
			return true
		}
	}
	// The end of the pattern right after a group matters to doublestar's
	// end-of-name rules; so does a group at the very start.
	return close == len(p)-1
}

// matchingBrace returns the index of the '}' closing the '{' at open, as
// doublestar finds it (escapes and character classes skipped), or -1.
func matchingBrace(p string, open int) int {
	depth, end := 0, -1
	walk(p[open:], func(i int) int {
		switch p[open+i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				end = open + i
				return -1
			}
		}
		return i
	})
	return end
}

// classEnd returns the index of the ']' closing the class opened at i, as
// doublestar's validation reads it (a ']' first in the class, after an
// optional negation, is refused earlier by validation).
func classEnd(p string, i int) int {
	j := i + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		j++
	}
	for ; j < len(p); j++ {
		if p[j] == '\\' {
			j++
		} else if p[j] == ']' {
			return j
		}
	}
	return len(p)
}

// alternatives splits the inside of a brace group at its top-level commas.
func alternatives(s string) []string {
	var out []string
	depth, start := 0, 0
	walk(s, func(i int) int {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
		return i
	})
	return append(out, s[start:])
}

// translateFlat translates a pattern whose brace groups hold only plain
// alternatives (no stars or slashes at their edges, no nesting), following
// doublestar.Match's reading of stars:
//   - "**" as a whole path segment followed by "/" matches zero or more
//     directories; at the end of the pattern it matches everything below,
//     and "a/**" also matches "a" itself;
//   - any other run of stars matches within one segment, except that a run
//     of three or more ending the pattern must match at least one byte.
func translateFlat(p string) string {
	var b strings.Builder
	segStart := true
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '*':
			j := i
			for j < len(p) && p[j] == '*' {
				j++
			}
			run, end := j-i, j == len(p)
			switch {
			case run == 2 && segStart && end:
				b.WriteString(".*")
			case run == 2 && segStart && p[j] == '/':
				b.WriteString("(?:[^/]*/)*")
				i = j + 1
				continue // still at a segment start
			case run >= 3 && end:
				b.WriteString("[^/]+")
			case optionalSlashTail(p[j:]):
				// "a*/**" matches "ab" but not "a": a name may end before
				// the optional tail only once the stars matched something.
				b.WriteString("(?:[^/]+|[^/]*" + slashTail(p[j:]) + ")")
				return b.String()
			default:
				b.WriteString("[^/]*")
			}
			i = j
			segStart = false
			continue
		case c == '/' && optionalSlashTail(p[i:]):
			// "x/**" matches "x", and "x/**/" matches "x" too.
			b.WriteString("(?:" + slashTail(p[i:]) + ")?")
			return b.String()
		case c == '?':
			b.WriteString("[^/]")
			i++
		case c == '[':
			end := classEnd(p, i)
			b.WriteString(translateClass(p[i+1 : end]))
			i = end + 1
		case c == '{':
			end := matchingBrace(p, i)
			b.WriteString("(?:")
			for k, a := range alternatives(p[i+1 : end]) {
				if k > 0 {
					b.WriteByte('|')
				}
				b.WriteString(translateFlat(a))
			}
			b.WriteString(")")
			i = end + 1
		default:
			if c == '\\' {
				i++
			}
			r, n := utf8.DecodeRuneInString(p[i:])
			writeRune(&b, r)
			i += n
			segStart = r == '/'
			continue
		}
		segStart = false
	}
	return b.String()
}

// optionalSlashTail reports whether s is "/**" or "/**/" ending the
// pattern, which doublestar lets match nothing at all.
func optionalSlashTail(s string) bool { return s == "/**" || s == "/**/" }

// slashTail is the regexp of an optional slash tail when it is not skipped.
func slashTail(s string) string {
	if s == "/**" {
		return "/.*"
	}
	return "/(?:[^/]*/)*"
}

// translateClass translates the inside of a [...] class the way
// doublestar reads it: "!" or "^" first negates, "lo-hi" is a range
// (empty when lo > hi), "\c" is c.
func translateClass(s string) string {
	neg := false
	if s != "" && (s[0] == '!' || s[0] == '^') {
		neg, s = true, s[1:]
	}
	var b strings.Builder
	last, empty := utf8.MaxRune+1, true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if last <= utf8.MaxRune && r == '-' && i < len(s) {
			if s[i] == '\\' {
				i++
			}
			hi, hn := utf8.DecodeRuneInString(s[i:])
			i += hn
			if last <= hi {
				fmt.Fprintf(&b, `\x{%x}-\x{%x}`, last, hi)
				empty = false
			}
			last = utf8.MaxRune + 1
			continue
		}
		if r == '\\' && i < len(s) {
			r, n = utf8.DecodeRuneInString(s[i:])
			i += n
		}
		fmt.Fprintf(&b, `\x{%x}`, r)
		empty = false
		last = r
	}
	switch {
	case empty && neg:
		return `[\x{0}-\x{10ffff}]`
	case empty:
		return `[^\x{0}-\x{10ffff}]`
	case neg:
		return "[^" + b.String() + "]"
	}
	return "[" + b.String() + "]"
}

func writeRune(b *strings.Builder, r rune) {
	if r < utf8.RuneSelf {
		b.WriteString(regexp.QuoteMeta(string(rune(r))))
		return
	}
	fmt.Fprintf(b, `\x{%x}`, r)
}
