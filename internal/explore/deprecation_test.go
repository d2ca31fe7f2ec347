package explore_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// deprecationNotes are the notes of a that say a version is deprecated.
func deprecationNotes(a explore.Answer) []string {
	var out []string
	for _, n := range a.Notes {
		if strings.Contains(n, " is deprecated: ") {
			out = append(out, n)
		}
	}
	return out
}

// TestDeprecatedVersionIsNoted: the first page of every answer about a
// deprecated version says so in the registry's words, on one line, cut
// at Limits.DeprecationNoteBytes with the setting named; a page that
// continues an answer (a cursor, a read's next lines) does not repeat it, and a version that is not
// deprecated has no such note.
func TestDeprecatedVersionIsNoted(t *testing.T) {
	c := newChain(t)
	var lines strings.Builder
	for i := range 25 {
		fmt.Fprintf(&lines, "line %d\n", i+1)
	}
	files := map[string]string{"a.js": lines.String()}
	for i := range 200 {
		files[fmt.Sprintf("lib/a-file-with-a-long-name-%03d.js", i)] = "x\n"
	}
	tgz := tarballtest.Package(t, files)
	msg := "request has been deprecated,\nsee https://example.com/issues/3142 " + strings.Repeat("and more ", 20)
	c.reg.Publish("old", "1.0.0", tgz, fakeregistry.Deprecated(msg))
	c.reg.Publish("old", "2.0.0", tgz)
	ctx := t.Context()

	list, err := c.svc.List(ctx, explore.Request{Action: "list", PackageName: "old", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	want := "old@1.0.0 is deprecated: request has been deprecated, see https://example.com/issues/3142 and more and mo… [cut at 80 bytes, setting deprecation-note-bytes]"
	if got := deprecationNotes(list.Answer); len(got) != 1 || got[0] != want {
		t.Errorf("list notes %q\nwant %q", list.Notes, want)
	}
	read, err := c.svc.Read(ctx, explore.Request{Action: "read", PackageName: "old", Version: "1.0.0", Path: "a.js"})
	if err != nil {
		t.Fatal(err)
	}
	if got := deprecationNotes(read.Answer); len(got) != 1 || read.Next == nil {
		t.Fatalf("read: notes %q, next %v; want the note and a next page", read.Notes, read.Next)
	}
	more, err := c.svc.Read(ctx, *read.Next)
	if err != nil {
		t.Fatal(err)
	}
	if got := deprecationNotes(more.Answer); len(got) != 0 {
		t.Errorf("the second page repeats the note: %q", got)
	}
	glob, err := c.svc.Glob(ctx, explore.Request{Action: "glob", PackageName: "old", Version: "1.0.0", Patterns: explore.StringList{"**"}, MaxBytes: explore.MinAnswerBytes})
	if err != nil {
		t.Fatal(err)
	}
	if got := deprecationNotes(glob.Answer); len(got) != 1 || glob.Next == nil || glob.Next.Cursor == "" {
		t.Fatalf("glob: notes %q, next %+v; want the note and a cursor", glob.Notes, glob.Next)
	}
	if more, err := c.svc.Glob(ctx, *glob.Next); err != nil || len(deprecationNotes(more.Answer)) != 0 {
		t.Errorf("glob's second page: %v, notes %q; want no deprecation note", err, more.Notes)
	}
	plain, err := c.svc.List(ctx, explore.Request{Action: "list", PackageName: "old", Version: "^2"})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Version != "2.0.0" || len(deprecationNotes(plain.Answer)) != 0 {
		t.Errorf("old@^2 answered %s with notes %q; want 2.0.0 and no deprecation", plain.Version, plain.Notes)
	}
}

// TestDeprecatedAfterStored: a version deprecated after it was stored is
// noted once the registry has been read again for a range or a dist-tag
// (the registry client's entry is newer than the stored record), and
// then for its exact version too.
func TestDeprecatedAfterStored(t *testing.T) {
	c := newChain(t)
	c.reg.Publish("late", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x\n"}))
	ctx := t.Context()
	exact := explore.Request{Action: "list", PackageName: "late", Version: "1.0.0"}
	first, err := c.svc.List(ctx, exact)
	if err != nil {
		t.Fatal(err)
	}
	if got := deprecationNotes(first.Answer); len(got) != 0 {
		t.Fatalf("before it was deprecated: notes %q", got)
	}
	c.reg.Deprecate("late", "1.0.0", "use early")
	tag, err := c.svc.List(ctx, explore.Request{Action: "list", PackageName: "late", Version: "latest"})
	if err != nil {
		t.Fatal(err)
	}
	after, err := c.svc.List(ctx, exact)
	if err != nil {
		t.Fatal(err)
	}
	for what, a := range map[string]explore.Answer{"latest": tag.Answer, "1.0.0": after.Answer} {
		if got := deprecationNotes(a); len(got) != 1 || got[0] != "late@1.0.0 is deprecated: use early" {
			t.Errorf("late@%s notes %q, want the deprecation", what, a.Notes)
		}
	}
}

// TestDiffNotesDeprecatedSides: a diff's first page says which of its two
// versions is deprecated.
func TestDiffNotesDeprecatedSides(t *testing.T) {
	c := newChain(t)
	c.reg.Publish("up", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "one\n"}))
	c.reg.Publish("up", "2.0.0", tarballtest.Package(t, map[string]string{"a.js": "two\n"}), fakeregistry.Deprecated("use 1"))
	res, err := c.svc.Diff(t.Context(), explore.Request{Action: "diff", PackageName: "up", From: "1.0.0", To: "2.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 1 || res.Notes[0] != "up@2.0.0 is deprecated: use 1" {
		t.Errorf("diff notes %q, want only up@2.0.0's deprecation", res.Notes)
	}
}

// TestDeprecatedLatestSkipped: a bare name or a range whose pick passes
// over a deprecated dist-tag latest (npm's rule) says, in resolvedFrom
// and a note, that latest is deprecated, which version was picked
// instead and how to read latest anyway; a bare name whose latest is not
// deprecated keeps "latest: no version given" and no such note.
func TestDeprecatedLatestSkipped(t *testing.T) {
	c := newChain(t)
	tgz := tarballtest.Package(t, map[string]string{"a.js": "x\n"})
	c.reg.Publish("skip", "1.0.0", tgz)
	c.reg.Publish("skip", "1.1.0", tgz)
	c.reg.Publish("skip", "2.0.0", tgz, fakeregistry.Deprecated("broken, use 1.1.0"))
	c.reg.Publish("fine", "1.0.0", tgz)
	ctx := t.Context()
	for _, tc := range []struct{ version, why string }{
		{"", "no version given; latest 2.0.0 is deprecated, so the newest version that is not (as npm picks)"},
		{"*", "range *; latest 2.0.0 is deprecated, so the newest version that is not (as npm picks)"},
		{">=1", "range >=1; latest 2.0.0 is deprecated, so the newest version that is not (as npm picks)"},
	} {
		res, err := c.svc.List(ctx, explore.Request{Action: "list", PackageName: "skip", Version: tc.version})
		if err != nil {
			t.Fatal(err)
		}
		if res.Version != "1.1.0" || res.ResolvedFrom != tc.why {
			t.Errorf("skip@%q: %s (%s), want 1.1.0 (%s)", tc.version, res.Version, res.ResolvedFrom, tc.why)
		}
		want := `dist-tag latest is 2.0.0, deprecated ("broken, use 1.1.0"): to read it anyway, give version "2.0.0"`
		if !slices.Contains(res.Notes, want) {
			t.Errorf("skip@%q notes %q, want %q", tc.version, res.Notes, want)
		}
	}
	// A range latest does not satisfy says nothing of latest.
	res, err := c.svc.List(ctx, explore.Request{Action: "list", PackageName: "skip", Version: "^1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != "1.1.0" || res.ResolvedFrom != "range ^1" || len(res.Notes) != 0 {
		t.Errorf("skip@^1: %s (%s) notes %q, want 1.1.0 (range ^1) and no note", res.Version, res.ResolvedFrom, res.Notes)
	}
	res, err = c.svc.List(ctx, explore.Request{Action: "list", PackageName: "fine"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != "1.0.0" || res.ResolvedFrom != "latest: no version given" || len(res.Notes) != 0 {
		t.Errorf("fine: %s (%s) notes %q, want 1.0.0 (latest: no version given) and no note", res.Version, res.ResolvedFrom, res.Notes)
	}
}
