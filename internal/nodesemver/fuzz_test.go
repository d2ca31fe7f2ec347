package nodesemver

import "testing"

// FuzzParseRange checks that range parsing never panics, that a parsed
// range formats to a range that parses again, and that testing any version
// against it never panics. (Formatting is not idempotent in node-semver
// either: loose "00" formats as ">=0.0.0 <1.0.0-0", which formats as
// "<1.0.0-0"; TestFormatNotIdempotent pins that.) Seeds: the f.Add calls and
// testdata/fuzz/FuzzParseRange.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{
		"", "*", "^1.2.3", "~1.2", "1.x || >=2.5.0 || 5.0.0 - 7.2.3", ">=1.2.3-alpha <2",
		"1.2.3 - 2", "^0.0.x", "<=1000000000000000000000.x || 1.2.3", "1.2.3 foo",
		"\u3000>=1 <2", "~> 1.2", "^00.1",
	} {
		f.Add(s, true, "1.2.3-beta.1")
		f.Add(s, false, "v1.2.3")
	}
	f.Fuzz(func(t *testing.T, r string, loose bool, v string) {
		mode := modeOf(loose)
		rng, err := ParseRange(r, mode)
		if err != nil {
			return
		}
		s := rng.String()
		if _, err := ParseRange(s, mode); err != nil {
			t.Fatalf("ParseRange(%q) formats as %q, which does not parse: %v", r, s, err)
		}
		if ver, err := Parse(v, mode); err == nil {
			rng.Test(ver)
		}
	})
}

// FuzzParse checks that version parsing never panics, that the canonical
// form parses again in the same mode to the same version, and that
// comparison is reflexive. (A loose canonical form need not be strictly
// valid: node keeps "0.0.0-0.00001000000000000000000000000000" as is,
// because an identifier above 2^53 is not numberified; vectors.json pins
// that.)
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1.2.3", "v1.2.3-beta.01+b", " =1.2.3beta ", "01.02.03", "1.0.0-9007199254740993"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, loose bool) {
		v, err := Parse(s, modeOf(loose))
		if err != nil {
			return
		}
		c, err := Parse(v.String(), modeOf(loose))
		if err != nil {
			t.Fatalf("Parse(%q) canonical form %q does not parse: %v", s, v.String(), err)
		}
		if c.String() != v.String() || c.Compare(v) != 0 || v.Compare(c) != 0 || v.Compare(v) != 0 {
			t.Fatalf("Parse(%q): %q does not compare equal to its canonical form", s, v.String())
		}
	})
}
