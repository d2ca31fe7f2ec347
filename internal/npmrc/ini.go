package npmrc

import (
	"encoding/json"
	"regexp"
	"strings"
)

// This file reproduces the decoding rules of npm's `ini` package (v5,
// lib/ini.js `decode` and `unsafe`), which is what npm uses to read every
// npmrc. Agreement matters more than elegance here: a token line that npm
// reads one way and we read another is an authentication failure nobody can
// explain. The golden cases in ini_test.go were produced by running that
// package under node.

// lineSplit is ini's line separator: any run of CR and LF.
var lineSplit = regexp.MustCompile(`[\r\n]+`)

// Regular expressions copied from ini.decode. A line is a section header
// ("[name]") or "key" / "key=value", where the raw key holds no '='.
// jsSpace and jsDot spell out JavaScript's \s and '.', which differ from
// Go's (JS \s is Unicode-aware; JS '.' stops at U+2028 and U+2029 too).
const (
	jsSpace = `[\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]`
	jsDot   = `[^\n\r\x{2028}\x{2029}]`
)

var (
	commentLine = regexp.MustCompile(`^` + jsSpace + `*[;#]`)
	blankLine   = regexp.MustCompile(`^` + jsSpace + `*$`)
	sectionLine = regexp.MustCompile(`^\[([^\]]*)\]` + jsSpace + `*$`)
	keyLine     = regexp.MustCompile(`^([^=]+)(=(` + jsDot + `*))?$`)
)

// entry is one key = value line of an npmrc outside any section.
type entry struct {
	key string
	// value is the decoded string value. It is empty and str is false for
	// values ini turns into something other than a string: a bare key
	// (true), true/false/null, or a quoted JSON number, or a "key[]" list
	// entry. npm ignores such values for the settings read here.
	value string
	str   bool
}

// lineKind tells what parseLine found.
type lineKind int

const (
	lineSkip    lineKind = iota // blank, comment, or not matched by ini's regexp
	lineSection                 // "[name]": later keys belong to a section
	lineEntry                   // key or key=value
)

// parseLine decodes one line (without CR or LF) as ini.decode does.
func parseLine(line string) (entry, lineKind) {
	if line == "" || commentLine.MatchString(line) || blankLine.MatchString(line) {
		return entry{}, lineSkip
	}
	if sectionLine.MatchString(line) {
		return entry{}, lineSection
	}
	m := keyLine.FindStringSubmatch(line)
	if m == nil {
		return entry{}, lineSkip
	}
	key, keyStr := unsafe(m[1])
	if !keyStr {
		// A quoted key that JSON-parses to a non-string ('123', 'true')
		// becomes that value's string form as a JavaScript object key.
		key = trimJS(m[1])
		key = key[1 : len(key)-1]
	}
	if len(key) > 2 && strings.HasSuffix(key, "[]") {
		// "key[]=v" builds a list; no setting read here is a list.
		return entry{key: key[:len(key)-2]}, lineEntry
	}
	if m[2] == "" {
		return entry{key: key}, lineEntry // bare key: true
	}
	value, isStr := unsafe(m[3])
	if isStr && (value == "true" || value == "false" || value == "null") {
		isStr = false
	}
	if !isStr {
		value = ""
	}
	return entry{key: key, value: value, str: isStr}, lineEntry
}

// parseINI returns the top-level entries of an npmrc in file order. Keys
// after a section header belong to that section, which npm never reads as
// configuration, so they are dropped.
func parseINI(data string) []entry {
	var out []entry
	for _, line := range lineSplit.Split(data, -1) {
		e, kind := parseLine(line)
		switch kind {
		case lineSection:
			return out
		case lineEntry:
			out = append(out, e)
		}
	}
	return out
}

// unsafe is ini's unsafe(): it trims, unquotes a quoted value (single
// quotes are stripped, then JSON.parse is tried), or else cuts an unquoted
// value at the first unescaped ';' or '#' and resolves "\;", "\#" and
// "\\". str is false when JSON.parse produced something other than a
// string.
func unsafe(val string) (s string, str bool) {
	val = trimJS(val)
	if isQuoted(val) {
		if val[0] == '\'' {
			if len(val) < 2 {
				val = ""
			} else {
				val = val[1 : len(val)-1]
			}
		}
		var v any
		if json.Valid([]byte(val)) && json.Unmarshal([]byte(val), &v) == nil {
			s, ok := v.(string)
			return s, ok
		}
		return val, true
	}
	var b strings.Builder
	esc := false
	for _, c := range val {
		switch {
		case esc:
			if !strings.ContainsRune(`\;#`, c) {
				b.WriteByte('\\')
			}
			b.WriteRune(c)
			esc = false
		case c == ';' || c == '#':
			return trimJS(b.String()), true
		case c == '\\':
			esc = true
		default:
			b.WriteRune(c)
		}
	}
	if esc {
		b.WriteByte('\\')
	}
	return trimJS(b.String()), true
}

// isQuoted is ini's isQuoted: starts and ends with the same quote. A lone
// quote character counts, as it does in ini.
func isQuoted(val string) bool {
	return (strings.HasPrefix(val, `"`) && strings.HasSuffix(val, `"`)) ||
		(strings.HasPrefix(val, `'`) && strings.HasSuffix(val, `'`))
}

// trimJS trims what JavaScript's String.prototype.trim trims, the same set
// as jsSpace (unlike strings.TrimSpace it keeps U+0085 and drops U+FEFF).
func trimJS(s string) string {
	return strings.TrimFunc(s, isJSSpace)
}

func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}
