package upstream

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
)

func TestValidVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"1.0.0": true, "0.0.1-rc.1": true, "1.2.3-beta.4+build.5": true, "10.20.30": true,
		"": false, "../../etc": false, "<b>1</b>": false, "1.0.0\r\nSet-Cookie: pwn=1": false,
		"v1.0.0": false, "=1.0.0": false, " 1.0.0": false, "1.0.0 ": false, "1.0": false,
		"1.0.0-\x00": false, "1.0.0-" + strings.Repeat("a", 300): false,
	} {
		if got := ValidVersion(v); got != want {
			t.Errorf("ValidVersion(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestSanitizeDropsWhatNpmIgnores(t *testing.T) {
	p := &Packument{
		Name: "weirdver",
		DistTags: map[string]string{
			"latest": "../../etc", "next": "1.0.0\r\nSet-Cookie: pwn=1", "ok\r\nforged": "1.0.0",
			"stable": "1.0.0", "beta": "2.0.0-beta.1",
		},
		Versions: map[string]PackumentVersion{
			"1.0.0": {}, "2.0.0-beta.1": {}, "../../etc": {}, "<b>1</b>": {}, "1.0.0\r\nSet-Cookie: pwn=1": {},
		},
	}
	var d dropCounter
	d.sanitize(p)
	if len(p.Versions) != 2 || len(p.DistTags) != 2 || p.DistTags["stable"] != "1.0.0" || p.DistTags["beta"] != "2.0.0-beta.1" {
		t.Errorf("after sanitize: versions %v, dist-tags %v", p.Versions, p.DistTags)
	}
	if d.versions.Load() != 3 || d.tags.Load() != 3 {
		t.Errorf("dropped %d versions and %d tags, want 3 and 3", d.versions.Load(), d.tags.Load())
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"use foo instead":      "use foo instead",
		"gone\r\nforged":       "gone  forged",
		"\x1b[31mred\x07":      " [31mred ",
		"a\u2028b\u0085c\x7fd": "a b c d",
		"bad \xff byte":        "bad   byte",
		"日本語 is fine":          "日本語 is fine",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzPrintable(f *testing.F) {
	f.Add("gone\r\n\x1b[31m\u2028")
	f.Fuzz(func(t *testing.T, s string) {
		out := Printable(s)
		if strings.ContainsFunc(out, unprintable) {
			t.Errorf("Printable(%q) = %q still holds a control character", s, out)
		}
	})
}

// TestSearchDropsNamesThatAreNotPackages: a search answer's names that
// cannot be a package's (control characters, markup) are dropped and
// counted: they are quoted in corrections.
func TestSearchDropsNamesThatAreNotPackages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"objects":[{"package":{"name":"lodash"}},{"package":{"name":"evil\r\nforged: 1"}},{"package":{"name":"<b>x</b>"}},{"package":{"name":"@scope/ok"}}]}`)
	}))
	defer srv.Close()
	e := newEnvFor(t, fakeregistry.New(t), srv.URL+"/", Config{})
	names, err := e.c.Search(t.Context(), "lodahs", 20)
	if err != nil || strings.Join(names, ",") != "lodash,@scope/ok" {
		t.Errorf("Search = %q, %v; want lodash and @scope/ok", names, err)
	}
	if d := e.c.Dropped(); d.Names != 2 {
		t.Errorf("dropped %d names, want 2", d.Names)
	}
}
