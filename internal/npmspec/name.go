// Package npmspec checks what users type before pkgscope looks it up: a
// package name ("react", "@types/react", legacy "JSONStream") and a
// version spec (an exact version, a node-semver range or a dist-tag).
//
// The rules follow npm's own parsers, validate-npm-package-name and
// npm-package-arg; testdata/npa.json holds their answers for a set of
// inputs (recorded by ../semver/testdata/gen.js) and the tests replay them.
// Where this package is stricter than npm, the reason is that a name
// becomes a registry URL path and a store key: see ValidateName.
package npmspec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxNameLength is the longest package name npm allows (214 bytes,
// validate-npm-package-name). npm only warns about longer legacy names,
// but the registry holds none: rejecting them bounds every key built from
// a name.
const MaxNameLength = 214

// ErrInvalidName is matched (errors.Is) by every error ValidateName returns.
var ErrInvalidName = errors.New("invalid package name")

// NameError says why a package name was rejected.
type NameError struct {
	Name   string
	Reason string // e.g. "may not start with a dot"
}

// maxQuoted bounds how much of a rejected name an error message repeats.
const maxQuoted = 64

func (e *NameError) Error() string {
	n := e.Name
	if len(n) > maxQuoted {
		n = n[:maxQuoted] + "..."
	}
	return "package name " + e.Reason + ": " + strconv.Quote(n)
}

// Is makes errors.Is(err, ErrInvalidName) true.
func (e *NameError) Is(target error) bool { return target == ErrInvalidName }

// ValidateName returns nil if name may be looked up, or a *NameError
// saying what is wrong. It accepts what validate-npm-package-name accepts
// for existing packages (validForOldPackages: capital letters, core module
// names and the characters ~'!()* are only warnings there) with four
// additions, because a name is spliced into a registry URL path and a store
// key and its scope picks a registry: at most MaxNameLength bytes, no ".."
// anywhere, the scope, like the name, may not start with a dot ("@../x"
// would otherwise pass), and the scope is lower case (as npm requires of
// every scoped package; "@MyOrg/x" would otherwise miss @myorg's registry).
func ValidateName(name string) error {
	bad := func(format string, args ...any) error {
		return &NameError{Name: name, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case name == "":
		return bad("may not be empty")
	case len(name) > MaxNameLength:
		return bad("may be at most %d characters long, not %d", MaxNameLength, len(name))
	case strings.TrimSpace(name) != name || strings.ContainsAny(name, " \t\r\n"):
		return bad("may not contain spaces")
	case name[0] == '.':
		return bad("may not start with a dot")
	case name[0] == '_':
		return bad("may not start with an underscore")
	case name[0] == '-':
		return bad("may not start with a hyphen")
	case strings.Contains(name, ".."):
		return bad(`may not contain ".."`)
	case strings.EqualFold(name, "node_modules") || strings.EqualFold(name, "favicon.ico"):
		return bad("may not be %q", strings.ToLower(name))
	}
	pkg := name
	if name[0] == '@' {
		scope, rest, ok := strings.Cut(name[1:], "/")
		switch {
		case !ok:
			return bad(`with a scope must look like "@scope/name"`)
		case scope == "":
			return bad("has an empty scope")
		case rest == "":
			return bad("has a scope but no name after it")
		case scope[0] == '.':
			return bad("may not have a scope that starts with a dot")
		case strings.ToLower(scope) != scope:
			// npm has never allowed capitals in a scope (scopes came
			// after the lower-case rule), so no registry holds one, and a
			// scope matched against .npmrc and token scopes in another
			// case must not slip past them to another registry.
			return bad("may not have capital letters in its scope (npm scopes are lower case: @%s)", strings.ToLower(scope))
		case strings.Contains(rest, "/"):
			return bad(`may contain only one "/", after the scope`)
		}
		if err := urlSafe(scope, bad); err != nil {
			return err
		}
		pkg = rest
		if pkg[0] == '.' {
			return bad("may not start with a dot after the scope")
		}
	} else if strings.Contains(name, "/") {
		return bad(`may contain "/" only after a @scope`)
	}
	return urlSafe(pkg, bad)
}

// urlSafe rejects any byte encodeURIComponent would escape: names must be
// usable in a URL path as they are.
func urlSafe(s string, bad func(string, ...any) error) error {
	for i := 0; i < len(s); i++ {
		if !isURLSafe(s[i]) {
			if s[i] < 0x20 || s[i] >= 0x7f {
				return bad("may contain only URL-safe characters (letters, digits and - . _ ~ ! * ' ( )), not byte 0x%02x", s[i])
			}
			return bad("may contain only URL-safe characters (letters, digits and - . _ ~ ! * ' ( )), not %q", s[i])
		}
	}
	return nil
}

// isURLSafe reports whether encodeURIComponent leaves c alone.
func isURLSafe(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-_.!~*'()", c) >= 0
}
