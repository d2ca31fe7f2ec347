// Package english writes counts in English: "1 file", "2 files", "1
// match", "3 matches". Answers, notes, errors, command output and the
// web page count through it, so none says "1 versions".
package english

import (
	"strconv"
	"strings"
)

// Count is n and the noun for n of them: Count(1, "file") is "1 file",
// Count(2, "file") "2 files". The plural is formed by Noun.
func Count(n int, singular string) string {
	return strconv.Itoa(n) + " " + Noun(n, singular)
}

// CountAs is Count with the plural given, for nouns Noun does not form
// or phrases: CountAs(n, "file or folder", "files and folders").
func CountAs(n int, singular, plural string) string {
	if n == 1 {
		return "1 " + singular
	}
	return strconv.Itoa(n) + " " + plural
}

// Noun is singular when n is 1, else its plural by English's regular
// rules, applied to the last word: -s, -x, -z, -ch and -sh take "es"
// (matches), a consonant and y "ies" (entries), others "s" (files,
// keys). Irregular nouns go through CountAs.
func Noun(n int, singular string) string {
	if n == 1 || singular == "" {
		return singular
	}
	s := singular
	switch {
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "z"),
		strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	case strings.HasSuffix(s, "y") && len(s) > 1 && !strings.ContainsRune("aeiou", rune(s[len(s)-2])):
		return s[:len(s)-1] + "ies"
	}
	return s + "s"
}

// Bytes is a size short, as answers print it: "812 B", "4.2 KB",
// "3.1 MB" (decimal units, one decimal).
func Bytes(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1000_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + " KB"
	}
	return strconv.FormatFloat(float64(n)/1000_000, 'f', 1, 64) + " MB"
}
