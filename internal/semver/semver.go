// Package semver decides which published version `npm install name@spec`
// would pick, so that pkgscope serves the same files npm would install.
//
// Version and range semantics come from nodesemver, a port of node-semver
// checked against vectors recorded from node-semver itself
// (testdata/vectors.json, made by testdata/gen.js). The choice among
// candidates follows npm-pick-manifest; the pick-manifest vectors in the
// same file check it. pkgscope has no engines, publish times, staged or
// policy-restricted versions, so pick-manifest's rules for those do not
// apply: what remains is dist-tags, deprecation and semver order.
package semver

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/nodesemver"
	"github.com/pkgscope/pkgscope/internal/npmspec"
)

// ErrNoMatch is matched (errors.Is) by Select's error when no published
// version fits the spec; the error text names the spec.
var ErrNoMatch = errors.New("no matching version")

// Candidate is one published version.
type Candidate struct {
	// Version is the key of the version in the packument, as published.
	Version string
	// Deprecated is true when the version's manifest has a deprecation
	// message.
	Deprecated bool
}

// defaultTag is the dist-tag a range prefers, as npm's defaultTag.
const defaultTag = "latest"

// Select returns the version npm would install for spec among
// candidates, following npm-pick-manifest:
//
//   - a Tag spec gives distTags[tag], which must be a published version;
//   - a Version spec gives that exact version if it is published;
//   - a Range spec gives distTags["latest"] when it satisfies the range
//     (or the range is exactly "*") and is published and not deprecated;
//     otherwise the highest satisfying non-deprecated version, else the
//     highest satisfying deprecated one.
//
// Ranges and versions are read in node-semver's loose mode, as npm reads
// them, and prereleases only satisfy a range that names a prerelease of
// the same major.minor.patch (includePrerelease off). Candidates whose
// version does not parse never satisfy a range. Between versions of equal
// precedence ("2.0.0" and "2.0.0+b") the one listed first wins.
//
// The error wraps ErrNoMatch when nothing fits, and says which spec.
func Select(spec npmspec.Spec, candidates []Candidate, distTags map[string]string) (string, error) {
	published := make(map[string]Candidate, len(candidates))
	for _, c := range candidates {
		if _, dup := published[c.Version]; !dup {
			published[c.Version] = c
		}
	}
	switch spec.Kind {
	case npmspec.Tag:
		v, ok := distTags[spec.Raw]
		if !ok {
			return "", fmt.Errorf("%w: no dist-tag %q; %s", ErrNoMatch, spec.Raw, tagNames(distTags))
		}
		if _, ok := published[v]; !ok {
			return "", fmt.Errorf("%w: dist-tag %q points to %q, which is not published", ErrNoMatch, spec.Raw, v)
		}
		return v, nil
	case npmspec.Version:
		v, ok := nodesemver.Clean(spec.Raw, nodesemver.Loose)
		if !ok {
			v = spec.Raw
		}
		if _, ok := published[v]; !ok {
			return "", fmt.Errorf("%w: version %q is not published; %s%s", ErrNoMatch, v, highestInLine(v, candidates), highest(candidates, distTags))
		}
		return v, nil
	case npmspec.Range:
		return selectRange(spec.Raw, candidates, distTags, published)
	}
	return "", fmt.Errorf("select: spec %q has unknown kind %d", spec.Raw, spec.Kind)
}

func selectRange(raw string, candidates []Candidate, distTags map[string]string, published map[string]Candidate) (string, error) {
	rng, err := nodesemver.ParseRange(raw, nodesemver.Loose)
	if err != nil {
		return "", fmt.Errorf("%w: range %q: %w", ErrNoMatch, raw, err)
	}
	satisfies := func(v string) bool {
		if v == "" {
			return false
		}
		p, err := nodesemver.Parse(v, nodesemver.Loose)
		return err == nil && rng.Test(p)
	}
	// pick-manifest compares the range text with "*" before testing, so
	// "*" takes latest even when latest is a prerelease.
	if latest, ok := distTags[defaultTag]; ok && latest != "" && (raw == "*" || satisfies(latest)) {
		if c, ok := published[latest]; ok && !c.Deprecated {
			return latest, nil
		}
	}
	type entry struct {
		c Candidate
		v *nodesemver.Version
	}
	var entries []entry
	for _, c := range candidates {
		if c.Version == "" {
			continue
		}
		p, err := nodesemver.Parse(c.Version, nodesemver.Loose)
		if err != nil || !rng.Test(p) {
			continue
		}
		entries = append(entries, entry{c, p})
	}
	if len(entries) == 0 {
		return "", fmt.Errorf("%w: range %q matches none of %s; %s", ErrNoMatch, raw, english.Count(len(candidates), "version"), highest(candidates, distTags))
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.c.Deprecated != b.c.Deprecated {
			return !a.c.Deprecated
		}
		return a.v.Compare(b.v) > 0
	})
	return entries[0].c.Version, nil
}

// highest names what a caller who asked for an unpublished version can
// ask for instead: the highest release (a prerelease only when there is
// no release), and the latest dist-tag when it is another version, as in
// "the highest is 3.1.0 (latest is 2.9.4)". An agent that guessed
// "zod@99" corrects itself from this line alone.
func highest(candidates []Candidate, distTags map[string]string) string {
	var best, bestPre *nodesemver.Version
	var bestV, bestPreV string
	for _, c := range candidates {
		p, err := nodesemver.Parse(c.Version, nodesemver.Loose)
		switch {
		case err != nil:
		case !p.IsPrerelease() && (best == nil || p.Compare(best) > 0):
			best, bestV = p, c.Version
		case p.IsPrerelease() && (bestPre == nil || p.Compare(bestPre) > 0):
			bestPre, bestPreV = p, c.Version
		}
	}
	if best == nil {
		bestV = bestPreV
	}
	latest := distTags[defaultTag]
	switch {
	case bestV == "" && latest == "":
		return "it has no published versions"
	case bestV == "":
		return fmt.Sprintf("%s is %s", defaultTag, latest)
	case latest == "" || latest == bestV:
		return fmt.Sprintf("the highest is %s (also %s)", bestV, defaultTag)
	}
	return fmt.Sprintf("the highest is %s (%s is %s)", bestV, defaultTag, latest)
}

// highestInLine names the highest release in v's line (its major, or
// 0.minor below 1.0.0, as a caret range reads it) when that is not the
// highest of all, followed by "; ": an agent that guessed react@18.9.0
// meant react 18, and "the highest is 19.3.1" alone sends it to another
// major. "" when v does not parse or its line has no other release.
func highestInLine(v string, candidates []Candidate) string {
	want, err := nodesemver.Parse(v, nodesemver.Loose)
	if err != nil {
		return ""
	}
	inLine := func(p *nodesemver.Version) bool {
		return p.Major == want.Major && (want.Major > 0 || p.Minor == want.Minor)
	}
	var best, top *nodesemver.Version
	var bestV string
	for _, c := range candidates {
		p, err := nodesemver.Parse(c.Version, nodesemver.Loose)
		if err != nil || p.IsPrerelease() {
			continue
		}
		if top == nil || p.Compare(top) > 0 {
			top = p
		}
		if inLine(p) && (best == nil || p.Compare(best) > 0) {
			best, bestV = p, c.Version
		}
	}
	if best == nil || best.Compare(top) == 0 {
		return ""
	}
	line := fmt.Sprintf("%d.x", want.Major)
	if want.Major == 0 {
		line = fmt.Sprintf("0.%d.x", want.Minor)
	}
	return fmt.Sprintf("the highest %s is %s; ", line, bestV)
}

// maxTagsNamed is how many dist-tags an unknown tag's error lists: most
// packages have one to three, a few (@types/*) dozens.
const maxTagsNamed = 10

// tagNames lists the dist-tags there are, for an unknown one: "dist-tags:
// latest, next, canary".
func tagNames(distTags map[string]string) string {
	if len(distTags) == 0 {
		return "it has no dist-tags"
	}
	names := make([]string, 0, len(distTags))
	for t := range distTags {
		names = append(names, t)
	}
	sort.Strings(names)
	// latest first: the tag to fall back on.
	sort.SliceStable(names, func(i, j int) bool { return names[i] == defaultTag && names[j] != defaultTag })
	more := ""
	if len(names) > maxTagsNamed {
		more = fmt.Sprintf(" and %d more", len(names)-maxTagsNamed)
		names = names[:maxTagsNamed]
	}
	return "dist-tags: " + strings.Join(names, ", ") + more
}

// Valid reports whether v is a version in node-semver's strict grammar
// (semver.valid): "1.2.3", "1.0.0-rc.1+build"; a leading "v" and
// surrounding spaces are tolerated, as node does.
func Valid(v string) bool {
	_, ok := nodesemver.Valid(v, nodesemver.Strict)
	return ok
}

// Compare orders two versions by SemVer precedence, reading them loosely
// as npm does; it returns -1, 0 or 1. Build metadata is ignored. A string
// that is not a version sorts before every version, and two such strings
// compare as strings, so Compare is a consistent order for sorting.
func Compare(a, b string) int {
	va, errA := nodesemver.Parse(a, nodesemver.Loose)
	vb, errB := nodesemver.Parse(b, nodesemver.Loose)
	switch {
	case errA != nil && errB != nil:
		return strings.Compare(a, b)
	case errA != nil:
		return -1
	case errB != nil:
		return 1
	}
	return va.Compare(vb)
}
