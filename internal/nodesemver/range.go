package nodesemver

import (
	"fmt"
	"strings"
)

// Comparator is one primitive condition such as ">=1.2.3" or "<2.0.0-0",
// or the any-version comparator (Any reports it).
type Comparator struct {
	// Op is "", "<", "<=", ">" or ">=" ("" means equal).
	Op string
	// Version is nil for the any-version comparator.
	Version *Version
	value   string
}

// Any reports whether c matches every version (node-semver's ANY).
func (c *Comparator) Any() bool { return c.Version == nil }

// String returns the comparator as node-semver formats it ("" for any).
func (c *Comparator) String() string { return c.value }

// nullSet is the comparator node-semver uses for "nothing matches".
const nullSet = "<0.0.0-0"

// newComparator is comparator.js's constructor.
func newComparator(comp string, mode Mode) (*Comparator, error) {
	comp = strings.Join(jsSplitSpaces(jsTrim(comp)), " ")
	re := reComparator
	if mode == Loose {
		re = reComparatorLoose
	}
	m := re.FindStringSubmatch(comp)
	if m == nil {
		return nil, fmt.Errorf("%w: invalid comparator %q", ErrInvalidRange, comp)
	}
	c := &Comparator{Op: m[1]}
	if c.Op == "=" {
		c.Op = ""
	}
	if m[2] == "" {
		return c, nil
	}
	v, err := Parse(m[2], mode)
	if err != nil {
		return nil, fmt.Errorf("%w: comparator %q: %w", ErrInvalidRange, comp, err)
	}
	c.Version = v
	c.value = c.Op + v.String()
	return c, nil
}

func (c *Comparator) test(v *Version) bool {
	if c.Version == nil {
		return true
	}
	n := v.Compare(c.Version)
	switch c.Op {
	case "":
		return n == 0
	case ">":
		return n > 0
	case ">=":
		return n >= 0
	case "<":
		return n < 0
	case "<=":
		return n <= 0
	}
	return false
}

// Range is a parsed range: a union (||) of comparator sets, each the
// intersection of its comparators.
type Range struct {
	set [][]*Comparator
}

// ParseRange parses a range the way `new Range(s, {loose})` does, with
// includePrerelease off.
func ParseRange(s string, mode Mode) (*Range, error) {
	raw := reSpaces.ReplaceAllLiteralString(jsTrim(s), " ")
	var set [][]*Comparator
	for _, part := range strings.Split(raw, "||") {
		comps, err := parseComparatorSet(jsTrim(part), mode)
		if err != nil {
			return nil, err
		}
		// Loose mode may leave a set empty: it is dropped.
		if len(comps) > 0 {
			set = append(set, comps)
		}
	}
	if len(set) == 0 {
		return nil, fmt.Errorf("%w: %q", ErrInvalidRange, raw)
	}
	if len(set) > 1 {
		// Drop sets that match nothing unless all do; a set that matches
		// anything makes the whole range that set.
		first := set[0]
		kept := set[:0:0]
		for _, c := range set {
			if c[0].value != nullSet {
				kept = append(kept, c)
			}
		}
		set = kept
		if len(set) == 0 {
			set = [][]*Comparator{first}
		} else if len(set) > 1 {
			for _, c := range set {
				if len(c) == 1 && c[0].Any() {
					set = [][]*Comparator{c}
					break
				}
			}
		}
	}
	return &Range{set: set}, nil
}

// Sets returns the comparator sets; a version satisfies the range when it
// passes every comparator of some set (and the prerelease rule).
func (r *Range) Sets() [][]*Comparator { return r.set }

// String formats the range as node-semver's range property: comparators
// joined by " ", sets by "||"; "" for a range that matches anything.
func (r *Range) String() string {
	var b strings.Builder
	for i, comps := range r.set {
		if i > 0 {
			b.WriteString("||")
		}
		for k, c := range comps {
			if k > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(c.value)
		}
	}
	return b.String()
}

// Test reports whether v satisfies r.
func (r *Range) Test(v *Version) bool {
	for _, comps := range r.set {
		if testSet(comps, v) {
			return true
		}
	}
	return false
}

// testSet applies the prerelease rule per comparator set: a prerelease
// version passes only if some comparator of the same set names a
// prerelease of the same major.minor.patch. So ^1.2.3-beta.2 admits
// 1.2.3-beta.3 but not 1.2.4-alpha, and ">=1.2.3-alpha <2" admits
// 1.2.3-beta (the comparator without a prerelease does not veto it).
func testSet(comps []*Comparator, v *Version) bool {
	for _, c := range comps {
		if !c.test(v) {
			return false
		}
	}
	if !v.IsPrerelease() {
		return true
	}
	for _, c := range comps {
		if c.Version == nil || !c.Version.IsPrerelease() {
			continue
		}
		if c.Version.Major == v.Major && c.Version.Minor == v.Minor && c.Version.Patch == v.Patch {
			return true
		}
	}
	return false
}

// parseComparatorSet is Range.parseRange: one ||-separated part.
func parseComparatorSet(r string, mode Mode) ([]*Comparator, error) {
	loose := mode == Loose
	r = reBuildStrip.ReplaceAllLiteralString(r, "")

	// `1.2.3 - 1.2.4` => `>=1.2.3 <=1.2.4`
	hr := reHyphen
	if loose {
		hr = reHyphenLoose
	}
	r = replaceFirst(hr, r, hyphenReplace)
	// `> 1.2.3 < 1.2.5` => `>1.2.3 <1.2.5`
	r = replaceAll(reComparatorTrim, r, func(m []string) string { return m[1] + m[2] + m[3] })
	// `~ 1.2.3` => `~1.2.3`, `^ 1.2.3` => `^1.2.3`
	r = replaceAll(reTildeTrim, r, func(m []string) string { return m[1] + "~" })
	r = replaceAll(reCaretTrim, r, func(m []string) string { return m[1] + "^" })

	parts := strings.Split(r, " ")
	for i, p := range parts {
		parts[i] = desugar(p, loose)
	}
	list := jsSplitSpaces(strings.Join(parts, " "))
	for i, c := range list {
		// >=0.0.0 is equivalent to *
		list[i] = replaceFirst(reGTE0, jsTrim(c), func([]string) string { return "" })
	}
	if loose {
		// Loose mode throws out what is not a comparator.
		kept := list[:0]
		for _, c := range list {
			if reComparatorLoose.MatchString(c) {
				kept = append(kept, c)
			}
		}
		list = kept
	}

	// Every comparator is built (and may fail) before any is inspected.
	comps := make([]*Comparator, len(list))
	for i, c := range list {
		var err error
		if comps[i], err = newComparator(c, mode); err != nil {
			return nil, err
		}
	}
	// A null set wins outright; duplicates collapse keeping the first
	// position; "any" is dropped when other comparators remain.
	var out []*Comparator
	index := map[string]int{}
	for _, c := range comps {
		if c.value == nullSet {
			return []*Comparator{c}, nil
		}
		if i, ok := index[c.value]; ok {
			out[i] = c
			continue
		}
		index[c.value] = len(out)
		out = append(out, c)
	}
	if i, ok := index[""]; ok && len(out) > 1 {
		out = append(out[:i], out[i+1:]...)
	}
	return out, nil
}

// desugar is range.js's parseComparator: one space-free token becomes
// primitive comparators (carets, then tildes, then x-ranges, then stars).
func desugar(comp string, loose bool) string {
	comp = replaceFirst(reBuild, comp, func([]string) string { return "" })
	comp = eachToken(jsTrim(comp), func(c string) string { return replaceCaret(c, loose) })
	comp = eachToken(jsTrim(comp), func(c string) string { return replaceTilde(c, loose) })
	comp = eachToken(comp, func(c string) string { return replaceXRange(c, loose) })
	return replaceFirst(reStar, jsTrim(comp), func([]string) string { return "" })
}

func eachToken(s string, fn func(string) string) string {
	toks := jsSplitSpaces(s)
	for i, t := range toks {
		toks[i] = fn(t)
	}
	return strings.Join(toks, " ")
}

func isX(id string) bool { return id == "" || id == "x" || id == "X" || id == "*" }

// ~, ~> --> * (any, kinda silly)
// ~2, ~2.x, ~2.x.x, ~>2, ~>2.x ~>2.x.x --> >=2.0.0 <3.0.0-0
// ~1.2, ~1.2.x, ~>1.2, ~>1.2.x --> >=1.2.0 <1.3.0-0
// ~1.2.3, ~>1.2.3 --> >=1.2.3 <1.3.0-0
// ~0.0.1 --> >=0.0.1 <0.1.0-0
func replaceTilde(comp string, loose bool) string {
	re := reTilde
	if loose {
		re = reTildeLoose
	}
	return replaceFirst(re, comp, func(g []string) string {
		M, m, p, pr := g[1], g[2], g[3], g[4]
		switch {
		case isX(M):
			return ""
		case isX(m):
			return ">=" + M + ".0.0 <" + jsIncrement(M) + ".0.0-0"
		case isX(p):
			return ">=" + M + "." + m + ".0 <" + M + "." + jsIncrement(m) + ".0-0"
		case pr != "":
			return ">=" + M + "." + m + "." + p + "-" + pr + " <" + M + "." + jsIncrement(m) + ".0-0"
		}
		return ">=" + M + "." + m + "." + p + " <" + M + "." + jsIncrement(m) + ".0-0"
	})
}

// ^ --> * (any, kinda silly)
// ^2, ^2.x, ^2.x.x --> >=2.0.0 <3.0.0-0
// ^1.2, ^1.2.x --> >=1.2.0 <2.0.0-0
// ^1.2.3 --> >=1.2.3 <2.0.0-0
// ^0.0.1 --> >=0.0.1 <0.0.2-0
// ^0.1.0 --> >=0.1.0 <0.2.0-0
// The zero tests compare strings, as node does: in loose mode "^00.1.2"
// has a major of "00", not "0", and means >=0.1.2 <1.0.0-0.
func replaceCaret(comp string, loose bool) string {
	re := reCaret
	if loose {
		re = reCaretLoose
	}
	return replaceFirst(re, comp, func(g []string) string {
		M, m, p, pr := g[1], g[2], g[3], g[4]
		switch {
		case isX(M):
			return ""
		case isX(m):
			return ">=" + M + ".0.0 <" + jsIncrement(M) + ".0.0-0"
		case isX(p):
			if M == "0" {
				return ">=" + M + "." + m + ".0 <" + M + "." + jsIncrement(m) + ".0-0"
			}
			return ">=" + M + "." + m + ".0 <" + jsIncrement(M) + ".0.0-0"
		}
		from := ">=" + M + "." + m + "." + p
		if pr != "" {
			from += "-" + pr
		}
		switch {
		case M == "0" && m == "0":
			return from + " <" + M + "." + m + "." + jsIncrement(p) + "-0"
		case M == "0":
			return from + " <" + M + "." + jsIncrement(m) + ".0-0"
		}
		return from + " <" + jsIncrement(M) + ".0.0-0"
	})
}

// replaceXRange turns "1.x", ">1.2", "<=0.7.x", "*" and the like into
// primitive comparators.
func replaceXRange(comp string, loose bool) string {
	comp = jsTrim(comp)
	re := reXRange
	if loose {
		re = reXRangeLoose
	}
	return replaceFirst(re, comp, func(g []string) string {
		ret, gtlt, M, m, p := g[0], g[1], g[2], g[3], g[4]
		if (isX(M) && !isX(m)) || (isX(m) && !isX(p)) {
			return comp
		}
		xM := isX(M)
		xm := xM || isX(m)
		xp := xm || isX(p)
		anyX := xp
		if gtlt == "=" && anyX {
			gtlt = ""
		}
		pr := ""
		switch {
		case xM:
			if gtlt == ">" || gtlt == "<" {
				// nothing is allowed
				return nullSet
			}
			// nothing is forbidden
			return "*"
		case gtlt != "" && anyX:
			// patch is an x: replace x with 0
			if xm {
				m = "0"
			}
			p = "0"
			switch gtlt {
			case ">":
				// >1 => >=2.0.0, >1.2 => >=1.3.0
				gtlt = ">="
				if xm {
					M, m, p = jsIncrement(M), "0", "0"
				} else {
					m, p = jsIncrement(m), "0"
				}
			case "<=":
				// <=0.7.x is actually <0.8.0, since any 0.7.x should pass.
				gtlt = "<"
				if xm {
					M = jsIncrement(M)
				} else {
					m = jsIncrement(m)
				}
			}
			if gtlt == "<" {
				pr = "-0"
			}
			return gtlt + M + "." + m + "." + p + pr
		case xm:
			return ">=" + M + ".0.0" + pr + " <" + jsIncrement(M) + ".0.0-0"
		case xp:
			return ">=" + M + "." + m + ".0" + pr + " <" + M + "." + jsIncrement(m) + ".0-0"
		}
		return ret
	})
}

// hyphenReplace: 1.2 - 3.4.5 => >=1.2.0 <=3.4.5; 1.2.3 - 3.4 => >=1.2.3
// <3.5.0-0 (any 3.4.x will do).
func hyphenReplace(g []string) string {
	from, fM, fm, fp := g[1], g[2], g[3], g[4]
	to, tM, tm, tp, tpr := g[7], g[8], g[9], g[10], g[11]
	switch {
	case isX(fM):
		from = ""
	case isX(fm):
		from = ">=" + fM + ".0.0"
	case isX(fp):
		from = ">=" + fM + "." + fm + ".0"
	default:
		// with or without a prerelease, the lower bound is the text as given
		from = ">=" + from
	}
	switch {
	case isX(tM):
		to = ""
	case isX(tm):
		to = "<" + jsIncrement(tM) + ".0.0-0"
	case isX(tp):
		to = "<" + tM + "." + jsIncrement(tm) + ".0-0"
	case tpr != "":
		to = "<=" + tM + "." + tm + "." + tp + "-" + tpr
	default:
		to = "<=" + to
	}
	return jsTrim(from + " " + to)
}

// Satisfies reports whether version v satisfies range r, as
// semver.satisfies(v, r, {loose}) does: false when either does not parse.
func Satisfies(v, r string, mode Mode) bool {
	rng, err := ParseRange(r, mode)
	if err != nil || v == "" {
		return false
	}
	ver, err := Parse(v, mode)
	if err != nil {
		return false
	}
	return rng.Test(ver)
}

// MaxSatisfying returns the highest of versions that satisfies r, as
// semver.maxSatisfying does: the string as given, the first of equal ones,
// and false when none does or r does not parse.
func MaxSatisfying(versions []string, r string, mode Mode) (string, bool) {
	rng, err := ParseRange(r, mode)
	if err != nil {
		return "", false
	}
	var best *Version
	bestS := ""
	for _, s := range versions {
		if s == "" {
			continue
		}
		v, err := Parse(s, mode)
		if err != nil || !rng.Test(v) {
			continue
		}
		if best == nil || best.Compare(v) < 0 {
			best, bestS = v, s
		}
	}
	return bestS, best != nil
}

// ValidRange returns r normalised (as semver.validRange: "*" for a range
// that matches anything) and true, or false if r does not parse.
func ValidRange(r string, mode Mode) (string, bool) {
	rng, err := ParseRange(r, mode)
	if err != nil {
		return "", false
	}
	if s := rng.String(); s != "" {
		return s, true
	}
	return "*", true
}
