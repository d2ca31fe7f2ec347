package nodesemver

import (
	"regexp"
	"strings"
)

// Limits node-semver hard-codes (internal/constants.js). They are part of
// the grammar being reproduced, not settings: changing one would make this
// package disagree with npm.
const (
	// MaxLength is the longest version string node-semver parses, counted
	// in UTF-16 code units as JavaScript's String.length does.
	MaxLength = 256
	// MaxSafeInteger is the largest major, minor or patch number accepted
	// (JavaScript's Number.MAX_SAFE_INTEGER, 2^53-1).
	MaxSafeInteger = 1<<53 - 1
	// maxSafeBuildLength bounds one build identifier in the "safe"
	// regexps: MaxLength minus the 6 bytes of the shortest "0.0.0+".
	maxSafeBuildLength = MaxLength - 6
)

// The regexps below are re.js's sources, composed the same way and then
// made "safe" the same way (makeSafeRegex bounds \s*, \d+ and
// [a-zA-Z0-9-]* repetitions). The bounds are not cosmetic: on ranges, which
// have no length limit, a prerelease identifier longer than 250 characters
// stops an x-range from matching and so changes the result.
//
// Go's RE2 picks the same submatches a backtracking engine would (leftmost,
// first alternative first), so captures agree with JavaScript's. What does
// differ is \s: JavaScript's includes Unicode spaces (U+00A0, U+FEFF,
// U+3000, ...), so \s is rewritten to that class.

const letterDashNumber = `[a-zA-Z0-9-]`

// jsSpaceClass is the body of JavaScript's \s character class (ECMAScript
// WhiteSpace and LineTerminator).
const jsSpaceClass = `\t\n\v\f\r \x{00a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// src holds re.js's token sources by name.
var src = map[string]string{}

func token(name, value string) string {
	src[name] = value
	return value
}

func init() {
	token("NUMERICIDENTIFIER", `0|[1-9]\d*`)
	token("NUMERICIDENTIFIERLOOSE", `\d+`)
	token("NONNUMERICIDENTIFIER", `\d*[a-zA-Z-]`+letterDashNumber+`*`)
	token("MAINVERSION", `(`+src["NUMERICIDENTIFIER"]+`)\.(`+src["NUMERICIDENTIFIER"]+`)\.(`+src["NUMERICIDENTIFIER"]+`)`)
	token("MAINVERSIONLOOSE", `(`+src["NUMERICIDENTIFIERLOOSE"]+`)\.(`+src["NUMERICIDENTIFIERLOOSE"]+`)\.(`+src["NUMERICIDENTIFIERLOOSE"]+`)`)
	token("PRERELEASEIDENTIFIER", `(?:`+src["NONNUMERICIDENTIFIER"]+`|`+src["NUMERICIDENTIFIER"]+`)`)
	token("PRERELEASEIDENTIFIERLOOSE", `(?:`+src["NONNUMERICIDENTIFIER"]+`|`+src["NUMERICIDENTIFIERLOOSE"]+`)`)
	token("PRERELEASE", `(?:-(`+src["PRERELEASEIDENTIFIER"]+`(?:\.`+src["PRERELEASEIDENTIFIER"]+`)*))`)
	token("PRERELEASELOOSE", `(?:-?(`+src["PRERELEASEIDENTIFIERLOOSE"]+`(?:\.`+src["PRERELEASEIDENTIFIERLOOSE"]+`)*))`)
	token("BUILDIDENTIFIER", letterDashNumber+`+`)
	token("BUILD", `(?:\+(`+src["BUILDIDENTIFIER"]+`(?:\.`+src["BUILDIDENTIFIER"]+`)*))`)
	token("FULLPLAIN", `v?`+src["MAINVERSION"]+src["PRERELEASE"]+`?`+src["BUILD"]+`?`)
	token("FULL", `^`+src["FULLPLAIN"]+`$`)
	token("LOOSEPLAIN", `[v=\s]*`+src["MAINVERSIONLOOSE"]+src["PRERELEASELOOSE"]+`?`+src["BUILD"]+`?`)
	token("LOOSE", `^`+src["LOOSEPLAIN"]+`$`)
	token("GTLT", `((?:<|>)?=?)`)
	token("XRANGEIDENTIFIERLOOSE", src["NUMERICIDENTIFIERLOOSE"]+`|x|X|\*`)
	token("XRANGEIDENTIFIER", src["NUMERICIDENTIFIER"]+`|x|X|\*`)
	token("XRANGEPLAIN", `[v=\s]*(`+src["XRANGEIDENTIFIER"]+`)`+
		`(?:\.(`+src["XRANGEIDENTIFIER"]+`)`+
		`(?:\.(`+src["XRANGEIDENTIFIER"]+`)`+
		`(?:`+src["PRERELEASE"]+`)?`+src["BUILD"]+`?`+
		`)?)?`)
	token("XRANGEPLAINLOOSE", `[v=\s]*(`+src["XRANGEIDENTIFIERLOOSE"]+`)`+
		`(?:\.(`+src["XRANGEIDENTIFIERLOOSE"]+`)`+
		`(?:\.(`+src["XRANGEIDENTIFIERLOOSE"]+`)`+
		`(?:`+src["PRERELEASELOOSE"]+`)?`+src["BUILD"]+`?`+
		`)?)?`)
	token("XRANGE", `^`+src["GTLT"]+`\s*`+src["XRANGEPLAIN"]+`$`)
	token("XRANGELOOSE", `^`+src["GTLT"]+`\s*`+src["XRANGEPLAINLOOSE"]+`$`)
	token("LONETILDE", `(?:~>?)`)
	token("TILDETRIM", `(\s*)`+src["LONETILDE"]+`\s+`)
	token("TILDE", `^`+src["LONETILDE"]+src["XRANGEPLAIN"]+`$`)
	token("TILDELOOSE", `^`+src["LONETILDE"]+src["XRANGEPLAINLOOSE"]+`$`)
	token("LONECARET", `(?:\^)`)
	token("CARETTRIM", `(\s*)`+src["LONECARET"]+`\s+`)
	token("CARET", `^`+src["LONECARET"]+src["XRANGEPLAIN"]+`$`)
	token("CARETLOOSE", `^`+src["LONECARET"]+src["XRANGEPLAINLOOSE"]+`$`)
	token("COMPARATORLOOSE", `^`+src["GTLT"]+`\s*(`+src["LOOSEPLAIN"]+`)$|^$`)
	token("COMPARATOR", `^`+src["GTLT"]+`\s*(`+src["FULLPLAIN"]+`)$|^$`)
	token("COMPARATORTRIM", `(\s*)`+src["GTLT"]+`\s*(`+src["LOOSEPLAIN"]+`|`+src["XRANGEPLAIN"]+`)`)
	token("HYPHENRANGE", `^\s*(`+src["XRANGEPLAIN"]+`)\s+-\s+(`+src["XRANGEPLAIN"]+`)\s*$`)
	token("HYPHENRANGELOOSE", `^\s*(`+src["XRANGEPLAINLOOSE"]+`)\s+-\s+(`+src["XRANGEPLAINLOOSE"]+`)\s*$`)
	token("STAR", `(<|>)?=?\s*\*`)
	token("GTE0", `^\s*>=\s*0\.0\.0\s*$`)

	reFull = safe("FULL")
	reLoose = safe("LOOSE")
	reXRange = safe("XRANGE")
	reXRangeLoose = safe("XRANGELOOSE")
	reTildeTrim = safe("TILDETRIM")
	reTilde = safe("TILDE")
	reTildeLoose = safe("TILDELOOSE")
	reCaretTrim = safe("CARETTRIM")
	reCaret = safe("CARET")
	reCaretLoose = safe("CARETLOOSE")
	reComparator = safe("COMPARATOR")
	reComparatorLoose = safe("COMPARATORLOOSE")
	reComparatorTrim = safe("COMPARATORTRIM")
	reHyphen = safe("HYPHENRANGE")
	reHyphenLoose = safe("HYPHENRANGELOOSE")
	reStar = safe("STAR")
	reGTE0 = safe("GTE0")
	reBuild = safe("BUILD")
	// range.js strips build metadata with the unbounded source.
	reBuildStrip = regexp.MustCompile(goSyntax(src["BUILD"]))
}

// The compiled regexps parsing uses (re.js's safeRe entries).
var (
	reFull, reLoose                    *regexp.Regexp
	reXRange, reXRangeLoose            *regexp.Regexp
	reTildeTrim, reTilde, reTildeLoose *regexp.Regexp
	reCaretTrim, reCaret, reCaretLoose *regexp.Regexp
	reComparator, reComparatorLoose    *regexp.Regexp
	reComparatorTrim                   *regexp.Regexp
	reHyphen, reHyphenLoose            *regexp.Regexp
	reStar, reGTE0                     *regexp.Regexp
	reBuild, reBuildStrip              *regexp.Regexp
)

func safe(name string) *regexp.Regexp {
	return regexp.MustCompile(goSyntax(makeSafe(src[name])))
}

// makeSafe is re.js's makeSafeRegex.
func makeSafe(v string) string {
	for _, r := range []struct {
		token string
		max   string
	}{{`\s`, "1"}, {`\d`, "256"}, {letterDashNumber, "250"}} {
		v = strings.ReplaceAll(v, r.token+"*", r.token+"{0,"+r.max+"}")
		v = strings.ReplaceAll(v, r.token+"+", r.token+"{1,"+r.max+"}")
	}
	return v
}

// goSyntax rewrites JavaScript's \s into Go syntax. The only \s inside a
// bracket expression in re.js is [v=\s].
func goSyntax(v string) string {
	v = strings.ReplaceAll(v, `[v=\s]`, `[v=`+jsSpaceClass+`]`)
	return strings.ReplaceAll(v, `\s`, `[`+jsSpaceClass+`]`)
}

// reSpaces is JavaScript's /\s+/.
var reSpaces = regexp.MustCompile(`[` + jsSpaceClass + `]+`)

// isJSSpace reports whether r is in JavaScript's \s.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// jsTrim is String.prototype.trim.
func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

// jsLength is String.prototype.length: UTF-16 code units. A byte that is
// not valid UTF-8 counts as one unit (it cannot match the grammar anyway).
func jsLength(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// jsSplitSpaces is s.split(/\s+/).
func jsSplitSpaces(s string) []string { return reSpaces.Split(s, -1) }

// replaceFirst is String.prototype.replace with a non-global regexp and a
// callback: only the first match is replaced. sub receives the submatches
// with non-participating groups as "" (every callback in range.js treats
// undefined and "" alike).
func replaceFirst(re *regexp.Regexp, s string, fn func(m []string) string) string {
	loc := re.FindStringSubmatchIndex(s)
	if loc == nil {
		return s
	}
	return s[:loc[0]] + fn(submatches(s, loc)) + s[loc[1]:]
}

func submatches(s string, loc []int) []string {
	m := make([]string, len(loc)/2)
	for i := range m {
		if loc[2*i] >= 0 {
			m[i] = s[loc[2*i]:loc[2*i+1]]
		}
	}
	return m
}

// replaceAll is String.prototype.replace with a global regexp. None of the
// global regexps range.js uses can match the empty string, so Go's rule
// about empty matches next to a previous match never comes into play.
func replaceAll(re *regexp.Regexp, s string, fn func(m []string) string) string {
	var b strings.Builder
	last := 0
	for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(s[last:loc[0]])
		b.WriteString(fn(submatches(s, loc)))
		last = loc[1]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
