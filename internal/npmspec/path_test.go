package npmspec

import (
	"strings"
	"testing"
)

func TestSplitPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, name, spec, path string
		bad                  bool
	}{
		{in: "react", name: "react"},
		{in: "react/", name: "react"},
		{in: "react@19", name: "react", spec: "19"},
		{in: "react@^19.1.0/index.js", name: "react", spec: "^19.1.0", path: "index.js"},
		{in: "react@19/cjs/", name: "react", spec: "19", path: "cjs/"},
		{in: "@types/react", name: "@types/react"},
		{in: "@types/react@19/index.d.ts", name: "@types/react", spec: "19", path: "index.d.ts"},
		{in: "@types%2freact@19/a/b.d.ts", name: "@types/react", spec: "19", path: "a/b.d.ts"},
		{in: "@types%2Freact", name: "@types/react"},
		{in: "react/path/with@at", name: "react", path: "path/with@at"},
		{in: "@scope", bad: true},
		{in: "@scope/", bad: true},
		{in: "", bad: true},
		{in: "@1", bad: true},
		{in: "/x", bad: true},
	} {
		r, p, err := SplitPath(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("SplitPath(%q) = %+v, %q, want an error", tc.in, r, p)
			}
			continue
		}
		if err != nil || r.Name != tc.name || r.Spec != tc.spec || p != tc.path {
			t.Errorf("SplitPath(%q) = %+v, %q, %v; want %s@%s, %q", tc.in, r, p, err, tc.name, tc.spec, tc.path)
		}
	}
}

// FuzzSplitPath checks that SplitPath never panics, that its parts come
// from the input, and that joining them again splits the same way.
func FuzzSplitPath(f *testing.F) {
	for _, s := range []string{"react", "react@19/index.js", "@types/react@19/x", "@types%2freact", "@s", "a/b/c", "@@/x", "x@", "%2f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, p, err := SplitPath(s)
		if err != nil {
			return
		}
		if r.Name == "" || strings.Contains(r.Spec, "/") {
			t.Fatalf("SplitPath(%q) = %+v, %q", s, r, p)
		}
		joined := r.Name
		if r.Spec != "" || strings.HasSuffix(r.Name, "@") {
			joined += "@" + r.Spec
		}
		if p != "" {
			joined += "/" + p
		}
		r2, p2, err := SplitPath(joined)
		if err != nil || r2 != r || p2 != p {
			t.Fatalf("SplitPath(%q) = %+v %q; rejoined %q splits to %+v %q %v", s, r, p, joined, r2, p2, err)
		}
	})
}

func TestSplitNameSpec(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, name, spec string
		ok             bool
	}{
		{"react", "react", "", false},
		{"react@19", "react", "19", true},
		{"react@", "react", "", true},
		{"@types/react", "@types/react", "", false},
		{"@types/react@^19", "@types/react", "^19", true},
		{"foo@npm:bar@1", "foo", "npm:bar@1", true},
		{"@s/x@github:user/repo", "@s/x", "github:user/repo", true},
		{"@scope@1", "@scope", "1", true},
		{"@", "@", "", false},
		{"", "", "", false},
	} {
		r, ok := SplitNameSpec(tc.in)
		if r.Name != tc.name || r.Spec != tc.spec || ok != tc.ok {
			t.Errorf("SplitNameSpec(%q) = %+v, %v; want %q, %q, %v", tc.in, r, ok, tc.name, tc.spec, tc.ok)
		}
	}
}

// FuzzSplitNameSpec checks that SplitNameSpec never panics, that name and
// spec join back to the input, and that the name holds no "@" after its
// first character (past a scope's slash): splitting the name again finds
// no spec.
func FuzzSplitNameSpec(f *testing.F) {
	for _, s := range []string{"react", "react@19", "@types/react@^19", "foo@npm:bar@1", "@s/x@github:u/r", "@", "@/@", "@a/", "a@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, ok := SplitNameSpec(s)
		joined := r.Name
		if ok {
			joined += "@" + r.Spec
		}
		if joined != s || (!ok && r.Spec != "") {
			t.Fatalf("SplitNameSpec(%q) = %+v, %v; joins to %q", s, r, ok, joined)
		}
		if ok {
			if again, ok2 := SplitNameSpec(r.Name); ok2 || again.Name != r.Name {
				t.Fatalf("SplitNameSpec(%q) = %+v, but its name splits again: %+v", s, r, again)
			}
		}
	})
}
