package semver

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/npmspec"
)

// pickVectors is the npm-pick-manifest part of testdata/vectors.json.
type pickVectors struct {
	NpmPickManifest string `json:"npmPickManifest"`
	Packuments      map[string]struct {
		DistTags map[string]string `json:"dist-tags"`
		// List keeps the order of the versions object: [version, deprecated].
		List [][2]any `json:"list"`
	} `json:"packuments"`
	PickManifest []struct {
		Packument string  `json:"packument"`
		Wanted    string  `json:"wanted"`
		Result    *string `json:"result"`
		Error     *string `json:"error"`
	} `json:"pickManifest"`
}

func TestPickManifestVectors(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatalf("reading vectors (regenerate with node testdata/gen.js): %v", err)
	}
	var v pickVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decoding vectors: %v", err)
	}
	if len(v.PickManifest) == 0 {
		t.Fatal("vectors.json holds no pick-manifest vectors")
	}
	for _, c := range v.PickManifest {
		p, ok := v.Packuments[c.Packument]
		if !ok {
			t.Fatalf("vector names unknown packument %q", c.Packument)
		}
		var cands []Candidate
		for _, e := range p.List {
			cands = append(cands, Candidate{Version: e[0].(string), Deprecated: e[1].(bool)})
		}
		spec, err := npmspec.ParseSpec(c.Wanted)
		if err != nil {
			t.Errorf("ParseSpec(%q): %v", c.Wanted, err)
			continue
		}
		got, err := Select(spec, cands, p.DistTags)
		switch {
		case c.Result != nil && (err != nil || got != *c.Result):
			t.Errorf("%s: Select(%q) = %q, %v; npm-pick-manifest %s picks %q", c.Packument, c.Wanted, got, err, v.NpmPickManifest, *c.Result)
		case c.Result == nil && !errors.Is(err, ErrNoMatch):
			t.Errorf("%s: Select(%q) = %q, %v; npm-pick-manifest %s fails with %v", c.Packument, c.Wanted, got, err, v.NpmPickManifest, *c.Error)
		}
	}
	t.Logf("%d pick-manifest vectors", len(v.PickManifest))
}

func TestSelect(t *testing.T) {
	t.Parallel()
	cands := []Candidate{
		{Version: "1.0.0"},
		{Version: "1.1.0"},
		{Version: "1.2.0", Deprecated: true},
		{Version: "1.3.0-beta.1"},
		{Version: "2.0.0", Deprecated: true},
	}
	tags := map[string]string{"latest": "1.1.0", "next": "1.3.0-beta.1", "old": "0.9.0"}
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"tag", "next", "1.3.0-beta.1"},
		{"empty spec is latest", "", "1.1.0"},
		{"deprecated exact version is still served", "1.2.0", "1.2.0"},
		{"v prefix is normalised", "v1.0.0", "1.0.0"},
		{"latest wins when it satisfies", "^1.0.0", "1.1.0"},
		{"star takes latest", "*", "1.1.0"},
		{"highest satisfying when latest does not", ">=1.0.0 <1.1.0", "1.0.0"},
		{"prerelease needs a prerelease comparator", "^1.3.0-beta.0", "1.3.0-beta.1"},
		{"deprecated only when nothing else", "2", "2.0.0"},
		{"highest deprecated when all are", ">1.1.0", "2.0.0"},
		{"non-deprecated beats higher deprecated", "<1.1.0 || >=1.2.0", "1.0.0"},
	} {
		spec, err := npmspec.ParseSpec(tc.spec)
		if err != nil {
			t.Fatalf("%s: ParseSpec(%q): %v", tc.name, tc.spec, err)
		}
		got, err := Select(spec, cands, tags)
		if err != nil || got != tc.want {
			t.Errorf("%s: Select(%q) = %q, %v; want %q", tc.name, tc.spec, got, err, tc.want)
		}
	}
}

// TestSelectNoMatch: a spec nothing fits is an ErrNoMatch that names what
// the caller can ask for instead: the highest release and latest, or the
// dist-tags there are.
func TestSelectNoMatch(t *testing.T) {
	t.Parallel()
	cands := []Candidate{{Version: "1.0.0"}, {Version: "1.10.0"}, {Version: "1.9.0"}, {Version: "2.0.0-rc.1"}}
	tags := map[string]string{"latest": "1.9.0", "gone": "9.9.9", "next": "2.0.0-rc.1"}
	for _, tc := range []struct {
		spec, says string
	}{
		{"beta", `no dist-tag "beta"; dist-tags: latest, gone, next`},
		{"gone", `dist-tag "gone" points to "9.9.9", which is not published`},
		{"1.0.1", `version "1.0.1" is not published; the highest is 1.10.0 (latest is 1.9.0)`},
		{"^2.0.0", `range "^2.0.0" matches none of 4 versions; the highest is 1.10.0 (latest is 1.9.0)`},
		{"99", `range "99" matches none of 4 versions; the highest is 1.10.0 (latest is 1.9.0)`},
	} {
		spec, err := npmspec.ParseSpec(tc.spec)
		if err != nil {
			t.Fatalf("ParseSpec(%q): %v", tc.spec, err)
		}
		_, err = Select(spec, cands, tags)
		if !errors.Is(err, ErrNoMatch) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Select(%q) error = %v, want ErrNoMatch saying %q", tc.spec, err, tc.says)
		}
	}
	if _, err := Select(npmspec.Spec{Raw: "*", Kind: npmspec.Range}, nil, nil); !errors.Is(err, ErrNoMatch) || !strings.Contains(err.Error(), "no published versions") {
		t.Errorf("Select(*) among no versions = %v, want ErrNoMatch saying there are none", err)
	}
	// latest is the highest: said once; only prereleases: the highest of them.
	for _, tc := range []struct {
		cands []Candidate
		says  string
	}{
		{[]Candidate{{Version: "1.0.0"}, {Version: "1.9.0"}}, "the highest is 1.9.0 (also latest)"},
		{[]Candidate{{Version: "1.0.0-a"}, {Version: "1.0.0-b"}}, "the highest is 1.0.0-b (latest is 1.9.0)"},
	} {
		_, err := Select(npmspec.Spec{Raw: "^5", Kind: npmspec.Range}, tc.cands, map[string]string{"latest": "1.9.0"})
		if !errors.Is(err, ErrNoMatch) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Select(^5) among %v = %v, want it to say %q", tc.cands, err, tc.says)
		}
	}
	// An unpublished exact version names the highest release of its
	// line first when that is not the highest of all: react@18.9.0
	// meant react 18, not 19.
	lines := []Candidate{{Version: "0.3.1"}, {Version: "0.3.9"}, {Version: "0.4.0"}, {Version: "18.2.0"}, {Version: "18.3.1"}, {Version: "19.0.0-rc.1"}, {Version: "19.3.1"}}
	for _, tc := range []struct{ spec, says string }{
		{"18.9.0", `version "18.9.0" is not published; the highest 18.x is 18.3.1; the highest is 19.3.1 (also latest)`},
		{"0.3.4", `version "0.3.4" is not published; the highest 0.3.x is 0.3.9; the highest is 19.3.1 (also latest)`},
		{"19.0.7", `version "19.0.7" is not published; the highest is 19.3.1 (also latest)`},
		{"7.0.0", `version "7.0.0" is not published; the highest is 19.3.1 (also latest)`},
	} {
		_, err := Select(npmspec.Spec{Raw: tc.spec, Kind: npmspec.Version}, lines, map[string]string{"latest": "19.3.1"})
		if !errors.Is(err, ErrNoMatch) || !strings.HasSuffix(err.Error(), tc.says) {
			t.Errorf("Select(%q) = %v, want it to end %q", tc.spec, err, tc.says)
		}
	}
	many := map[string]string{}
	for i := range 14 {
		many[fmt.Sprintf("ts5.%d", i)] = "1.0.0"
	}
	if _, err := Select(npmspec.Spec{Raw: "beta", Kind: npmspec.Tag}, cands, many); err == nil || !strings.HasSuffix(err.Error(), " and 4 more") {
		t.Errorf("an unknown tag among 14 = %v, want 10 named and 4 more", err)
	}
}

func TestValid(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{
		"1.2.3": true, "1.0.0-rc.1+b.2": true, "v1.2.3": true, " 1.2.3 ": true,
		"=1.2.3": false, "1.2": false, "01.2.3": false, "1.2.3beta": false, "": false, "latest": false,
	} {
		if got := Valid(v); got != want {
			t.Errorf("Valid(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.0.0", "1.0.0", 0},
		{"1.0.0", "1.0.0+build", 0},
		{"1.0.0-alpha", "1.0.0", -1},
		{"1.0.0-alpha.2", "1.0.0-alpha.10", -1},
		{"1.0.0-alpha.10", "1.0.0-alpha.beta", -1},
		{"1.10.0", "1.9.0", 1},
		{"v2.0.0", "=1.0.0", 1}, // read loosely, as npm does
		{"junk", "0.0.0", -1},
		{"0.0.0", "junk", 1},
		{"a", "b", -1},
	} {
		if got := Compare(tc.a, tc.b); got != tc.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
