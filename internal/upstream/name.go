package upstream

import (
	"fmt"
	"strings"
)

// maxNameLength bounds names before any request. npm refuses to publish
// names over 214 characters but validate-npm-package-name only warns for
// old packages, so the bound is looser: 1 KiB is certainly not a package.
const maxNameLength = 1024

// escapeName checks that name can be an npm package name and returns it as
// it goes in a registry URL path: "@scope/name" becomes "@scope%2fname".
//
// npm names are URL-safe by rule (encodeURIComponent(name) must equal name,
// for old packages too), so the check is a character set, plus: one
// optional "@scope/" prefix, no leading '.' or '_', no "." or "..". That
// rule also keeps names from escaping the registry's path.
func escapeName(name string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%q: %s: %w", truncate(name), why, ErrInvalidName)
	}
	if name == "" || len(name) > maxNameLength {
		return bad("empty or too long")
	}
	scope, base := "", name
	if strings.HasPrefix(name, "@") {
		var ok bool
		scope, base, ok = strings.Cut(name[1:], "/")
		if !ok {
			return bad("a scoped name is @scope/name")
		}
		if err := checkPart(scope); err != "" {
			return bad("scope " + err)
		}
	}
	if err := checkPart(base); err != "" {
		return bad(err)
	}
	if scope != "" {
		return "@" + scope + "%2f" + base, nil
	}
	return base, nil
}

// checkPart checks a scope or a name without scope; "" means valid.
func checkPart(p string) string {
	if p == "" {
		return "is empty"
	}
	if p[0] == '.' || p[0] == '_' {
		return "starts with '.' or '_'"
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("-_.!~*'()", c) >= 0
		if !ok {
			return fmt.Sprintf("has %q, which is not URL-safe", c)
		}
	}
	return ""
}

// truncate keeps error messages bounded when a caller passes junk.
func truncate(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}
