package fakeregistry

import (
	"strconv"
	"strings"
)

// semver is just enough of semver 2.0.0 to pick dist-tags.latest.
type semver struct {
	nums [3]uint64
	pre  []string
}

func parseSemver(v string) (semver, bool) {
	var s semver
	v, _, _ = strings.Cut(v, "+")
	core, pre, hasPre := strings.Cut(v, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return s, false
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil || (len(p) > 1 && p[0] == '0') {
			return s, false
		}
		s.nums[i] = n
	}
	if hasPre {
		s.pre = strings.Split(pre, ".")
		for _, id := range s.pre {
			if id == "" {
				return s, false
			}
		}
	}
	return s, true
}

// compare orders a and b by semver precedence.
func (a semver) compare(b semver) int {
	for i := range a.nums {
		if a.nums[i] != b.nums[i] {
			if a.nums[i] < b.nums[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a.pre) == 0 && len(b.pre) == 0:
		return 0
	case len(a.pre) == 0:
		return 1
	case len(b.pre) == 0:
		return -1
	}
	for i := 0; i < len(a.pre) && i < len(b.pre); i++ {
		if c := compareIdent(a.pre[i], b.pre[i]); c != 0 {
			return c
		}
	}
	return len(a.pre) - len(b.pre)
}

// compareIdent orders prerelease identifiers: numeric ones numerically and
// below alphanumeric ones, which compare as ASCII.
func compareIdent(a, b string) int {
	na, errA := strconv.ParseUint(a, 10, 64)
	nb, errB := strconv.ParseUint(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		if na == nb {
			return 0
		} else if na < nb {
			return -1
		}
		return 1
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// highest picks the highest release, or the highest prerelease when there
// is no release, among versions not published under another tag.
func highest(versions map[string]*version) string {
	var best, bestPre string
	var bs, bp semver
	for v, meta := range versions {
		if meta.tagged {
			continue
		}
		s, _ := parseSemver(v)
		if len(s.pre) == 0 {
			if best == "" || s.compare(bs) > 0 {
				best, bs = v, s
			}
		} else if bestPre == "" || s.compare(bp) > 0 {
			bestPre, bp = v, s
		}
	}
	if best != "" {
		return best
	}
	return bestPre
}
