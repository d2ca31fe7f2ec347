package pkgpath

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		err      error
	}{
		{"index.js", "index.js", nil},
		{"lib/a/b.js", "lib/a/b.js", nil},
		{"/index.js", "index.js", nil},
		{"//lib//a.js", "lib/a.js", nil},
		{"./lib/./a.js", "lib/a.js", nil},
		{"lib/", "lib", nil},
		{"lib/.", "lib", nil},
		{"a/.../b", "a/.../b", nil},         // "..." is a name, not a parent
		{"a/..b/c..", "a/..b/c..", nil},     // so are these
		{"caf\xe9.js", "caf\xe9.js", nil},   // Latin-1 bytes are kept
		{"日本/ファイル.md", "日本/ファイル.md", nil},   // valid UTF-8 is kept
		{"A.js", "A.js", nil},               // case is kept
		{"lib/.hidden", "lib/.hidden", nil}, // dot files are files
		{"", "", ErrInvalid},                // empty
		{"/", "", ErrInvalid},               // empty once cleaned
		{"./", "", ErrInvalid},              // empty once cleaned
		{"..", "", ErrInvalid},              // parent
		{"../etc/passwd", "", ErrInvalid},   // escape
		{"a/../b", "", ErrInvalid},          // ".." even when cleaning would cancel it
		{"a/..", "", ErrInvalid},            // trailing parent
		{`a\..\..\b`, "", ErrInvalid},       // backslash: Windows separator
		{`a\b`, "", ErrInvalid},             // any backslash
		{"a\x00b", "", ErrInvalid},          // NUL
		{"a\nb", "", ErrInvalid},            // newline (log and header injection)
		{"a\x1b[31mb", "", ErrInvalid},      // terminal escape
		{"a\x7fb", "", ErrInvalid},          // DEL
		{"a\u0085b", "", ErrInvalid},        // C1 control (NEL)
		{strings.Repeat("a", 1024), strings.Repeat("a", 1024), nil},
		{strings.Repeat("a", 1025), "", ErrTooLong},
		{strings.Repeat("a/", 64) + "", strings.TrimSuffix(strings.Repeat("a/", 64), "/"), nil},
		{strings.Repeat("a/", 65), "", ErrTooLong},
		{"/" + strings.Repeat("./", 2000) + "a", "a", nil}, // length is measured once cleaned
	}
	for _, tt := range tests {
		got, err := Clean(tt.in)
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("Clean(%q) = %q, %v; want %q, %v", short(tt.in), got, err, tt.want, tt.err)
		}
	}
}

func TestCleanQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		err      error
	}{
		{"/index.js", "index.js", nil},
		{"lib/a.js", "lib/a.js", nil},
		{"日本.md", "日本.md", nil},
		{"caf\xe9.js", "", ErrInvalid}, // queries arrive as JSON text: must be UTF-8
		{"/../x", "", ErrInvalid},
		{"/", "", ErrInvalid},
	}
	for _, tt := range tests {
		got, err := CleanQuery(tt.in)
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("CleanQuery(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestCleanEntry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		err      error
	}{
		{"package/index.js", "index.js", nil},
		{"package/lib/a.js", "lib/a.js", nil},
		{"react/index.d.ts", "index.d.ts", nil}, // @types/react's top folder
		{"./index.js", "index.js", nil},         // "tar czf x ." made this: "." is the top
		{"./package/a.js", "package/a.js", nil}, // as node-tar strips it
		{"package/./a.js", "a.js", nil},
		{"package//lib/./a.js", "lib/a.js", nil},
		{"package/caf\xe9.js", "caf\xe9.js", nil},
		{"README.md", "", ErrAtRoot}, // a bare file beside package/
		{"package/", "", ErrAtRoot},
		{"package", "", ErrAtRoot},
		{"/etc/passwd", "", ErrInvalid},              // absolute
		{"/package/a.js", "", ErrInvalid},            // absolute even if it looks like a package
		{"package/../../etc/passwd", "", ErrInvalid}, // escape
		{"../package/a.js", "", ErrInvalid},
		{`package/..\..\x`, "", ErrInvalid},
		{"package/a\x01", "", ErrInvalid},
		{"", "", ErrInvalid},
		{"./", "", ErrAtRoot},
		{"..", "", ErrInvalid},
		// Limits apply to the stored path: the top folder is not counted.
		{"package/" + strings.Repeat("a", 1024), strings.Repeat("a", 1024), nil},
		{"package/" + strings.Repeat("a", 1025), "", ErrTooLong},
		{"package/" + strings.TrimSuffix(strings.Repeat("a/", 64), "/"), strings.TrimSuffix(strings.Repeat("a/", 64), "/"), nil},
		{"package/" + strings.Repeat("a/", 65), "", ErrTooLong},
	}
	for _, tt := range tests {
		got, err := CleanEntry(tt.in)
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("CleanEntry(%q) = %q, %v; want %q, %v", short(tt.in), got, err, tt.want, tt.err)
		}
	}
}

func TestLimitsAreConfigurable(t *testing.T) {
	t.Parallel()
	l := Limits{MaxPathBytes: 5, MaxDepth: 2}
	if _, err := l.Clean("abcdef"); !errors.Is(err, ErrTooLong) {
		t.Errorf("6 bytes over MaxPathBytes 5: got %v", err)
	}
	if _, err := l.Clean("a/b/c"); !errors.Is(err, ErrTooLong) {
		t.Errorf("3 segments over MaxDepth 2: got %v", err)
	}
	if got, err := l.Clean("a//b"); err != nil || got != "a/b" {
		t.Errorf(`Clean("a//b") = %q, %v`, got, err)
	}
	if got, err := l.CleanEntry("package/ab/cd"); err != nil || got != "ab/cd" {
		t.Errorf(`CleanEntry("package/ab/cd") = %q, %v`, got, err)
	}
}

func TestErrorsSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"a/../b", `".."`},
		{`a\b`, "backslash"},
		{"a\x00", "NUL"},
		{"a\x07", "control character"},
		{"", "empty"},
		{strings.Repeat("x", 2000), "MaxPathBytes = 1024"},
		{strings.Repeat("x/", 100), "MaxDepth = 64"},
	}
	for _, tt := range tests {
		_, err := Clean(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Clean(%q) error %v; want it to mention %s", short(tt.in), err, tt.want)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("Clean(%q) error is %d bytes long: quote a prefix only", short(tt.in), len(err.Error()))
		}
	}
	_, err := CleanQuery("\xff")
	if err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("CleanQuery(invalid UTF-8) error %v; want it to mention UTF-8", err)
	}
	_, err = CleanEntry("/abs")
	if err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("CleanEntry(/abs) error %v; want it to mention absolute", err)
	}
}

func TestTooLongErrorSaysWhichLimit(t *testing.T) {
	t.Parallel()
	l := Limits{MaxPathBytes: 8, MaxDepth: 2}
	for in, want := range map[string]string{"123456789": "MaxPathBytes", "a/b/c": "MaxDepth"} {
		_, err := l.Clean(in)
		var tl *TooLongError
		if !errors.As(err, &tl) || tl.Limit != want || !errors.Is(err, ErrTooLong) {
			t.Errorf("Clean(%q) = %v, want a TooLongError on %s", in, err, want)
		}
	}
}

// Ingest cleans every entry of every tarball: a clean name must not cost
// an allocation.
func TestCleanPathDoesNotAllocate(t *testing.T) {
	for _, p := range []string{"lib/a/b.js", "/lib/a.js", "lib/a/"} {
		if n := testing.AllocsPerRun(100, func() { _, _ = Clean(p) }); n != 0 {
			t.Errorf("Clean(%q) allocates %v times", p, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = CleanEntry("package/lib/a.js") }); n != 0 {
		t.Errorf("CleanEntry allocates %v times", n)
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{
		"index.js", "/a//b/./c/", "package/lib/a.js", "../x", `a\b`, "a\x00b", "caf\xe9",
		"a\u0085b", ".", "", "package", "./package/./a", strings.Repeat("a/", 70),
	} {
		f.Add(s)
	}
	l := Limits{MaxPathBytes: 64, MaxDepth: 8} // small, so the fuzzer reaches them
	f.Fuzz(func(t *testing.T, in string) {
		check := func(fn string, out string, err error) {
			if err != nil {
				if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrTooLong) && !errors.Is(err, ErrAtRoot) {
					t.Fatalf("%s(%q): error of no known kind: %v", fn, in, err)
				}
				if out != "" {
					t.Fatalf("%s(%q) = %q with error %v", fn, in, out, err)
				}
				return
			}
			if out == "" || strings.HasPrefix(out, "/") || strings.HasSuffix(out, "/") {
				t.Fatalf("%s(%q) = %q: empty or slash at an end", fn, in, out)
			}
			segs := strings.Split(out, "/")
			for _, s := range segs {
				if s == "" || s == "." || s == ".." {
					t.Fatalf("%s(%q) = %q: segment %q", fn, in, out, s)
				}
			}
			if strings.ContainsAny(out, "\\\x00") || len(out) > l.MaxPathBytes || len(segs) > l.MaxDepth {
				t.Fatalf("%s(%q) = %q: breaks a rule", fn, in, out)
			}
			again, err := l.Clean(out)
			if err != nil || again != out {
				t.Fatalf("%s(%q) = %q, but Clean of that = %q, %v: not idempotent", fn, in, out, again, err)
			}
		}
		out, err := l.Clean(in)
		check("Clean", out, err)
		q, qerr := l.CleanQuery(in)
		check("CleanQuery", q, qerr)
		if qerr == nil && !utf8.ValidString(q) {
			t.Fatalf("CleanQuery(%q) = %q: not UTF-8", in, q)
		}
		if utf8.ValidString(in) && (qerr == nil) != (err == nil) {
			t.Fatalf("Clean and CleanQuery disagree on valid UTF-8 %q: %v vs %v", in, err, qerr)
		}
		e, eerr := l.CleanEntry(in)
		check("CleanEntry", e, eerr)
		if eerr == nil && strings.HasPrefix(in, "/") {
			t.Fatalf("CleanEntry(%q) accepted an absolute name", in)
		}
	})
}
