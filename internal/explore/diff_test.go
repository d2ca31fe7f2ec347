package explore

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/diff/difftest"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// readCounter is the real store, counting which bodies are read.
type readCounter struct {
	store.Reader
	mu   sync.Mutex
	read map[store.Hash]int
}

func (c *readCounter) Blob(ctx context.Context, h store.Hash) ([]byte, error) {
	c.mu.Lock()
	c.read[h]++
	c.mu.Unlock()
	return c.Reader.Blob(ctx, h)
}

// exactOnly resolves exact versions only, which is all these tests ask.
type exactOnly struct{}

func (exactOnly) Resolve(_ context.Context, _ string, spec npmspec.Spec) (string, error) {
	if spec.Kind != npmspec.Version {
		return "", errors.New("exactOnly: not an exact version")
	}
	return spec.Raw, nil
}

type noFill struct{}

func (noFill) Fill(context.Context, string, string) error { return errors.New("noFill: not stored") }

// storeOf is an embedded store holding name's versions, each given as
// its files' bodies by path.
func storeOf(t *testing.T, name string, versions map[string]map[string]string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for v, files := range versions {
		if _, err := ingest.Ingest(t.Context(), st, name, v, "sha512-x", tb.Package(t, files), ingest.DefaultLimits()); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func fixtureService(t *testing.T) (*Service, *readCounter) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for v, tgz := range difftest.Tarballs(t) {
		if _, err := ingest.Ingest(t.Context(), st, difftest.Package, v, "sha512-x", tgz, ingest.DefaultLimits()); err != nil {
			t.Fatal(err)
		}
	}
	rc := &readCounter{Reader: st, read: map[store.Hash]int{}}
	return New(Options{Store: rc, Resolver: exactOnly{}, Filler: noFill{}, Limits: DefaultLimits()}), rc
}

// TestDiffReadsOnlyChangedBodies: files whose hash and mode agree are
// skipped without reading their bodies.
func TestDiffReadsOnlyChangedBodies(t *testing.T) {
	t.Parallel()
	s, rc := fixtureService(t)
	ctx := t.Context()
	res, err := s.Diff(ctx, Request{Action: "diff", PackageName: difftest.Package, From: difftest.V1, To: difftest.V2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Truncated || len(res.Files) == 0 {
		t.Fatalf("truncated=%v, %d files", res.Truncated, len(res.Files))
	}
	oldFiles, err := rc.Reader.Files(ctx, difftest.Package, difftest.V1)
	if err != nil {
		t.Fatal(err)
	}
	newFiles, err := rc.Reader.Files(ctx, difftest.Package, difftest.V2)
	if err != nil {
		t.Fatal(err)
	}
	// A body read for a changed file may also be an unchanged file's
	// (same.png is logo.png's new body); only the others must be unread.
	changed := map[store.Hash]bool{}
	inNew := map[string]store.File{}
	for _, f := range newFiles {
		inNew[f.Path] = f
	}
	unchanged := 0
	for _, f := range oldFiles {
		if n, ok := inNew[f.Path]; !ok || n.Hash != f.Hash || n.Mode != f.Mode {
			changed[f.Hash], changed[n.Hash] = true, true
		}
	}
	for _, f := range newFiles {
		if _, ok := inNew[f.Path]; ok {
			continue
		}
		changed[f.Hash] = true
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, f := range oldFiles {
		if n, ok := inNew[f.Path]; ok && n.Hash == f.Hash && n.Mode == f.Mode && !changed[f.Hash] {
			unchanged++
			if rc.read[f.Hash] > 0 {
				t.Errorf("%s is unchanged but its body was read %d times", f.Path, rc.read[f.Hash])
			}
		}
	}
	if unchanged < 2 {
		t.Fatalf("only %d unchanged files with bodies of their own: the fixture no longer tests this", unchanged)
	}
	for _, f := range res.Files {
		if f.Path == "unchanged.js" || f.Path == "same.png" || f.Path == "empty.txt" {
			t.Errorf("unchanged %s listed as %s", f.Path, f.Status)
		}
	}
}

// fixtureWhole is the fixture's service, its V1 → V2 diff request and
// that diff whole, on one page.
func fixtureWhole(t *testing.T) (*Service, Request, *DiffResult) {
	t.Helper()
	s, _ := fixtureService(t)
	req := Request{Action: "diff", PackageName: difftest.Package, From: difftest.V1, To: difftest.V2}
	whole, err := s.Diff(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return s, req, whole
}

// TestDiffPagesCoverEverythingOnce: at the smallest page, following next
// visits every changed file exactly once and the texts add up.
func TestDiffPagesCoverEverythingOnce(t *testing.T) {
	t.Parallel()
	s, req, whole := fixtureWhole(t)
	ctx := t.Context()
	req.MaxBytes = MinAnswerBytes
	var text strings.Builder
	var paths []string
	for pages := 0; ; pages++ {
		res, err := s.Diff(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(res.Diff)
		for _, f := range res.Files {
			paths = append(paths, f.Path)
		}
		if res.Next == nil {
			break
		}
		if pages > 100 {
			t.Fatal("paging does not end")
		}
		req = *res.Next
	}
	if text.String() != whole.Diff {
		t.Errorf("pages concatenated differ from the whole")
	}
	var wholePaths []string
	for _, f := range whole.Files {
		wholePaths = append(wholePaths, f.Path)
	}
	if strings.Join(paths, ",") != strings.Join(wholePaths, ",") {
		t.Errorf("pages list %q, whole %q", paths, wholePaths)
	}
}

// FuzzDiffCursor: a cursor parses only as the String of one, and never
// panics.
func FuzzDiffCursor(f *testing.F) {
	f.Add("diff:0:0")
	f.Add("diff:12:4096")
	f.Add("diff:0:96:4000")
	f.Add("diff:0:96:1:2")
	f.Add("diff:-1:0")
	f.Add("diff:1")
	f.Add("grep:1:2")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseDiffCursor(s)
		if err != nil {
			var in *InputError
			if !errors.As(err, &in) || in.Field != "cursor" {
				t.Fatalf("parseDiffCursor(%q): %v, want a cursor InputError", s, err)
			}
			return
		}
		if s != "" && c.String() != s {
			// Leading zeros or "+" parse to the same cursor; only check
			// that the cursor's own spelling round-trips.
			if again, err := parseDiffCursor(c.String()); err != nil || again != c {
				t.Fatalf("%q → %+v does not round-trip: %+v, %v", s, c, again, err)
			}
		}
	})
}

// TestDiffPageCutInTrailingBlankLines: npm trims the end of the whole
// diff, so a page cut inside the last file's tail of blank context lines
// must not leave the next page an extra newline.
func TestDiffPageCutInTrailingBlankLines(t *testing.T) {
	t.Parallel()
	blank := strings.Repeat("\n", 3000)
	st := storeOf(t, "blank", map[string]map[string]string{"1.0.0": {"z.txt": "old\n" + blank}, "2.0.0": {"z.txt": "new\n" + blank}})
	s := New(Options{Store: st, Resolver: exactOnly{}, Filler: noFill{}, Limits: DefaultLimits()})
	ctxLines := 2500
	req := Request{Action: "diff", PackageName: "blank", From: "1.0.0", To: "2.0.0", ContextLines: &ctxLines}
	whole, err := s.Diff(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Truncated || !strings.HasSuffix(whole.Diff, "+new\n") {
		t.Fatalf("whole diff ends %q (truncated %v)", whole.Diff[max(0, len(whole.Diff)-20):], whole.Truncated)
	}
	req.MaxBytes = MinAnswerBytes
	var text strings.Builder
	for pages := 0; ; pages++ {
		res, err := s.Diff(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(res.Diff)
		if res.Next == nil {
			break
		}
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		req = *res.Next
	}
	if text.String() != whole.Diff {
		t.Errorf("pages end %q, whole diff %q", text.String()[max(0, text.Len()-20):], whole.Diff[max(0, len(whole.Diff)-20):])
	}
}

// TestDiffLongLinePaged: a line much longer than the page is cut inside
// (at rune boundaries), every page's JSON stays within maxBytes, and the
// pages' texts add up to the whole diff byte for byte.
func TestDiffLongLinePaged(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// Multi-byte runes, characters JSON escapes, and a tail of blank
	// lines after the long line in the last file.
	long := strings.Repeat("é<\"ab€𝄞 ", 3000)
	for v, files := range map[string]map[string]string{
		"1.0.0": {"a.js": "one\n" + long + "1\ntwo\n", "b.map": "x\n"},
		"2.0.0": {"a.js": "one\n" + long + "2\ntwo\n", "b.map": "y" + long + "\n\n\n"},
	} {
		tgz := tb.Package(t, files)
		if _, err := ingest.Ingest(t.Context(), st, "long", v, "sha512-x", tgz, ingest.DefaultLimits()); err != nil {
			t.Fatal(err)
		}
	}
	s := New(Options{Store: st, Resolver: exactOnly{}, Filler: noFill{}, Limits: DefaultLimits()})
	req := Request{Action: "diff", PackageName: "long", From: "1.0.0", To: "2.0.0", MaxBytes: 1 << 20}
	whole, err := s.Diff(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Truncated || len(whole.Diff) < 3*len(long) {
		t.Fatalf("whole diff: truncated %v, %d bytes", whole.Truncated, len(whole.Diff))
	}
	req.MaxBytes = MinAnswerBytes
	var text strings.Builder
	var paths []string
	pages := 0
	for ; ; pages++ {
		res, err := s.Diff(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > req.MaxBytes {
			t.Fatalf("page %d (cursor %q) is %d bytes of JSON, over maxBytes %d", pages, req.Cursor, len(data), req.MaxBytes)
		}
		if !utf8.ValidString(res.Diff) {
			t.Fatalf("page %d cuts a rune", pages)
		}
		text.WriteString(res.Diff)
		for _, f := range res.Files {
			paths = append(paths, f.Path)
		}
		if res.Next == nil {
			break
		}
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		req = *res.Next
	}
	if pages < 10 {
		t.Fatalf("%d pages: the long lines were not cut", pages)
	}
	if text.String() != whole.Diff {
		t.Errorf("pages concatenated (%d bytes) differ from the whole (%d bytes)", text.Len(), len(whole.Diff))
	}
	if strings.Join(paths, ",") != "a.js,b.map" {
		t.Errorf("pages list files %q", paths)
	}
}

// TestDiffPatternLimits: include and exclude are held to the glob
// settings, and the 400 names the one exceeded.
func TestDiffPatternLimits(t *testing.T) {
	t.Parallel()
	s, _ := fixtureService(t)
	many := make(StringList, 6000)
	for i := range many {
		many[i] = strings.Repeat("*a", 60) + "*b" + strconv.Itoa(i)
	}
	for _, c := range []struct {
		field   string
		req     Request
		setting string
	}{
		{"include", Request{Include: many}, "--max-glob-patterns"},
		{"exclude", Request{Exclude: many}, "--max-glob-patterns"},
		{"include", Request{Include: StringList{strings.Repeat("a", 600)}}, "--max-glob-pattern-bytes"},
		{"include", Request{Include: StringList{strings.Repeat("*a", 70)}}, "--max-glob-wildcards"},
	} {
		r := c.req
		r.Action, r.PackageName, r.From, r.To = "diff", difftest.Package, difftest.V1, difftest.V2
		_, err := s.Diff(t.Context(), r)
		var in *InputError
		if !errors.As(err, &in) || in.Field != c.field || !strings.Contains(err.Error(), c.setting) {
			t.Errorf("%s: %v, want an InputError on %s naming %s", c.field, err, c.field, c.setting)
		}
	}
}

// TestDiffIncludeSelectsNothing: an include that selects no file says so
// rather than answer an empty diff as if nothing changed.
func TestDiffIncludeSelectsNothing(t *testing.T) {
	t.Parallel()
	s, _ := fixtureService(t)
	req := Request{Action: "diff", PackageName: difftest.Package, From: difftest.V1, To: difftest.V2, Include: StringList{"*.xyz"}}
	res, err := s.Diff(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 0 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "selected none") {
		t.Errorf("files %v, notes %q: want no file and a note", res.Files, res.Notes)
	}
	// An include that selects only unchanged files is no mistake.
	req.Include = StringList{"unchanged.js"}
	if res, err = s.Diff(t.Context(), req); err != nil || len(res.Notes) != 0 {
		t.Errorf("unchanged.js: notes %q, %v", res.Notes, err)
	}
}

// TestDiffPageEndsAfterItsWork: a page holds many small changed files
// that each spend the whole max-diff-work; it ends at a file boundary once
// its work passes DiffPageWork (truncatedBy diffWork), and following next
// still prints exactly the whole diff, each file once. Before, a 32 KiB
// page could hold ~200 such files: minutes of CPU from one request.
func TestDiffPageEndsAfterItsWork(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// Every line of every file differs, so each file's line diff passes
	// the small max-diff-work below and prints only its headers.
	const files = 12
	for v, mark := range map[string]string{"1.0.0": "old", "2.0.0": "new"} {
		pkg := map[string]string{}
		for i := range files {
			var b strings.Builder
			for l := range 200 {
				b.WriteString(mark + strconv.Itoa(i*1000+l) + "\n")
			}
			pkg["f"+strconv.Itoa(10+i)+".js"] = b.String()
		}
		if _, err := ingest.Ingest(t.Context(), st, "work", v, "sha512-x", tb.Package(t, pkg), ingest.DefaultLimits()); err != nil {
			t.Fatal(err)
		}
	}
	lim := DefaultLimits()
	lim.DiffMaxWork, lim.DiffPageWork = 1000, 3000
	s := New(Options{Store: st, Resolver: exactOnly{}, Filler: noFill{}, Limits: lim})
	unbounded := DefaultLimits()
	unbounded.DiffMaxWork, unbounded.DiffPageWork = 1000, 1<<40
	whole, err := New(Options{Store: st, Resolver: exactOnly{}, Filler: noFill{}, Limits: unbounded}).Diff(t.Context(),
		Request{Action: "diff", PackageName: "work", From: "1.0.0", To: "2.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Truncated || len(whole.Files) != files {
		t.Fatalf("whole diff: truncated %v by %q, %d files; want every one of %d on one page", whole.Truncated, whole.TruncatedBy, len(whole.Files), files)
	}
	for _, f := range whole.Files {
		if f.Note == "" || f.Added != nil || f.Removed != nil {
			t.Fatalf("%+v: want a too-complex note and no line counts", f)
		}
	}
	req := Request{Action: "diff", PackageName: "work", From: "1.0.0", To: "2.0.0"}
	var text strings.Builder
	var paths []string
	pages := 1
	for ; ; pages++ {
		res, err := s.Diff(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		// Each file passes max-diff-work (1,001 steps): a page ends
		// after its third, the first past 3,000.
		if len(res.Files) != 3 || (res.Next != nil && res.TruncatedBy != TruncDiffWork) {
			t.Fatalf("page %d: %d files, truncatedBy %q; want 3 files and %q", pages, len(res.Files), res.TruncatedBy, TruncDiffWork)
		}
		text.WriteString(res.Diff)
		for _, f := range res.Files {
			paths = append(paths, f.Path)
		}
		if res.Next == nil {
			break
		}
		if pages > files {
			t.Fatal("paging does not end")
		}
		req = *res.Next
	}
	if text.String() != whole.Diff {
		t.Errorf("pages concatenated differ from the whole diff")
	}
	if len(paths) != files || pages != files/3 {
		t.Errorf("%d pages list %d files %q, want each of %d once on %d pages", pages, len(paths), paths, files, files/3)
	}
}

// TestDiffPagesSayWhereTheyAre: every page gives the whole diff's totals,
// the same on each, and the files the pages list (Files and Unprinted)
// add up to them; a page that starts inside a file names it (Continues,
// after a page that GoesOn), and the file numbers run on from page to
// page. Before, a page's count of its own files read like the whole
// diff's, and a page inside a file showed hunks under no file header.
func TestDiffPagesSayWhereTheyAre(t *testing.T) {
	t.Parallel()
	s, req, whole := fixtureWhole(t)
	ctx := t.Context()
	byStatus := map[string]int{}
	for _, f := range whole.Files {
		byStatus[f.Status]++
	}
	if whole.Truncated || whole.Continues != nil || whole.GoesOn || whole.FirstFile != 1 || whole.LastFile != whole.TotalFiles {
		t.Fatalf("whole diff: truncated %v, continues %v, goesOn %v, files %d–%d of %d", whole.Truncated, whole.Continues, whole.GoesOn, whole.FirstFile, whole.LastFile, whole.TotalFiles)
	}
	// invalid-utf8.txt's bytes differ only where they are not UTF-8
	// (replacement-char.txt's: one is U+FFFD itself): npm prints nothing
	// for them, and the answer says so.
	if !slices.Equal(whole.Unprinted, fixtureUnprinted) {
		t.Fatalf("unprinted %q, want %q", whole.Unprinted, fixtureUnprinted)
	}
	byStatus["modified"] += len(fixtureUnprinted)
	if len(whole.Files)+len(whole.Unprinted) != whole.TotalFiles || !maps.Equal(byStatus, whole.TotalByStatus) {
		t.Fatalf("whole diff: %d files + %d unprinted, total %d; statuses %v, totalByStatus %v",
			len(whole.Files), len(whole.Unprinted), whole.TotalFiles, byStatus, whole.TotalByStatus)
	}

	for _, nameOnly := range []bool{false, true} {
		req := req
		req.NameOnly, req.MaxBytes = nameOnly, MinAnswerBytes
		listed, pages, continued := 0, 0, 0
		var prev *DiffResult
		for {
			res, err := s.Diff(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			data, _ := json.Marshal(res)
			if len(data) > req.MaxBytes {
				t.Errorf("page %d (cursor %q): %d bytes of JSON, over %d", pages, req.Cursor, len(data), req.MaxBytes)
			}
			if res.TotalFiles != whole.TotalFiles || !maps.Equal(res.TotalByStatus, whole.TotalByStatus) {
				t.Errorf("page %d: totals %d %v, want the whole diff's %d %v", pages, res.TotalFiles, res.TotalByStatus, whole.TotalFiles, whole.TotalByStatus)
			}
			listed += len(res.Files) + len(res.Unprinted)
			want := 1
			if prev != nil {
				want = prev.LastFile + 1
				if prev.GoesOn {
					want = prev.LastFile
				}
			}
			if res.FirstFile != want {
				t.Errorf("page %d: first file %d, want %d", pages, res.FirstFile, want)
			}
			starts := len(res.Files) + len(res.Unprinted)
			if res.Continues != nil {
				starts++
			}
			if res.LastFile-res.FirstFile+1 != starts {
				t.Errorf("page %d: files %d–%d, but %d files start or continue on it", pages, res.FirstFile, res.LastFile, starts)
			}
			switch onPrev := prev != nil && prev.GoesOn; {
			case onPrev && res.Continues == nil:
				t.Errorf("page %d starts inside a file (cursor %q) and names none", pages, req.Cursor)
			case onPrev:
				continued++
				// The file continued is the previous page's last.
				last := prev.Continues
				if n := len(prev.Files); n > 0 {
					last = &prev.Files[n-1]
				}
				if !reflect.DeepEqual(res.Continues, last) {
					t.Errorf("page %d continues %+v, want the previous page's last file %+v", pages, res.Continues, last)
				}
			case res.Continues != nil:
				t.Errorf("page %d continues %q after a page that ended with its file", pages, res.Continues.Path)
			}
			if res.Next == nil {
				if res.LastFile != whole.TotalFiles || res.GoesOn {
					t.Errorf("last page: files up to %d of %d, goesOn %v", res.LastFile, whole.TotalFiles, res.GoesOn)
				}
				break
			}
			if pages > 100 {
				t.Fatal("paging does not end")
			}
			prev, req = res, *res.Next
		}
		if listed != whole.TotalFiles {
			t.Errorf("nameOnly %v: the pages list %d files, the totals say %d", nameOnly, listed, whole.TotalFiles)
		}
		if !nameOnly && (pages < 4 || continued == 0) {
			t.Errorf("%d pages, %d starting inside a file: the fixture no longer exercises this", pages, continued)
		}
	}
}

// TestDiffExcludeReadsPatternsAsInclude: for each pattern, the files that
// include selects and the files that exclude keeps split the whole diff
// between them: exclude reads "*.d.ts" as a file name in any folder and
// "lib" as a folder, as include (npm diff's path arguments) does. Before,
// exclude read doublestar globs, so "*.d.ts" dropped only top-level files
// while include took them in every folder.
func TestDiffExcludeReadsPatternsAsInclude(t *testing.T) {
	t.Parallel()
	s, _ := fixtureService(t)
	changed := func(r Request) []string {
		t.Helper()
		r.Action, r.PackageName, r.From, r.To, r.NameOnly, r.MaxBytes = "diff", difftest.Package, difftest.V1, difftest.V2, true, 1<<20
		res, err := s.Diff(t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		if res.Next != nil {
			t.Fatal("the fixture's name-only diff should fit one page")
		}
		var paths []string
		for _, f := range res.Files {
			paths = append(paths, f.Path)
		}
		return paths
	}
	all := changed(Request{})
	for _, p := range []string{"*.d.ts", "lib", "*.png", "lib/*.js"} {
		in, out := changed(Request{Include: StringList{p}}), changed(Request{Exclude: StringList{p}})
		if len(in) == 0 || len(out) == 0 {
			t.Errorf("%q: include %v, exclude %v: the fixture should have files on both sides", p, in, out)
		}
		both := append(slices.Clone(in), out...)
		slices.Sort(both)
		want := slices.Clone(all)
		slices.Sort(want)
		if !slices.Equal(both, want) {
			t.Errorf("%q: include %v and exclude %v do not split the diff's %v", p, in, out, all)
		}
	}
}

// TestDiffFilesHaveSizes: each changed file says its size in each
// version it is in (nameOnly too), so an agent can choose what to read.
func TestDiffFilesHaveSizes(t *testing.T) {
	t.Parallel()
	s, rc := fixtureService(t)
	ctx := t.Context()
	sizes := map[string]map[string]int64{}
	for _, v := range []string{difftest.V1, difftest.V2} {
		files, err := rc.Reader.Files(ctx, difftest.Package, v)
		if err != nil {
			t.Fatal(err)
		}
		sizes[v] = map[string]int64{}
		for _, f := range files {
			sizes[v][f.Path] = f.Size
		}
	}
	for _, nameOnly := range []bool{false, true} {
		res, err := s.Diff(ctx, Request{Action: "diff", PackageName: difftest.Package, From: difftest.V1, To: difftest.V2, NameOnly: nameOnly})
		if err != nil || len(res.Files) < 3 {
			t.Fatalf("diff = %+v, %v", res, err)
		}
		for _, f := range res.Files {
			for v, got := range map[string]*int64{difftest.V1: f.OldBytes, difftest.V2: f.NewBytes} {
				want, in := sizes[v][f.Path]
				if (got != nil) != in || got != nil && *got != want {
					t.Errorf("nameOnly %v: %s (%s) in %s: size %v, want %d (in it: %v)", nameOnly, f.Path, f.Status, v, got, want, in)
				}
			}
		}
	}
}

// heldFiles hands out one slice per version's listing, as the store's
// cache does (diffPair knows a listing by its slice).
type heldFiles struct {
	*readCounter
	mu    sync.Mutex
	lists map[string][]store.File
}

func (h *heldFiles) Files(ctx context.Context, name, version string) ([]store.File, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if fs, ok := h.lists[version]; ok {
		return fs, nil
	}
	fs, err := h.readCounter.Files(ctx, name, version)
	if err == nil {
		h.lists[version] = fs
	}
	return fs, err
}

// fixtureUnprinted are the fixture's V1 → V2 changes npm diff prints
// nothing for: their bytes differ, their decoded text does not.
var fixtureUnprinted = []string{"invalid-utf8.txt", "replacement-char.txt"}

// TestDiffNameOnlyReadsAPairOnce: a name-only diff needs the bodies of a
// modified file not known valid UTF-8 only to learn whether npm prints it
// (invalid-utf8.txt's bytes differ, its text does not); once a diff of
// the pair (of either kind) read them, a name-only diff reads no body and
// answers the same.
func TestDiffNameOnlyReadsAPairOnce(t *testing.T) {
	t.Parallel()
	for _, first := range []bool{true, false} { // name-only first, full first
		s, rc := fixtureService(t)
		hf := &heldFiles{readCounter: rc, lists: map[string][]store.File{}}
		s = New(Options{Store: hf, Resolver: exactOnly{}, Filler: noFill{}, Limits: DefaultLimits()})
		req := Request{Action: "diff", PackageName: difftest.Package, From: difftest.V1, To: difftest.V2, NameOnly: first}
		want, err := s.Diff(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		rc.mu.Lock()
		before := len(rc.read)
		clear(rc.read)
		rc.mu.Unlock()
		if before == 0 {
			t.Fatal("the first diff read no body: the fixture no longer tests this")
		}
		req.NameOnly = true
		got, err := s.Diff(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		rc.mu.Lock()
		if len(rc.read) > 0 {
			t.Errorf("name-only first %v: the second diff read %d bodies", first, len(rc.read))
		}
		rc.mu.Unlock()
		if !slices.Equal(got.Unprinted, fixtureUnprinted) {
			t.Errorf("unprinted %q, want %q", got.Unprinted, fixtureUnprinted)
		}
		if first && (got.Diff != want.Diff || !slices.EqualFunc(got.Files, want.Files, func(a, b DiffFile) bool { return a.Path == b.Path && a.Status == b.Status })) {
			t.Errorf("the name-only diff changed once the pair was known:\n%s\nwant\n%s", got.Diff, want.Diff)
		}
	}
}

// unknownUTF8 is the store as it reads versions stored before file
// bodies' UTF-8 validity was kept (migration 00011): unknown for every
// file.
type unknownUTF8 struct{ *readCounter }

func (u unknownUTF8) Files(ctx context.Context, name, version string) ([]store.File, error) {
	fs, err := u.readCounter.Files(ctx, name, version)
	for i := range fs {
		fs[i].UTF8 = store.UTF8Unknown
	}
	return fs, err
}

// TestDiffNameOnlyReadsOnlyBodiesNotValid: a pair's first name-only diff
// reads a modified file's bodies only when one is not known valid UTF-8:
// two valid bodies that differ are different text, which npm prints,
// while invalid-utf8.txt and replacement-char.txt (one body valid, one
// not) differ in bytes and not in text, which only their bodies tell.
// Versions whose validity is unknown are read as before. Both answers
// are what npm diff prints.
func TestDiffNameOnlyReadsOnlyBodiesNotValid(t *testing.T) {
	t.Parallel()
	var c difftest.Case
	for _, c = range difftest.Cases() {
		if c.Name == "name-only" {
			break
		}
	}
	want := difftest.Want(t, c)
	for _, known := range []bool{true, false} {
		s, rc := fixtureService(t)
		if !known {
			s = New(Options{Store: unknownUTF8{rc}, Resolver: exactOnly{}, Filler: noFill{}, Limits: DefaultLimits()})
		}
		ctx := t.Context()
		res, err := s.Diff(ctx, Request{Action: "diff", PackageName: difftest.Package, From: c.From, To: c.To, NameOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Diff != want || !slices.Equal(res.Unprinted, fixtureUnprinted) {
			t.Errorf("validity known %v: unprinted %q (want %q), diff:\n%s\nnpm diff:\n%s", known, res.Unprinted, fixtureUnprinted, res.Diff, want)
		}
		// The bodies of paths where one is not valid UTF-8 (logo.png's
		// too, a PNG) may be read; lib/index.js's, valid in both versions,
		// need not.
		var listings [][]store.File
		notValid := map[string]bool{}
		for _, v := range []string{c.From, c.To} {
			files, err := rc.Reader.Files(ctx, difftest.Package, v)
			if err != nil {
				t.Fatal(err)
			}
			listings = append(listings, files)
			for _, f := range files {
				notValid[f.Path] = notValid[f.Path] || f.UTF8 != store.UTF8Valid
			}
		}
		mayRead := map[store.Hash]bool{}
		var index store.Hash
		for _, files := range listings {
			for _, f := range files {
				mayRead[f.Hash] = mayRead[f.Hash] || notValid[f.Path]
				if f.Path == "lib/index.js" {
					index = f.Hash
				}
			}
		}
		if !notValid["replacement-char.txt"] || notValid["lib/index.js"] {
			t.Fatal("the fixture's validities are not what this test assumes")
		}
		rc.mu.Lock()
		if known {
			for h, n := range rc.read {
				if !mayRead[h] {
					t.Errorf("a body of a path valid UTF-8 in both versions (sha256 %x…) was read %d times", h[:4], n)
				}
			}
			if len(rc.read) == 0 {
				t.Error("no body read: the silent files' cannot be told from their hashes")
			}
		} else if rc.read[index] == 0 {
			t.Error("validity unknown: lib/index.js's bodies were not read, so nothing told its text changed")
		}
		rc.mu.Unlock()
	}
}
