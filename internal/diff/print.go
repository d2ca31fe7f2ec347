package diff

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// npm does not write libnpmdiff's text as it is: its output layer
// (npm/lib/utils/format.js, @npmcli/redact) rewrites every line it prints.
// What it does, in order, and what this file reproduces:
//
//  1. C0 and C1 control characters other than tab, newline, vertical tab
//     and carriage return become caret notation ("\x00" → "^@", "\x7f" →
//     "^?", U+0085 → "^E"), except ESC starting an SGR colour sequence;
//  2. each whitespace- or "="-separated word is redacted: the password of
//     a URL ("https://u:***@h"), npm tokens ("npm_***") and UUIDs ("***");
//  3. lines are split on "\r?\n" and each is ended with "\n", so CRLF
//     files print with LF.
//
// So a diff that touches a UUID shows "***" in npm diff and here too.

// printNpm applies npm's output layer to complete lines of text.
func printNpm(s string) string {
	s = stripC01(s)
	s = redactWords(s)
	return strings.ReplaceAll(s, "\r\n", "\n")
}

// stripC01 is format.js's STRIP_C01.
func stripC01(s string) string {
	if !hasC01(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !isC01(r):
			b.WriteString(s[i : i+n])
		case r == 0x1b && allowedSGR.MatchString(s[i+1:min(len(s), i+1+10)]):
			b.WriteByte(0x1b)
		case r <= 31:
			b.WriteByte('^')
			b.WriteByte(byte(r + 64))
		default: // U+007F … U+009F
			b.WriteByte('^')
			b.WriteRune(r - 64)
		}
		i += n
	}
	return b.String()
}

var allowedSGR = regexp.MustCompile(`^\[[0-9;]{0,8}m`)

func isC01(r rune) bool {
	return (r <= 0x08) || r == 0x0c || (r >= 0x0e && r <= 0x1f) || (r >= 0x7f && r <= 0x9f)
}

func hasC01(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x08 || c == 0x0c || (c >= 0x0e && c <= 0x1f) || c == 0x7f {
			return true
		}
		if c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f {
			return true // U+0080 … U+009F
		}
	}
	return false
}

var (
	npmSecret = regexp.MustCompile(`(?i)\bnpms?_[a-zA-Z0-9]{36,48}\b`)
	uuidRe    = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	// urlPassword: a word that is a URL with a password, as WHATWG URL
	// parses it: scheme, "//", user, ":", password, "@" (the last one of
	// the authority), a host. The scheme is lower case because redact
	// matches the parsed (lower-cased) protocol against the word.
	urlPassword = regexp.MustCompile(`^([a-z][a-z0-9+.-]*://[^/?#\\@:]*:)([^/?#\\]*)@([^/?#\\@]+)`)
)

// redactWords is @npmcli/redact's redactLog: the text split on JavaScript
// whitespace and "=", each word redacted.
func redactWords(s string) string {
	if !strings.Contains(s, "://") && !mayHoldSecret(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == '=' || isJSSpace(r) {
			b.WriteString(redactWord(s[start:i]))
			b.WriteString(s[i : i+n])
			start = i + n
		}
		i += n
	}
	b.WriteString(redactWord(s[start:]))
	return b.String()
}

// mayHoldSecret is a cheap test for the two token patterns: a UUID has
// four '-' and an npm token "_".
func mayHoldSecret(s string) bool {
	return strings.Contains(s, "-") || strings.Contains(s, "_")
}

func redactWord(w string) string {
	if w == "" {
		return w
	}
	if m := urlPassword.FindStringSubmatchIndex(w); m != nil && m[5] > m[4] {
		// redactUrlPassword keeps "scheme://user:" and puts "***" for
		// the password; the "@host…" rest stays.
		w = w[:m[3]] + "***" + w[m[5]:]
	}
	if strings.Contains(w, "_") {
		w = npmSecret.ReplaceAllLiteralString(w, "npm_***")
	}
	if strings.Count(w, "-") >= 4 {
		w = uuidRe.ReplaceAllString(w, "***")
	}
	return w
}
