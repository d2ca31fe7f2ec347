package diff

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/pkgscope/pkgscope/internal/pathglob"
)

// Filter selects paths the way npm diff's path arguments do
// (libnpmdiff/lib/untar.js): a file is kept when any argument, with "./"
// or one leading "." dropped,
//
//   - matches "package/<path>" as the minimatch pattern
//     "{package/,}<argument>", with matchBase when the argument starts
//     with "*" (so "*.d.ts" matches at any depth), or
//   - is a plain string prefix of "<path>" or "package/<path>" (so "lib"
//     selects lib/ — and also library.js, as npm's does).
//
// An empty Filter keeps every file. Paths are the store's, under the
// tarball's top folder, which npm's own matching sees as "package/".
type Filter struct {
	args     []string
	patterns [][]matcher // per argument, its brace expansions
	base     []bool      // per argument: matchBase
}

// ErrPattern wraps what is wrong with a path argument.
var ErrPattern = errors.New("invalid include pattern")

// maxBraceExpansions bounds "{a,b}{c,d}…" so that a short pattern cannot
// expand into millions of alternatives.
const maxBraceExpansions = 256

// NewFilter compiles npm diff path arguments within the glob limits that
// bound every other pattern field: lim.MaxPatterns arguments of at most
// lim.MaxPatternBytes each, their brace alternatives together at most
// lim.MaxExpandedBytes and lim.MaxWildcards wildcards (stars, "**", "?",
// classes). Matching a path is then linear in the patterns' size. It
// refuses extglobs ("+(a|b)"), which this port does not implement, rather
// than match them differently from npm.
func NewFilter(args []string, lim pathglob.Limits) (*Filter, error) {
	if len(args) > lim.MaxPatterns {
		return nil, fmt.Errorf("%w: %d patterns given, at most %d allowed (setting --max-glob-patterns)", ErrPattern, len(args), lim.MaxPatterns)
	}
	expanded, wildcards := lim.MaxExpandedBytes, lim.MaxWildcards
	if expanded <= 0 {
		expanded = lim.MaxPatterns * lim.MaxPatternBytes
	}
	expanded0 := expanded
	if wildcards <= 0 {
		wildcards = 64
	}
	// Each argument is matched with and without "package/": its
	// wildcards count twice against twice the allowance.
	wildcards0 := wildcards
	wildcards *= 2
	f := &Filter{}
	for _, a := range args {
		if len(a) > lim.MaxPatternBytes {
			return nil, fmt.Errorf("%w: %d bytes, at most %d allowed (setting --max-glob-pattern-bytes)", ErrPattern, len(a), lim.MaxPatternBytes)
		}
		norm := normalizeMatch(a)
		alts, err := braceExpand("{package/,}" + norm)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %w", ErrPattern, a, err)
		}
		var ms []matcher
		for _, alt := range alts {
			if expanded -= len(alt); expanded < 0 {
				return nil, fmt.Errorf("%w %q: with their braces written out the patterns exceed %d bytes (setting --max-glob-expanded-bytes)", ErrPattern, a, expanded0)
			}
			if wildcards -= countWildcards(alt); wildcards < 0 {
				return nil, fmt.Errorf("%w %q: the patterns hold more than %d wildcards (*, **, ?, [...]; braces written out) (setting --max-glob-wildcards); use fewer", ErrPattern, a, wildcards0)
			}
			m, err := compileMinimatch(alt)
			if err != nil {
				return nil, fmt.Errorf("%w %q: %w", ErrPattern, a, err)
			}
			ms = append(ms, m)
		}
		f.args = append(f.args, norm)
		f.patterns = append(f.patterns, ms)
		f.base = append(f.base, strings.HasPrefix(norm, "*"))
	}
	return f, nil
}

// Match reports whether path (a store path, no leading slash) is kept.
func (f *Filter) Match(path string) bool {
	if f == nil || len(f.args) == 0 {
		return true
	}
	full := normalizeMatch("package/" + path)
	parts := strings.Split(full, "/")
	for i, arg := range f.args {
		for _, m := range f.patterns[i] {
			file := parts
			if f.base[i] && len(m) == 1 {
				file = parts[len(parts)-1:]
			}
			if m.match(file) {
				return true
			}
		}
		if strings.HasPrefix(full, arg) || strings.HasPrefix(full, "package/"+arg) {
			return true
		}
	}
	return false
}

// normalizeMatch is untar.js's: backslashes to "/", then "./" or a
// single leading "." removed.
func normalizeMatch(s string) string {
	s = backslashes.ReplaceAllString(s, "/")
	if strings.HasPrefix(s, "./") {
		return s[2:]
	}
	return strings.TrimPrefix(s, ".")
}

var backslashes = regexp.MustCompile(`\\+`)

// braceExpand expands "{a,b}" alternatives, nested, like brace-expansion
// (minimatch's). A brace group without a top-level comma, and sequences
// like "{1..3}", stay literal.
func braceExpand(p string) ([]string, error) {
	out := []string{}
	var expand func(string) error
	expand = func(s string) error {
		open := -1
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' {
				i++
				continue
			}
			if s[i] != '{' {
				continue
			}
			depth, commas, close := 0, []int{}, -1
			for j := i; j < len(s) && close < 0; j++ {
				switch s[j] {
				case '\\':
					j++
				case '{':
					depth++
				case '}':
					depth--
					if depth == 0 {
						close = j
					}
				case ',':
					if depth == 1 {
						commas = append(commas, j)
					}
				}
			}
			if close >= 0 && len(commas) > 0 {
				open = i
				pre, post := s[:open], s[close+1:]
				bounds := append(append([]int{open}, commas...), close)
				for k := 0; k+1 < len(bounds); k++ {
					if err := expand(pre + s[bounds[k]+1:bounds[k+1]] + post); err != nil {
						return err
					}
				}
				return nil
			}
		}
		if len(out) >= maxBraceExpansions {
			return fmt.Errorf("more than %d brace expansions", maxBraceExpansions)
		}
		out = append(out, s)
		return nil
	}
	if err := expand(p); err != nil {
		return nil, err
	}
	return out, nil
}

// matcher is one expanded pattern, a segment per path segment; nil
// stands for a "**" segment.
type matcher []*segment

// segment matches one path segment.
type segment struct {
	re    *regexp.Regexp
	noDot bool // refuse a segment starting with "."
}

// compileMinimatch compiles one brace-free pattern with minimatch 10's
// defaults (no dot, optimization level 1).
func compileMinimatch(p string) (matcher, error) {
	var segs []string
	for _, s := range strings.Split(p, "/") {
		n := len(segs)
		switch {
		case s == "**" && n > 0 && segs[n-1] == "**":
			continue
		case s == ".." && n > 0 && segs[n-1] != ".." && segs[n-1] != "." && segs[n-1] != "**":
			segs = segs[:n-1]
			continue
		}
		segs = append(segs, s)
	}
	var m matcher
	for _, s := range segs {
		if s == "**" {
			m = append(m, nil)
			continue
		}
		re, err := segmentRegexp(s)
		if err != nil {
			return nil, err
		}
		m = append(m, re)
	}
	return m, nil
}

// segmentRegexp is minimatch's AST.#parseGlob for one path segment, with
// its start rules: a segment that begins with a wildcard or class cannot
// match a leading "."; a segment of stars alone must match something.
func segmentRegexp(s string) (*segment, error) {
	for i := 0; i+1 < len(s); i++ {
		if strings.IndexByte("+@!?*", s[i]) >= 0 && s[i+1] == '(' && (i == 0 || s[i-1] != '\\') {
			return nil, errors.New("extglobs like +(a|b) are not supported")
		}
	}
	onlyStars := strings.Trim(s, "*") == "" && s != ""
	var re strings.Builder
	inStar := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '*' {
			if !inStar {
				if onlyStars {
					re.WriteString(`[^/]+?`)
				} else {
					re.WriteString(`[^/]*?`)
				}
			}
			inStar = true
			continue
		}
		inStar = false
		switch c {
		case '\\':
			if i == len(s)-1 {
				re.WriteString(`\\`)
			} else {
				i++
				re.WriteString(regexp.QuoteMeta(s[i : i+1]))
			}
		case '?':
			re.WriteString(`[^/]`)
		case '[':
			end := classEnd(s, i)
			if end < 0 {
				re.WriteString(`\[`)
				continue
			}
			body := s[i+1 : end]
			neg := strings.HasPrefix(body, "!") || strings.HasPrefix(body, "^")
			if neg {
				body = body[1:]
			}
			cls := "["
			if neg {
				cls += "^"
			}
			for _, ch := range body {
				if ch == '\\' || ch == ']' || ch == '[' || ch == '^' {
					cls += `\`
				}
				cls += string(ch)
			}
			re.WriteString(cls + "]")
			i = end
		default:
			re.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	compiled, err := regexp.Compile(`^(?:` + re.String() + `)$`)
	if err != nil {
		return nil, err
	}
	// minimatch prefixes (?!\.) when the source starts with "[" (a star,
	// a "?" or a class); Go's regexp has no lookahead, so segMatch checks
	// the leading dot itself.
	return &segment{re: compiled, noDot: strings.HasPrefix(re.String(), "[")}, nil
}

// classEnd finds the "]" closing the class opened at s[i], or -1. A "]"
// right after "[" or "[!" is a member, as in minimatch.
func classEnd(s string, i int) int {
	j := i + 1
	if j < len(s) && (s[j] == '!' || s[j] == '^') {
		j++
	}
	if j < len(s) && s[j] == ']' {
		j++
	}
	for ; j < len(s); j++ {
		if s[j] == '\\' {
			j++
			continue
		}
		if s[j] == ']' {
			return j
		}
	}
	return -1
}

// countWildcards counts p's star runs, "?" and "[" (an upper bound on
// its classes).
func countWildcards(p string) int {
	n := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*':
			if i == 0 || p[i-1] != '*' {
				n++
			}
		case '?', '[':
			n++
		}
	}
	return n
}

func (m matcher) match(file []string) bool {
	var failed map[[2]int]bool // (segment, path part) pairs known not to match
	return matchSegs(m, file, 0, 0, &failed)
}

// matchSegs reports whether m[mi:] matches file[fi:]. Each "**" tries
// every depth; failed remembers the pairs that did not match, so a path
// costs at most len(m) × len(file) steps however many "**" there are.
func matchSegs(m matcher, file []string, mi, fi int, failed *map[[2]int]bool) bool {
	for mi < len(m) {
		if m[mi] == nil { // "**"
			if (*failed)[[2]int{mi, fi}] {
				return false
			}
			for k := fi; ; k++ {
				if matchSegs(m, file, mi+1, k, failed) {
					return true
				}
				if k == len(file) {
					break
				}
				if seg := file[k]; seg == "." || seg == ".." || strings.HasPrefix(seg, ".") {
					break
				}
			}
			if *failed == nil {
				*failed = map[[2]int]bool{}
			}
			(*failed)[[2]int{mi, fi}] = true
			return false
		}
		if fi == len(file) || !segMatch(m[mi], file[fi]) {
			return false
		}
		mi, fi = mi+1, fi+1
	}
	return fi == len(file)
}

func segMatch(s *segment, seg string) bool {
	if s.noDot && strings.HasPrefix(seg, ".") {
		return false
	}
	return s.re.MatchString(seg)
}
