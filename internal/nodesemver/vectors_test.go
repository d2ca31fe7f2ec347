package nodesemver

import (
	"encoding/json"
	"os"
	"testing"
)

// vectors is ../semver/testdata/vectors.json, recorded from node-semver by
// ../semver/testdata/gen.js.
type vectors struct {
	Semver   string   `json:"semver"`
	Versions []string `json:"versions"`
	Ranges   []struct {
		Range         string  `json:"range"`
		Loose         bool    `json:"loose"`
		ValidRange    *string `json:"validRange"`
		Satisfies     string  `json:"satisfies"`
		MaxSatisfying *string `json:"maxSatisfying"`
	} `json:"ranges"`
	Valid []struct {
		Input  string  `json:"input"`
		Strict *string `json:"strict"`
		Loose  *string `json:"loose"`
		Clean  *string `json:"clean"`
	} `json:"valid"`
	Compare struct {
		Versions []string `json:"versions"`
		Rows     []string `json:"rows"`
	} `json:"compare"`
}

func loadVectors(t testing.TB) *vectors {
	t.Helper()
	b, err := os.ReadFile("../semver/testdata/vectors.json")
	if err != nil {
		t.Fatalf("reading vectors (regenerate with node ../semver/testdata/gen.js): %v", err)
	}
	var v vectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decoding vectors: %v", err)
	}
	if len(v.Ranges) == 0 || len(v.Versions) == 0 {
		t.Fatal("vectors.json holds no ranges or versions")
	}
	return &v
}

// opt returns the pointer form the vectors use for "null or a string".
func opt(s string, ok bool) *string {
	if !ok {
		return nil
	}
	return &s
}

func show(p *string) string {
	if p == nil {
		return "null"
	}
	return "\"" + *p + "\""
}

func eq(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func modeOf(loose bool) Mode {
	if loose {
		return Loose
	}
	return Strict
}

func TestVectorsSatisfies(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	n, failed := 0, 0
	for _, c := range v.Ranges {
		mode := modeOf(c.Loose)
		if len(c.Satisfies) != len(v.Versions) {
			t.Fatalf("range %q: %d results for %d versions", c.Range, len(c.Satisfies), len(v.Versions))
		}
		for i, ver := range v.Versions {
			n++
			want := c.Satisfies[i] == '1'
			if got := Satisfies(ver, c.Range, mode); got != want {
				failed++
				t.Errorf("Satisfies(%q, %q, loose=%v) = %v, node-semver says %v", ver, c.Range, c.Loose, got, want)
			}
		}
	}
	t.Logf("node-semver %s: %d satisfies vectors, %d failed", v.Semver, n, failed)
}

func TestVectorsValidRange(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	for _, c := range v.Ranges {
		if got := opt(ValidRange(c.Range, modeOf(c.Loose))); !eq(got, c.ValidRange) {
			t.Errorf("ValidRange(%q, loose=%v) = %s, node-semver says %s", c.Range, c.Loose, show(got), show(c.ValidRange))
		}
	}
}

func TestVectorsMaxSatisfying(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	for _, c := range v.Ranges {
		if got := opt(MaxSatisfying(v.Versions, c.Range, modeOf(c.Loose))); !eq(got, c.MaxSatisfying) {
			t.Errorf("MaxSatisfying(versions, %q, loose=%v) = %s, node-semver says %s", c.Range, c.Loose, show(got), show(c.MaxSatisfying))
		}
	}
}

func TestVectorsValid(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	for _, c := range v.Valid {
		if got := opt(Valid(c.Input, Strict)); !eq(got, c.Strict) {
			t.Errorf("Valid(%q, Strict) = %s, node-semver says %s", c.Input, show(got), show(c.Strict))
		}
		if got := opt(Valid(c.Input, Loose)); !eq(got, c.Loose) {
			t.Errorf("Valid(%q, Loose) = %s, node-semver says %s", c.Input, show(got), show(c.Loose))
		}
		if got := opt(Clean(c.Input, Loose)); !eq(got, c.Clean) {
			t.Errorf("Clean(%q, Loose) = %s, node-semver says %s", c.Input, show(got), show(c.Clean))
		}
	}
}

func TestVectorsCompare(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	parsed := make([]*Version, len(v.Compare.Versions))
	for i, s := range v.Compare.Versions {
		p, err := Parse(s, Loose)
		if err != nil {
			t.Fatalf("Parse(%q, Loose): %v", s, err)
		}
		parsed[i] = p
	}
	for i, a := range parsed {
		for j, b := range parsed {
			got := "<=>"[a.Compare(b)+1]
			if want := v.Compare.Rows[i][j]; got != want {
				t.Errorf("Compare(%q, %q) = %c, node-semver says %c", v.Compare.Versions[i], v.Compare.Versions[j], got, want)
			}
		}
	}
}
