package diff

import (
	"unicode/utf8"
)

// decodeUTF8 turns a body into the string npm diff compares and prints:
// Node's Buffer.toString('utf8'), which follows the WHATWG decoder. Each
// maximal ill-formed subsequence becomes one U+FFFD (Go's range loop would
// give one per byte, and strings.ToValidUTF8 one per run, so neither
// matches), and a byte-order mark is kept.
func decodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	const repl = "\uFFFD"
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			out = append(out, c)
			i++
			continue
		}
		// The WHATWG algorithm: the lead byte fixes how many continuation
		// bytes follow and the range of the first one.
		var need int
		lower, upper := byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c >= 0xE0 && c <= 0xEF:
			need = 2
			if c == 0xE0 {
				lower = 0xA0
			} else if c == 0xED {
				upper = 0x9F
			}
		case c >= 0xF0 && c <= 0xF4:
			need = 3
			if c == 0xF0 {
				lower = 0x90
			} else if c == 0xF4 {
				upper = 0x8F
			}
		default:
			out = append(out, repl...)
			i++
			continue
		}
		j := i + 1
		ok := true
		for k := 0; k < need; k++ {
			if j >= len(b) || b[j] < lower || b[j] > upper {
				ok = false
				break
			}
			lower, upper = 0x80, 0xBF
			j++
		}
		if !ok {
			// The bytes consumed so far form one maximal subpart; the
			// offending byte is looked at again as a fresh start.
			out = append(out, repl...)
			i = j
			continue
		}
		out = append(out, b[i:j]...)
		i = j
	}
	return string(out)
}

// isJSSpace reports whether r is removed by JavaScript's String.prototype.trim:
// WhiteSpace and LineTerminator of ECMA-262.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// jsTrimLeft and jsTrimRight are String.prototype.trimStart / trimEnd.
func jsTrimLeft(s string) string {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if !isJSSpace(r) {
			break
		}
		s = s[n:]
	}
	return s
}

func jsTrimRight(s string) string {
	for len(s) > 0 {
		r, n := utf8.DecodeLastRuneInString(s)
		if !isJSSpace(r) {
			break
		}
		s = s[:len(s)-n]
	}
	return s
}

func jsTrim(s string) string { return jsTrimRight(jsTrimLeft(s)) }
