package npmrc

import "strings"

// envReplace expands ${NAME} and ${NAME?} in s the way npm's config does
// (@npmcli/config lib/env-replace.js), for keys and values alike:
//
//   - ${NAME} becomes the variable's value, or stays literally "${NAME}"
//     when the variable is not set (npm does not fail; the registry then
//     rejects the literal token);
//   - ${NAME?} becomes the value, or "" when the variable is not set;
//   - a run of backslashes before "$" escapes: an odd run keeps the
//     expression literal, and each pair becomes one backslash.
//
// NAME is one or more characters other than '$', '{', '}' and '?'. An
// empty value from env counts as "not set", since env cannot tell the two
// apart.
func envReplace(s string, env func(string) string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	i := 0 // s[:i] has been copied to b
	for j := 0; j < len(s); {
		k := strings.Index(s[j:], "${")
		if k < 0 {
			break
		}
		dollar := j + k
		name, optional, end, ok := envExpr(s, dollar)
		if !ok {
			j = dollar + 1
			continue
		}
		start := dollar
		for start > i && s[start-1] == '\\' {
			start--
		}
		esc := dollar - start
		b.WriteString(s[i:start])
		if esc%2 == 1 {
			// Odd: drop (esc+1)/2 backslashes, keep the rest and the
			// expression as written.
			b.WriteString(s[start+(esc+1)/2 : end])
		} else {
			b.WriteString(s[start : start+esc/2])
			if v := env(name); v != "" {
				b.WriteString(v)
			} else if !optional {
				b.WriteString(s[dollar:end])
			}
		}
		i, j = end, end
	}
	b.WriteString(s[i:])
	return b.String()
}

// envExpr parses "${NAME}" or "${NAME?}" at s[dollar:], returning the index
// just past the closing brace.
func envExpr(s string, dollar int) (name string, optional bool, end int, ok bool) {
	p := dollar + 2
	q := p
	for q < len(s) && !strings.ContainsRune("${}?", rune(s[q])) {
		q++
	}
	if q == p || q >= len(s) {
		return "", false, 0, false
	}
	name = s[p:q]
	if s[q] == '?' {
		optional = true
		q++
	}
	if q >= len(s) || s[q] != '}' {
		return "", false, 0, false
	}
	return name, optional, q + 1, true
}
