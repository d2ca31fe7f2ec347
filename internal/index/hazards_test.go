package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// minifiedBundle returns one line of n bytes of minified-looking JS.
func minifiedBundle(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 2))
	words := []string{"function ", "return ", "var ", "e", "t", "n", "(", ")", "{", "}", ";", ",", "=", ".", "r.default", "Object.defineProperty", "!0", "void 0", "&&", "||", "exports"}
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.Bytes()[:n]
}

// place writes s into b at off.
func place(b []byte, off int, s string) { copy(b[off:], s) }

// TestMinifiedBundle: a 3 MB one-line bundle (the kind codesearch's
// IndexWriter skips for its line length) is indexed and searched; a match
// deep in the line comes back as a window with its column.
func TestMinifiedBundle(t *testing.T) {
	b := minifiedBundle(3<<20, 1)
	place(b, 2_000_000, "useRouter")
	place(b, 2_500_000, "function fooSync(")
	docs := []Doc{{Path: "dist/bundle.min.js", Data: b}}
	ix := buildFile(t, docs, DefaultBuildLimits())
	if st := ix.Stats(); st.Coverage != 1 || st.IndexedBytes != 3<<20 {
		t.Fatalf("stats %+v, want the whole bundle indexed", st)
	}
	lim := DefaultSearchLimits()
	for _, tc := range []struct {
		pattern string
		col     int
	}{{"useRouter", 2_000_001}, {`function\s+\w+Sync`, 2_500_001}, {`use[R]outer`, 2_000_001}} {
		res, err := ix.Search(context.Background(), Query{Pattern: tc.pattern}, lim)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Matches) != 1 {
			t.Fatalf("%q: %d matches, want 1", tc.pattern, len(res.Matches))
		}
		m := res.Matches[0]
		if m.Line != 1 || m.Column != tc.col || m.LineBytes != 3<<20 {
			t.Errorf("%q: line %d col %d len %d, want 1 %d %d", tc.pattern, m.Line, m.Column, m.LineBytes, tc.col, 3<<20)
		}
		if len(m.Text) > lim.MaxLineWindow || !strings.Contains(m.Text, tc.pattern[:3]) {
			t.Errorf("%q: window of %d bytes %q", tc.pattern, len(m.Text), m.Text)
		}
		if got := string(b[m.TextOffset : m.TextOffset+len(m.Text)]); got != m.Text {
			t.Errorf("%q: TextOffset %d does not locate Text", tc.pattern, m.TextOffset)
		}
	}
}

// TestHugeJSONLine: a 20 MB JSON document on one line (like
// @mdn/browser-compat-data, 99.9% skipped by codesearch) is covered.
func TestHugeJSONLine(t *testing.T) { inBothFormsUnlessRace(t, testHugeJSONLine) }

func testHugeJSONLine(t *testing.T, build builder) {
	var b bytes.Buffer
	b.WriteString(`{"data":[`)
	for i := 0; b.Len() < 20<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":`)
		b.WriteString(strings.Repeat("7", 1+i%5))
		b.WriteString(`,"name":"entry","support":{"chrome":{"version_added":"12"}}}`)
	}
	b.WriteString(`,{"needle":"xyzzy"}]}`)
	docs := []Doc{{Path: "data.json", Data: b.Bytes()}}
	ix := build(t, docs, DefaultBuildLimits())
	if st := ix.Stats(); st.Coverage != 1 {
		t.Fatalf("coverage %v, want 1", st.Coverage)
	}
	for _, pat := range []string{"xyzzy", `"needle":"\w+"`, `needle.*zz`} {
		res, err := search(t, ix, Query{Pattern: pat})
		if err != nil || len(res.Matches) != 1 {
			t.Fatalf("%q: %v, %d matches", pat, err, len(res.Matches))
		}
		want := strings.Index(b.String(), "xyzzy")
		if pat == "xyzzy" && res.Matches[0].Column != want+1 {
			t.Errorf("column %d, want %d", res.Matches[0].Column, want+1)
		}
	}
}

// TestManyTrigrams: a file with far more than 20,000 distinct trigrams
// (codesearch's cut-off) is indexed.
func TestManyTrigrams(t *testing.T) { inBothForms(t, testManyTrigrams) }

func testManyTrigrams(t *testing.T, build builder) {
	rng := rand.New(rand.NewPCG(3, 3))
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n"[rng.IntN(64)]
	}
	place(b, 777_777, "\nNEEDLE_42\n")
	ix := build(t, []Doc{{Path: "random.txt", Data: b}}, DefaultBuildLimits())
	if st := ix.Stats(); st.Trigrams < 100_000 || st.Coverage != 1 {
		t.Fatalf("stats %+v: want > 100,000 trigrams, all indexed", st)
	}
	res, _ := search(t, ix, Query{Pattern: "NEEDLE_42"})
	want := bytes.Count(b[:777_778], []byte("\n")) + 1
	if len(res.Matches) != 1 || res.Matches[0].Line != want {
		t.Fatalf("matches %+v, want line %d", res.Matches, want)
	}
}

// TestInvalidUTF8: invalid UTF-8 is indexed and searched byte for byte;
// . matches an invalid byte, as in Go's regexp.
func TestInvalidUTF8(t *testing.T) { inBothForms(t, testInvalidUTF8) }

func testInvalidUTF8(t *testing.T, build builder) {
	docs := []Doc{{Path: "latin1.txt", Data: []byte("caf\xe9 ol\xe9\nna\xefve \xff\xfe tail\nfin\xc3")}}
	ix := build(t, docs, DefaultBuildLimits())
	for _, tc := range []struct {
		pattern string
		lines   []int
	}{{"ol", []int{1}}, {"tail", []int{2}}, {`caf.`, []int{1}}, {`na.ve`, []int{2}}, {`fin.$`, []int{3}}, {"é", nil}} {
		res, _ := search(t, ix, Query{Pattern: tc.pattern})
		var lines []int
		for _, m := range res.Matches {
			lines = append(lines, m.Line)
		}
		if !equalInts(lines, tc.lines) {
			t.Errorf("%q: lines %v, want %v", tc.pattern, lines, tc.lines)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBinary: a NUL in the first 8000 bytes makes a file binary: it is
// skipped, counted and listed. A NUL later leaves it text.
func TestBinary(t *testing.T) { inBothForms(t, testBinary) }

func testBinary(t *testing.T, build builder) {
	late := append(bytes.Repeat([]byte("x\n"), 5000), []byte("\x00 match here\n")...)
	docs := []Doc{
		{Path: "a.png", Data: []byte("\x89PNG\r\n\x1a\n\x00\x00match")},
		{Path: "b.txt", Data: []byte("match\n")},
		{Path: "c.dat", Data: late},
	}
	ix := build(t, docs, DefaultBuildLimits())
	res, _ := search(t, ix, Query{Pattern: "match"})
	if res.FilesSearched != 2 || res.FilesSkipped != 1 || len(res.Skipped) != 1 || res.Skipped[0] != (SkippedFile{"a.png", SkipBinary}) {
		t.Fatalf("searched %d skipped %d %+v", res.FilesSearched, res.FilesSkipped, res.Skipped)
	}
	if len(res.Matches) != 2 || res.Matches[1].File != "c.dat" || res.Matches[1].Line != 5001 {
		t.Fatalf("matches %+v", res.Matches)
	}
	if st := ix.Stats(); st.BinaryFiles != 1 || st.TextFiles != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// TestLineEndings: lines split on \n only; a CR stays part of the line
// (so foo$ does not match "foo\r", as with ripgrep); a last line without
// newline counts; a trailing newline adds no empty line; a UTF-8 BOM is
// dropped as ripgrep drops it.
func TestLineEndings(t *testing.T) { inBothForms(t, testLineEndings) }

func testLineEndings(t *testing.T, build builder) {
	docs := []Doc{
		{Path: "bom.txt", Data: []byte("\ufefffoo\nbar\n")},
		{Path: "crlf.txt", Data: []byte("foo\r\nbar\r\n\r\nfoo")},
		{Path: "empty.txt", Data: nil},
		{Path: "nl.txt", Data: []byte("\n")},
	}
	ix := build(t, docs, DefaultBuildLimits())
	for _, tc := range []struct {
		pattern string
		want    []string // file:line:col:text
	}{
		{"foo$", []string{"bom.txt:1:1:foo", "crlf.txt:4:1:foo"}},
		{`foo\r$`, []string{"crlf.txt:1:1:foo\r"}},
		{"^foo", []string{"bom.txt:1:1:foo", "crlf.txt:1:1:foo\r", "crlf.txt:4:1:foo"}},
		{"^$", []string{"nl.txt:1:1:"}},
		{`^\r$`, []string{"crlf.txt:3:1:\r"}},
		{"x*", []string{"bom.txt:1:1:foo", "bom.txt:2:1:bar", "crlf.txt:1:1:foo\r", "crlf.txt:2:1:bar\r", "crlf.txt:3:1:\r", "crlf.txt:4:1:foo", "nl.txt:1:1:"}},
		{"o$", []string{"bom.txt:1:3:foo", "crlf.txt:4:3:foo"}},
	} {
		res, _ := search(t, ix, Query{Pattern: tc.pattern})
		var got []string
		for _, m := range res.Matches {
			got = append(got, m.File+":"+itoa(m.Line)+":"+itoa(m.Column)+":"+m.Text)
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%q: got %q, want %q", tc.pattern, got, tc.want)
		}
	}
}

func TestContextAndCaps(t *testing.T) { inBothForms(t, testContextAndCaps) }

func testContextAndCaps(t *testing.T, build builder) {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		b.WriteString("line ")
		b.WriteString(itoa(i))
		if i%5 == 0 {
			b.WriteString(" hit")
		}
		b.WriteString("\n")
	}
	docs := []Doc{{Path: "a.txt", Data: []byte(b.String())}, {Path: "b.txt", Data: []byte("hit\nhit\nhit\n")}, {Path: "c.txt", Data: []byte("hit\n")}}
	ix := build(t, docs, DefaultBuildLimits())
	ctx := context.Background()
	lim := DefaultSearchLimits()

	res, err := ix.Search(ctx, Query{Pattern: "hit", ContextLines: 2}, lim)
	if err != nil {
		t.Fatal(err)
	}
	first := res.Matches[0]
	if first.Line != 5 || strings.Join(first.Before, "|") != "line 3|line 4" || strings.Join(first.After, "|") != "line 6|line 7" {
		t.Errorf("context of first match: %+v", first)
	}
	if last := res.Matches[3]; last.Line != 20 || len(last.After) != 0 || len(last.Before) != 2 {
		t.Errorf("context at file end: %+v", last)
	}
	if b0 := res.Matches[4]; b0.File != "b.txt" || len(b0.Before) != 0 || strings.Join(b0.After, "|") != "hit|hit" {
		t.Errorf("context at file start: %+v", b0)
	}

	for _, tc := range []struct {
		q     Query
		lim   func(*SearchLimits)
		n     int
		trunc string
	}{
		{Query{Pattern: "hit"}, nil, 8, ""},
		{Query{Pattern: "hit", MaxMatches: 8}, nil, 8, ""},
		{Query{Pattern: "hit", MaxMatches: 7}, nil, 7, TruncMaxMatches},
		{Query{Pattern: "hit", MaxMatchesPerFile: 2}, nil, 5, TruncMaxMatchesPerFile},
		{Query{Pattern: "hit", MaxMatchesPerFile: 2, MaxMatches: 3}, nil, 3, TruncMaxMatches},
		{Query{Pattern: "hit"}, func(l *SearchLimits) { l.MaxOutputBytes = 200 }, 2, TruncOutputBytes},
		{Query{Pattern: "hit"}, func(l *SearchLimits) { l.DefaultMaxMatches = 1 }, 1, TruncMaxMatches},
		{Query{Pattern: "hit", Filter: func(p string) bool { return p != "b.txt" }}, nil, 5, ""},
	} {
		l := lim
		if tc.lim != nil {
			tc.lim(&l)
		}
		res, err := ix.Search(ctx, tc.q, l)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Matches) != tc.n || res.TruncatedBy != tc.trunc || res.Truncated != (tc.trunc != "") {
			t.Errorf("%+v: %d matches, truncated %v by %q; want %d by %q", tc.q, len(res.Matches), res.Truncated, res.TruncatedBy, tc.n, tc.trunc)
		}
	}
}

func TestBadQueries(t *testing.T) { inBothForms(t, testBadQueries) }

func testBadQueries(t *testing.T, build builder) {
	ix := build(t, []Doc{{Path: "a", Data: []byte("a\n")}}, DefaultBuildLimits())
	lim := DefaultSearchLimits()
	for _, tc := range []struct {
		q    Query
		want error
		msg  string
	}{
		{Query{Pattern: "a("}, ErrBadPattern, "missing closing )"},
		{Query{Pattern: `a\nb`}, ErrBadPattern, "line break"},
		{Query{Pattern: "a{1001}"}, ErrBadPattern, "invalid repeat count"},
		{Query{Pattern: "(a{1000}){1000}"}, ErrBadPattern, "invalid repeat count"},
		{Query{Pattern: strings.Repeat("[a-z]{1000}", 6)}, ErrBadPattern, "instructions"},
		{Query{Pattern: strings.Repeat("a", 5000)}, ErrBadPattern, "over the limit"},
		{Query{Pattern: "\xff"}, ErrBadPattern, "UTF-8"},
		{Query{Pattern: "a", MaxMatches: -1}, ErrBadQuery, "maxMatches"},
		{Query{Pattern: "a", MaxMatches: lim.MaxMatches + 1}, ErrBadQuery, "maxMatches"},
		{Query{Pattern: "a", MaxMatchesPerFile: -1}, ErrBadQuery, "maxMatchesPerFile"},
		{Query{Pattern: "a", ContextLines: lim.MaxContextLines + 1}, ErrBadQuery, "contextLines"},
		{Query{Pattern: "a", TallyMask: 1}, ErrBadQuery, "tallyMask without classes"},
	} {
		_, err := ix.Search(context.Background(), tc.q, lim)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%.40q: error %v, want %v saying %q", tc.q.Pattern, err, tc.want, tc.msg)
		}
	}
}

// TestNotIndexed: files past MaxIndexedBytes are stored unindexed, listed,
// and still found by every query.
func TestNotIndexed(t *testing.T) { inBothForms(t, testNotIndexed) }

func testNotIndexed(t *testing.T, build builder) {
	lim := DefaultBuildLimits()
	lim.MaxIndexedBytes = 105
	docs := []Doc{
		{Path: "a.txt", Data: []byte(strings.Repeat("x", 90) + " needle\n")},
		{Path: "b.txt", Data: []byte("needle in the unindexed file\n")},
		{Path: "c.txt", Data: []byte("needle\n")},
	}
	ix := build(t, docs, lim)
	st := ix.Stats()
	if strings.Join(st.NotIndexed, ",") != "b.txt" || st.Coverage >= 1 || st.IndexedBytes != 105 {
		t.Fatalf("stats %+v", st)
	}
	for _, pat := range []string{"needle", `ne+dle\b`, "unindexed"} {
		res, _ := search(t, ix, Query{Pattern: pat})
		want, _ := bruteForce(t, docs, Query{Pattern: pat}, lim.BinarySniffBytes)
		if msg, ok := sameMatches(res.Matches, want); !ok {
			t.Errorf("%q: %s", pat, msg)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	lim := DefaultBuildLimits()
	var buf bytes.Buffer
	if _, err := Build(&buf, []Doc{{Path: "a"}, {Path: "a"}}, lim); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate paths: %v", err)
	}
	small := lim
	small.MaxFiles = 1
	if _, err := Build(&buf, []Doc{{Path: "a"}, {Path: "b"}}, small); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxFiles: %v", err)
	}
	small = lim
	small.MaxIndexBytes = headerSize + 3
	if _, err := Build(&buf, []Doc{{Path: "a", Data: []byte("abcd")}}, small); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxIndexBytes, text: %v", err)
	}
	small.MaxIndexBytes = 2200 // the text fits; the 2 KiB byte counts do not
	if _, err := Build(&buf, []Doc{{Path: "a", Data: []byte("abcd")}}, small); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxIndexBytes, tables: %v", err)
	}
	small = lim
	small.BlockSize = 1
	if _, err := Build(&buf, nil, small); err == nil {
		t.Errorf("BlockSize 1 accepted")
	}
}

// TestEmptyIndex: a version with no files builds, opens and searches.
func TestEmptyIndex(t *testing.T) { inBothForms(t, testEmptyIndex) }

func testEmptyIndex(t *testing.T, build builder) {
	ix := build(t, nil, DefaultBuildLimits())
	res, err := search(t, ix, Query{Pattern: "a"})
	if err != nil || len(res.Matches) != 0 || res.FilesSearched != 0 {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestConcurrentSearchAndClose: searches run in parallel (run with
// -race), on a mapped file and on a stored form whose text they read
// concurrently; Close waits for them and later searches fail with
// ErrClosed.
func TestConcurrentSearchAndClose(t *testing.T) {
	t.Run("file", func(t *testing.T) { testConcurrentSearchAndClose(t, buildFile) })
	t.Run("stored", func(t *testing.T) { testConcurrentSearchAndClose(t, buildStored) })
}

func testConcurrentSearchAndClose(t *testing.T, build builder) {
	docs := genCorpus(4, 20, 0.5)
	ix := build(t, docs, smallBlocks())
	want, _ := bruteForce(t, docs, Query{Pattern: `a\w*b`}, 8000)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := search(t, ix, Query{Pattern: `a\w*b`})
			if err != nil {
				errs <- err.Error()
				return
			}
			if msg, ok := sameMatches(res.Matches, want); !ok {
				errs <- msg
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Search(context.Background(), Query{Pattern: "a"}, DefaultSearchLimits()); !errors.Is(err, ErrClosed) {
		t.Fatalf("search after Close: %v", err)
	}
}

// TestCancel: a cancelled context stops the search with its error.
func TestCancel(t *testing.T) { inBothForms(t, testCancel) }

func testCancel(t *testing.T, build builder) {
	ix := build(t, genCorpus(5, 10, 0), DefaultBuildLimits())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ix.Search(ctx, Query{Pattern: "x*"}, DefaultSearchLimits())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// TestDuplicateBodies guards issue 11 §4: a version of 4,000 files sharing
// one 128 KiB body (1.7 MB as a tarball) made a 517 MiB index and read
// the body 4,000 times. Each body is now read, stored and indexed once,
// and every file holding it still answers.
func TestDuplicateBodies(t *testing.T) {
	body := bytes.Repeat([]byte("const needle = 1; // filler text for the block\n"), 128<<10/48)
	loads := 0
	var docs []Doc
	for i := range 4000 {
		docs = append(docs, Doc{Path: fmt.Sprintf("copies/%04d.js", i), Key: "same",
			Load: func() ([]byte, error) { loads++; return body, nil }})
	}
	docs = append(docs, Doc{Path: "other.js", Data: []byte("needle in another body\n")},
		Doc{Path: "same-bytes.js", Data: []byte("needle in another body\n")})
	var buf bytes.Buffer
	st, err := Build(&buf, docs, DefaultBuildLimits())
	if err != nil {
		t.Fatal(err)
	}
	if loads != 1 {
		t.Errorf("the shared body was loaded %d times, want 1", loads)
	}
	if st.Contents != 2 || st.Files != 4002 || st.TextFiles != 4002 {
		t.Errorf("stats %+v: want 2 contents of 4002 text files", st)
	}
	if max := int64(2 * len(body)); st.IndexBytes > max {
		t.Errorf("index is %d bytes, want at most twice the one body (%d)", st.IndexBytes, max)
	}
	ix, err := OpenBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	lim := roomyLimits()
	lim.MaxMatches = 1 << 30
	res, err := ix.Search(t.Context(), Query{Pattern: "needle", MaxMatchesPerFile: 2, MaxMatches: 100_000}, lim)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 4000*2+2 || res.FilesSearched != 4002 {
		t.Fatalf("%d matches in %d files, want %d in 4002", len(res.Matches), res.FilesSearched, 4000*2+2)
	}
	if m := res.Matches[len(res.Matches)-1]; m.File != "same-bytes.js" || m.Line != 1 {
		t.Errorf("last match %+v, want same-bytes.js:1", m)
	}
	if m := res.Matches[2*1234+1]; m.File != "copies/1234.js" || m.Line != 2 {
		t.Errorf("match %+v, want copies/1234.js:2", m)
	}
}
