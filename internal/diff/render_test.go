package diff

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/store"
)

func change(path string, old, new []byte) (Change, []byte, []byte) {
	o := &store.File{Path: path, Hash: store.HashOf(old), Mode: store.ModeRegular | 0o644}
	n := &store.File{Path: path, Hash: store.HashOf(new), Mode: store.ModeRegular | 0o644}
	return Change{Path: path, Status: Modified, Old: o, New: n}, old, new
}

// npm prints no hunks for a file whose extension is in binary-extensions
// (and ignores --diff-text); Text prints them.
func TestTextShowsHunksOfBinaryExtensions(t *testing.T) {
	c, a, b := change("icon.png", []byte("one\n"), []byte("two\n"))
	plain := Render(c, a, b, "1", "2", Options{Context: 3})
	if strings.Contains(plain.Text, "@@") || !strings.HasSuffix(plain.Text, "--- a/icon.png\n+++ b/icon.png\n") {
		t.Errorf("without Text:\n%s", plain.Text)
	}
	text := Render(c, a, b, "1", "2", Options{Context: 3, Text: true})
	if !strings.Contains(text.Text, "@@ -1,1 +1,1 @@\n-one\n+two\n") || text.Added != 1 || text.Removed != 1 {
		t.Errorf("with Text:\n%s (+%d -%d)", text.Text, text.Added, text.Removed)
	}
}

// A line diff over its work budget stops, says so, and prints the
// headers without hunks instead of running for minutes.
func TestTooComplexStopsAtMaxWork(t *testing.T) {
	var a, b strings.Builder
	for i := range 2000 {
		a.WriteString(strings.Repeat("a", i%17) + "\n")
		b.WriteString(strings.Repeat("b", i%13+1) + "\n")
	}
	c, ob, nb := change("big.js", []byte(a.String()), []byte(b.String()))
	fd := Render(c, ob, nb, "1", "2", Options{Context: 3, MaxWork: 10_000})
	if !fd.TooComplex || strings.Contains(fd.Text, "@@") || !strings.HasSuffix(fd.Text, "+++ b/big.js\n") {
		t.Errorf("TooComplex=%v:\n%s", fd.TooComplex, fd.Text)
	}
	if full := Render(c, ob, nb, "1", "2", Options{Context: 3}); full.TooComplex || full.Added != 2000 {
		t.Errorf("with the default budget: TooComplex=%v, +%d", full.TooComplex, full.Added)
	}
}

// Bodies that differ only in invalid bytes decoding to the same text are
// unchanged for npm (it compares decoded strings), so they print nothing.
func TestInvalidBytesDecodingAlikeAreUnchanged(t *testing.T) {
	c, a, b := change("x.txt", []byte("a\xff\n"), []byte("a\xfe\n"))
	if fd := Render(c, a, b, "1", "2", Options{Context: 3}); fd.Text != "" {
		t.Errorf("got:\n%s", fd.Text)
	}
}

// Changes never needs a body: an identical hash and mode is unchanged,
// whatever the files hold.
func TestChangesFromHashesAndModes(t *testing.T) {
	h := store.HashOf([]byte("x"))
	old := []store.File{{Path: "a", Hash: h}, {Path: "b", Hash: h, Mode: store.ModeRegular | 0o644}, {Path: "c", Hash: h}}
	new := []store.File{{Path: "a", Hash: h, Mode: store.ModeRegular | 0o644}, {Path: "b", Hash: h, Mode: store.ModeRegular | 0o755}, {Path: "d", Hash: h}}
	got := Changes(old, new, nil)
	want := []string{"b modified", "c deleted", "d added"} // a: unknown mode is 100644
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i, c := range got {
		if s := c.Path + " " + string(c.Status); s != want[i] {
			t.Errorf("change %d = %s, want %s", i, s, want[i])
		}
	}
}

// TestDefaultMaxWorkBoundsAFile: two 5,000-line files with no line in
// common need about 5·10^7 steps (4 s of CPU), past the default budget
// of about a second, so the default shows them without hunks; the
// 2·10^8 default before let such a file cost half a minute, on every
// page of a diff that starts inside it.
func TestDefaultMaxWorkBoundsAFile(t *testing.T) {
	var a, b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&a, "old line %d\n", i)
		fmt.Fprintf(&b, "new line %d\n", i)
	}
	c, ob, nb := change("huge.js", []byte(a.String()), []byte(b.String()))
	if fd := Render(c, ob, nb, "1", "2", Options{Context: 3}); !fd.TooComplex {
		t.Errorf("5,000 lines against 5,000 others were diffed within the default budget (%d): +%d -%d", DefaultMaxWork, fd.Added, fd.Removed)
	}
}
