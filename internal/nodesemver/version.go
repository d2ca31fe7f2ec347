// Package nodesemver is a line-by-line port of node-semver 7.x (the semver
// package npm itself uses): version parsing and ordering, and range parsing
// with the same desugaring (hyphen, caret, tilde, x-range, star) and the
// same prerelease rule.
//
// It exists because no Go library agrees with npm closely enough to decide
// which version `npm install name@range` would pick. The best candidate,
// github.com/aquasecurity/go-npm-version v0.0.2, failed 2527 of the 31280
// strict satisfies vectors (3498 of 31280 loose): it rejects hyphen ranges
// and `~>` (99 valid ranges), applies the prerelease rule per comparator
// instead of per comparator set (so `>=1.2.3-alpha <2` refuses
// 1.2.3-beta), accepts 91 ranges node-semver rejects, and disagrees on
// versions ("v1.2.3" invalid, 2^53 valid). This port passes every vector in
// ../semver/testdata/vectors.json, which ../semver/testdata/gen.js records from
// node-semver 7.8.5; rerun it to check a newer release.
//
// The port keeps node-semver's quirks on purpose, because they decide what
// npm accepts: JavaScript whitespace (U+00A0, U+FEFF, ...) counts as
// space, version strings are limited to 256 UTF-16 units, numbers above
// 2^53-1 are rejected, loose mode tolerates "v", "=", leading zeros and
// "1.2.3beta", and loose range parsing silently drops comparators it cannot
// read ("1.2.3 foo" means "1.2.3").
//
// includePrerelease is not supported: npm resolves with it off.
package nodesemver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Mode selects node-semver's grammar: Strict is the default of
// semver.valid/satisfies, Loose is {loose: true}, which npm uses for every
// spec and every published version it compares.
type Mode int

// The two grammars.
const (
	Strict Mode = iota
	Loose
)

// String returns "strict" or "loose".
func (m Mode) String() string {
	if m == Loose {
		return "loose"
	}
	return "strict"
}

// Errors returned by the parsers, wrapped with the offending input.
var (
	ErrInvalidVersion = errors.New("invalid version")
	ErrInvalidRange   = errors.New("invalid range")
)

// Version is a parsed semantic version.
type Version struct {
	Major, Minor, Patch uint64
	// Prerelease holds the dot-separated prerelease identifiers as
	// node-semver prints them: numeric ones below 2^53-1 lose leading
	// zeros (loose mode only allows those).
	Prerelease []string
	// Build holds the build metadata identifiers; they never affect order.
	Build []string
	// version is the canonical form without build metadata.
	version string
}

// Parse parses a version the way `new SemVer(s, {loose})` does. Surrounding
// whitespace is ignored; a leading "v" is allowed in both modes.
func Parse(s string, mode Mode) (*Version, error) {
	if jsLength(s) > MaxLength {
		return nil, fmt.Errorf("%w: longer than %d characters", ErrInvalidVersion, MaxLength)
	}
	re := reFull
	if mode == Loose {
		re = reLoose
	}
	m := re.FindStringSubmatch(jsTrim(s))
	if m == nil {
		return nil, fmt.Errorf("%w: %q", ErrInvalidVersion, s)
	}
	v := &Version{}
	for i, p := range []*uint64{&v.Major, &v.Minor, &v.Patch} {
		n, ok := safeInteger(m[1+i])
		if !ok {
			return nil, fmt.Errorf("%w: %q: %s number above %d", ErrInvalidVersion, s,
				[]string{"major", "minor", "patch"}[i], uint64(MaxSafeInteger))
		}
		*p = n
	}
	if m[4] != "" {
		v.Prerelease = strings.Split(m[4], ".")
		for i, id := range v.Prerelease {
			// numberify: ids that fit below 2^53-1 become numbers and
			// so print without leading zeros.
			if isDigits(id) {
				if n, ok := safeInteger(id); ok && n < MaxSafeInteger {
					v.Prerelease[i] = strconv.FormatUint(n, 10)
				}
			}
		}
	}
	if m[5] != "" {
		v.Build = strings.Split(m[5], ".")
	}
	v.format()
	return v, nil
}

func (v *Version) format() {
	v.version = strconv.FormatUint(v.Major, 10) + "." + strconv.FormatUint(v.Minor, 10) + "." +
		strconv.FormatUint(v.Patch, 10)
	if len(v.Prerelease) > 0 {
		v.version += "-" + strings.Join(v.Prerelease, ".")
	}
}

// String returns the canonical form, without build metadata, as
// node-semver's version property.
func (v *Version) String() string { return v.version }

// IsPrerelease reports whether v has prerelease identifiers.
func (v *Version) IsPrerelease() bool { return len(v.Prerelease) > 0 }

// Compare returns -1, 0 or 1 as v sorts before, with or after o, by
// SemVer precedence; build metadata is ignored.
func (v *Version) Compare(o *Version) int {
	if v.version == o.version {
		return 0
	}
	if c := v.compareMain(o); c != 0 {
		return c
	}
	return v.comparePre(o)
}

func (v *Version) compareMain(o *Version) int {
	for _, p := range [][2]uint64{{v.Major, o.Major}, {v.Minor, o.Minor}, {v.Patch, o.Patch}} {
		if p[0] < p[1] {
			return -1
		}
		if p[0] > p[1] {
			return 1
		}
	}
	return 0
}

func (v *Version) comparePre(o *Version) int {
	// Not having a prerelease sorts higher.
	switch a, b := len(v.Prerelease), len(o.Prerelease); {
	case a > 0 && b == 0:
		return -1
	case a == 0 && b > 0:
		return 1
	case a == 0 && b == 0:
		return 0
	}
	for i := 0; ; i++ {
		switch {
		case i >= len(v.Prerelease) && i >= len(o.Prerelease):
			return 0
		case i >= len(o.Prerelease):
			return 1
		case i >= len(v.Prerelease):
			return -1
		case v.Prerelease[i] == o.Prerelease[i]:
			continue
		}
		// node returns here even when the identifiers compare equal as
		// numbers (two numeric strings above 2^53 that round to the
		// same double), without looking at later identifiers.
		return compareIdentifiers(v.Prerelease[i], o.Prerelease[i])
	}
}

// compareIdentifiers is internal/identifiers.js: numeric identifiers sort
// below alphanumeric ones and compare as JavaScript numbers (doubles).
func compareIdentifiers(a, b string) int {
	an, bn := isDigits(a), isDigits(b)
	if an && bn {
		fa, _ := strconv.ParseFloat(a, 64)
		fb, _ := strconv.ParseFloat(b, 64)
		switch {
		case fa == fb:
			return 0
		case fa < fb:
			return -1
		}
		return 1
	}
	switch {
	case a == b:
		return 0
	case an:
		return -1
	case bn:
		return 1
	case a < b:
		return -1
	}
	return 1
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// safeInteger converts a string of digits as JavaScript's unary plus does
// and reports whether the result is at most MaxSafeInteger. Every integer
// above it rounds to a double of at least 2^53, so an exact comparison is
// the same test.
func safeInteger(digits string) (uint64, bool) {
	d := strings.TrimLeft(digits, "0")
	if d == "" {
		return 0, true
	}
	if len(d) > 16 {
		return 0, false
	}
	n, err := strconv.ParseUint(d, 10, 64)
	if err != nil || n > MaxSafeInteger {
		return 0, false
	}
	return n, true
}

// jsIncrement returns String(+digits + 1): the arithmetic range.js does
// on captured numbers, including its double rounding and its exponent
// notation from 1e21 up ("1e+21" is then not a valid version, which
// changes what a loose range keeps).
func jsIncrement(digits string) string {
	f, _ := strconv.ParseFloat(digits, 64)
	f++
	if f < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'e', -1, 64)
}

// Valid returns the canonical form of v and true if v parses in mode, as
// semver.valid does.
func Valid(v string, mode Mode) (string, bool) {
	p, err := Parse(v, mode)
	if err != nil {
		return "", false
	}
	return p.String(), true
}

// Clean is semver.clean: trim, drop any leading "=" and "v" characters,
// parse, and return the canonical form (without build metadata).
func Clean(v string, mode Mode) (string, bool) {
	return Valid(strings.TrimLeft(jsTrim(v), "=v"), mode)
}
