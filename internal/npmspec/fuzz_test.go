package npmspec

import (
	"strings"
	"testing"
)

// FuzzValidateName checks that an accepted name is one a URL path and a
// store key can hold as is. Seeds: the f.Add calls and
// testdata/fuzz/FuzzValidateName.
func FuzzValidateName(f *testing.F) {
	for _, s := range []string{"react", "@types/react", "JSONStream", "@../x", "a..b", ".bin", "@s/n/x", "ümlaut"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := ValidateName(name)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ValidateName(%q): empty error message", name)
			}
			return
		}
		if name == "" || len(name) > MaxNameLength || strings.Contains(name, "..") {
			t.Fatalf("ValidateName(%q) accepted an empty, long or dotted name", name)
		}
		for _, seg := range strings.Split(strings.TrimPrefix(name, "@"), "/") {
			if seg == "" || seg[0] == '.' {
				t.Fatalf("ValidateName(%q) accepted an empty or dot segment", name)
			}
		}
		if strings.Count(name, "/") > 1 || (strings.Contains(name, "/") && name[0] != '@') {
			t.Fatalf("ValidateName(%q) accepted a misplaced slash", name)
		}
		for i := 0; i < len(name); i++ {
			if c := name[i]; !isURLSafe(c) && c != '/' && !(i == 0 && c == '@') {
				t.Fatalf("ValidateName(%q) accepted byte %q", name, c)
			}
		}
	})
}

// FuzzParseSpec checks that ParseSpec never panics and that what it
// returns parses again to itself. Seeds: the f.Add calls and
// testdata/fuzz/FuzzParseSpec.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"", "latest", "v1.2.3", "^1.2.0", "1.2.3 - 2", "1.x || >=3", "git+ssh://x", "user/repo", "npm:a@1", "1.2.3 foo", "~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := ParseSpec(raw)
		if err != nil {
			return
		}
		if s.Kind < Version || s.Kind > Tag || s.Raw == "" || len(s.Raw) > MaxSpecLength {
			t.Fatalf("ParseSpec(%q) = %+v", raw, s)
		}
		again, err := ParseSpec(s.Raw)
		if err != nil || again != s {
			t.Fatalf("ParseSpec(%q) = %+v, but ParseSpec(%q) = %+v, %v", raw, s, s.Raw, again, err)
		}
	})
}
