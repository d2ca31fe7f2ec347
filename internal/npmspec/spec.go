package npmspec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pkgscope/pkgscope/internal/nodesemver"
)

// MaxSpecLength bounds a version spec in bytes. node-semver caps versions
// at 256 characters but not ranges, and parsing a range costs about 35µs
// for "^1.2.3 || >=2.0.0 <3" and 0.7ms at 256 bytes (regexp matching, on
// the 2-core dev machine); 256 is far above any range seen in practice and
// keeps one request cheap.
const MaxSpecLength = 256

// ErrInvalidSpec is matched (errors.Is) by every error ParseSpec returns.
var ErrInvalidSpec = errors.New("invalid version spec")

// SpecKind says how a spec selects a version, as npm-package-arg's type.
type SpecKind int

// The kinds of spec pkgscope resolves. Git, URL, file, directory, alias
// and workspace specs are rejected: pkgscope serves registry tarballs only.
const (
	// Version is one exact version; Spec.Raw is its canonical form.
	Version SpecKind = iota + 1
	// Range is a node-semver range; Spec.Raw is as typed (trimmed).
	Range
	// Tag is a dist-tag such as "latest" or "next".
	Tag
)

// String returns npm-package-arg's name for the kind.
func (k SpecKind) String() string {
	switch k {
	case Version:
		return "version"
	case Range:
		return "range"
	case Tag:
		return "tag"
	}
	return "SpecKind(" + strconv.Itoa(int(k)) + ")"
}

// Spec is a parsed version spec.
type Spec struct {
	Raw  string
	Kind SpecKind
}

// String returns the spec as it would be typed after name@.
func (s Spec) String() string { return s.Raw }

// ParseSpec classifies what follows "name@", as npm-package-arg does for
// registry specs: an empty spec is the range "*", as npm install reads a
// bare name (so latest unless it is deprecated and another version is
// not: npm-pick-manifest's rule for ranges); a loosely valid
// version ("1.2.3", "v1.2.3", "=1.2.3") is a Version, stored in canonical
// form; a loosely valid range ("^1.2.0", "1.x", "*", ">=2 <3",
// "1.2.3 - 2.0.0", "1 || 2") is a Range; anything else that is URL-safe is
// a Tag. Specs npm resolves somewhere other than the registry (git, URL,
// file, alias, workspace, GitHub shorthand) are rejected with an error
// naming what they look like.
//
// Loose is what npm uses, and it is lenient: "1.2.3 foo" is the range
// "1.2.3", because loose range parsing drops what it cannot read.
func ParseSpec(raw string) (Spec, error) {
	bad := func(format string, args ...any) (Spec, error) {
		q := raw
		if len(q) > maxQuoted {
			q = q[:maxQuoted] + "..."
		}
		return Spec{}, fmt.Errorf("%w %s: %s", ErrInvalidSpec, strconv.Quote(q), fmt.Sprintf(format, args...))
	}
	if len(raw) > MaxSpecLength {
		return bad("longer than %d bytes", MaxSpecLength)
	}
	s := strings.TrimSpace(raw)
	if s == "" {
		return Spec{Raw: "*", Kind: Range}, nil
	}
	if canonical(s) {
		return Spec{Raw: s, Kind: Version}, nil
	}
	lower := strings.ToLower(s)
	// The order of these checks is npm-package-arg's.
	switch {
	case strings.HasPrefix(lower, "file:") || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") ||
		strings.HasPrefix(s, "~/") || (len(s) > 1 && s[1] == ':' && isLetter(s[0])):
		return bad("file and directory specs are not supported; give a version, a range or a dist-tag")
	case strings.HasPrefix(lower, "npm:"):
		return bad("alias specs (npm:name@range) are not supported; look up the aliased package by its own name")
	case strings.Contains(s, ":"):
		proto, _, _ := strings.Cut(s, ":")
		return bad("%q specs (git, URL and protocol specs) are not supported; give a version, a range or a dist-tag", proto+":")
	case strings.ContainsAny(s, `/\`):
		return bad("looks like a GitHub shorthand (user/repo) or a path, which is not supported; give a version, a range or a dist-tag")
	case strings.HasSuffix(lower, ".tgz") || strings.HasSuffix(lower, ".tar") || strings.HasSuffix(lower, ".tar.gz"):
		return bad("tarball file specs are not supported; give a version, a range or a dist-tag")
	}
	if v, ok := nodesemver.Valid(s, nodesemver.Loose); ok {
		return Spec{Raw: v, Kind: Version}, nil
	}
	if _, ok := nodesemver.ValidRange(s, nodesemver.Loose); ok {
		return Spec{Raw: s, Kind: Range}, nil
	}
	for i := 0; i < len(s); i++ {
		if !isURLSafe(s[i]) {
			return bad("neither a version, a range nor a valid dist-tag (a tag may contain only letters, digits and - . _ ~ ! * ' ( ))")
		}
	}
	return Spec{Raw: s, Kind: Tag}, nil
}

// canonical reports whether s is a plain X.Y.Z release without leading
// zeros, which node-semver accepts as the exact version s. It is the
// commonest spec (every exact request, every lockfile entry), and the range
// grammar's regexps were 20% of a warm REST read's CPU; each part is kept
// under 16 digits so it stays below MaxSafeInteger.
func canonical(s string) bool {
	parts := 0
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && '0' <= s[j] && s[j] <= '9' {
			j++
		}
		if j == i || j-i > 15 || (s[i] == '0' && j-i > 1) {
			return false
		}
		parts++
		if j == len(s) {
			return parts == 3
		}
		if s[j] != '.' || parts == 3 {
			return false
		}
		i = j + 1
	}
	return false
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
