package npmspec

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/nodesemver"
)

func TestValidateName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		reason string // "" means valid
	}{
		{"react", ""},
		{"@types/react", ""},
		{"JSONStream", ""}, // legacy capital letters are still published
		{"lodash.debounce", ""},
		{"http", ""}, // core module names are only a warning
		{"it's", ""},
		{"@scope/_under", ""},
		{strings.Repeat("x", MaxNameLength), ""},
		{"", "may not be empty"},
		{strings.Repeat("x", MaxNameLength+1), "may be at most 214 characters long, not 215"},
		{".bin", "may not start with a dot"},
		{"..", "may not start with a dot"},
		{"_foo", "may not start with an underscore"},
		{"-foo", "may not start with a hyphen"},
		{"a..b", `may not contain ".."`},
		{"a b", "may not contain spaces"},
		{" a", "may not contain spaces"},
		{"NODE_MODULES", `may not be "node_modules"`},
		{"favicon.ico", `may not be "favicon.ico"`},
		{"@scope", `with a scope must look like "@scope/name"`},
		{"@/x", "has an empty scope"},
		{"@scope/", "has a scope but no name after it"},
		{"@.scope/x", "may not have a scope that starts with a dot"},
		{"@Scope/x", "may not have capital letters in its scope (npm scopes are lower case: @scope)"},
		{"@scope/X", ""}, // npm only warns about the name's capitals
		{"@../x", `may not contain ".."`},
		{"@scope/.x", "may not start with a dot after the scope"},
		{"@scope/a/b", `may contain only one "/", after the scope`},
		{"a/b", `may contain "/" only after a @scope`},
		{"a:b", `may contain only URL-safe characters (letters, digits and - . _ ~ ! * ' ( )), not ':'`},
		{"@sc@pe/x", `may contain only URL-safe characters (letters, digits and - . _ ~ ! * ' ( )), not '@'`},
		{"a%2fb", `may contain only URL-safe characters (letters, digits and - . _ ~ ! * ' ( )), not '%'`},
		{"ümlaut", `may contain only URL-safe characters (letters, digits and - . _ ~ ! * ' ( )), not byte 0xc3`},
		{"a\x00b", `may contain only URL-safe characters (letters, digits and - . _ ~ ! * ' ( )), not byte 0x00`},
	} {
		err := ValidateName(tc.name)
		if tc.reason == "" {
			if err != nil {
				t.Errorf("ValidateName(%q) = %v, want nil", tc.name, err)
			}
			continue
		}
		var ne *NameError
		if !errors.As(err, &ne) || ne.Reason != tc.reason || !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateName(%q) = %v, want reason %q", tc.name, err, tc.reason)
		}
	}
}

func TestNameErrorMessage(t *testing.T) {
	t.Parallel()
	err := ValidateName(".bin")
	if got, want := err.Error(), `package name may not start with a dot: ".bin"`; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	long := ValidateName(strings.Repeat("é", 200)).Error()
	if len(long) > 200 {
		t.Errorf("message for a long name is %d bytes; it should quote at most %d bytes of it", len(long), maxQuoted)
	}
}

func TestParseSpec(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		want Spec
	}{
		{"", Spec{"*", Range}}, // npm install name reads "*"
		{"  ", Spec{"*", Range}},
		{"latest", Spec{"latest", Tag}},
		{"next", Spec{"next", Tag}},
		{" beta\n", Spec{"beta", Tag}},
		{"~", Spec{"~", Tag}}, // not a range, URL-safe: npm calls it a tag
		{"1.2.3", Spec{"1.2.3", Version}},
		{"v1.2.3", Spec{"1.2.3", Version}},
		{"=1.2.3", Spec{"1.2.3", Version}},
		{"1.2.3+build.1", Spec{"1.2.3", Version}},
		{"1.2.3beta", Spec{"1.2.3-beta", Version}},
		{"1.0.0-rc.1", Spec{"1.0.0-rc.1", Version}},
		{"^1.2.0", Spec{"^1.2.0", Range}},
		{"~1", Spec{"~1", Range}},
		{"1.x", Spec{"1.x", Range}},
		{"*", Spec{"*", Range}},
		{"x", Spec{"x", Range}},
		{"1", Spec{"1", Range}},
		{"v1", Spec{"v1", Range}},
		{">=2 <3", Spec{">=2 <3", Range}},
		{"1.2.3 - 2.0.0", Spec{"1.2.3 - 2.0.0", Range}},
		{"^1 || ^2", Spec{"^1 || ^2", Range}},
		{"1.2.3 foo", Spec{"1.2.3 foo", Range}}, // loose parsing drops "foo"
	} {
		got, err := ParseSpec(tc.raw)
		if err != nil || got != tc.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
		}
	}
}

func TestParseSpecRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw, says string
	}{
		{"git+ssh://git@example.com/a/b.git", `"git+ssh:" specs`},
		{"https://example.com/a.tgz", `"https:" specs`},
		{"github:u/r", `"github:" specs`},
		{"workspace:*", `"workspace:" specs`},
		{"link:../x", `"link:" specs`},
		{"git@example.com:u/r.git", `"git@example.com:" specs`},
		{"file:../x", "file and directory specs"},
		{"../x", "file and directory specs"},
		{"/abs", "file and directory specs"},
		{"~/x", "file and directory specs"},
		{"C:x", "file and directory specs"},
		{".hidden", "file and directory specs"},
		{"npm:other@1", "alias specs"},
		{"user/repo", "GitHub shorthand"},
		{`a\b`, "GitHub shorthand"},
		{"x.tgz", "tarball file specs"},
		{"x.TAR.GZ", "tarball file specs"},
		{"foo bar", "neither a version, a range nor a valid dist-tag"},
		{"a@b", "neither a version, a range nor a valid dist-tag"},
		{"^", "neither a version, a range nor a valid dist-tag"},
		{"tag%20", "neither a version, a range nor a valid dist-tag"},
		{strings.Repeat("1", MaxSpecLength+1), "longer than 256 bytes"},
	} {
		_, err := ParseSpec(tc.raw)
		if err == nil || !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("ParseSpec(%q) error = %v, want one saying %q", tc.raw, err, tc.says)
		}
	}
}

// npaVectors is testdata/npa.json, recorded from npm-package-arg and
// validate-npm-package-name by ../semver/testdata/gen.js.
type npaVectors struct {
	Specs []struct {
		Spec      string  `json:"spec"`
		Type      *string `json:"type"`
		FetchSpec *string `json:"fetchSpec"`
	} `json:"specs"`
	Names []struct {
		Name                string   `json:"name"`
		ValidForOldPackages bool     `json:"validForOldPackages"`
		Errors              []string `json:"errors"`
	} `json:"names"`
}

func loadNPA(t *testing.T) *npaVectors {
	t.Helper()
	b, err := os.ReadFile("testdata/npa.json")
	if err != nil {
		t.Fatalf("reading vectors (regenerate with node ../semver/testdata/gen.js): %v", err)
	}
	var v npaVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decoding vectors: %v", err)
	}
	if len(v.Specs) == 0 || len(v.Names) == 0 {
		t.Fatal("npa.json holds no specs or names")
	}
	return &v
}

// TestSpecsAgreeWithNPA: every spec npm-package-arg resolves from the
// registry gets the same kind here (versions in clean form); every other
// spec, and every one it throws on, is rejected.
func TestSpecsAgreeWithNPA(t *testing.T) {
	t.Parallel()
	for _, c := range loadNPA(t).Specs {
		got, err := ParseSpec(c.Spec)
		typ := "error"
		if c.Type != nil {
			typ = *c.Type
		}
		switch typ {
		case "version", "range", "tag":
			if err != nil {
				t.Errorf("ParseSpec(%q): %v; npm-package-arg says %s", c.Spec, err, typ)
				continue
			}
			if got.Kind.String() != typ {
				t.Errorf("ParseSpec(%q).Kind = %s; npm-package-arg says %s", c.Spec, got.Kind, typ)
			}
			want := *c.FetchSpec
			if typ == "version" {
				want, _ = nodesemver.Clean(want, nodesemver.Loose)
			}
			if got.Raw != want {
				t.Errorf("ParseSpec(%q).Raw = %q, want %q", c.Spec, got.Raw, want)
			}
		default:
			if err == nil {
				t.Errorf("ParseSpec(%q) = %+v; npm-package-arg says %s, which pkgscope rejects", c.Spec, got, typ)
			}
		}
	}
}

// stricterThanNPM lists the names validate-npm-package-name accepts for
// existing packages that ValidateName rejects on purpose (see its doc).
var stricterThanNPM = map[string]bool{
	"a..b":                           true,
	"@.scope/x":                      true,
	strings.Repeat("x", 215):         true,
	"@s/" + strings.Repeat("x", 212): true,
}

func TestNamesAgreeWithValidator(t *testing.T) {
	t.Parallel()
	for _, c := range loadNPA(t).Names {
		err := ValidateName(c.Name)
		want := c.ValidForOldPackages && !stricterThanNPM[c.Name]
		if (err == nil) != want {
			t.Errorf("ValidateName(%q) = %v; validate-npm-package-name says valid=%v %v", c.Name, err, c.ValidForOldPackages, c.Errors)
		}
	}
}
