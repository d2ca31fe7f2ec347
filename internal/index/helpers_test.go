package index

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/race"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// buildBytes builds an index of docs in memory and opens it.
func buildBytes(t testing.TB, docs []Doc, lim BuildLimits) *Index {
	t.Helper()
	var buf bytes.Buffer
	st, err := Build(&buf, docs, lim)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if st.IndexBytes != int64(buf.Len()) {
		t.Fatalf("Stats.IndexBytes = %d, wrote %d", st.IndexBytes, buf.Len())
	}
	ix, err := OpenBytes(buf.Bytes())
	if err != nil {
		t.Fatalf("OpenBytes: %v", err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// buildStored builds an index of docs and opens it from its stored form
// (OpenStored) over the docs' bodies, held in memory.
func buildStored(t testing.TB, docs []Doc, lim BuildLimits) *Index {
	t.Helper()
	_, stored, _ := openBoth(t, docs, lim)
	return stored
}

// builder builds an index of docs and opens it: buildBytes and buildFile
// from the full file, buildStored from its stored form.
type builder func(t testing.TB, docs []Doc, lim BuildLimits) *Index

// inBothForms runs test on indexes opened from the full file and on
// indexes opened from their stored form: a node serves either, and
// every assertion must hold for both.
func inBothForms(t *testing.T, test func(*testing.T, builder)) {
	t.Run("full", func(t *testing.T) { test(t, buildBytes) })
	t.Run("stored", func(t *testing.T) { test(t, buildStored) })
}

// inBothFormsUnlessRace is inBothForms for a test that runs for minutes
// under -race: there it runs on the full file only. A search runs in one
// goroutine, so the race detector finds nothing more in the stored form's
// (TestConcurrentSearchAndClose and TestOpenStoredCloseWaitsForReads race
// it), and the package's -race run stays under go test's 10-minute
// default (671 s at load 9 with every test in both forms).
func inBothFormsUnlessRace(t *testing.T, test func(*testing.T, builder)) {
	if !race.Enabled {
		inBothForms(t, test)
		return
	}
	t.Run("full", func(t *testing.T) { test(t, buildBytes) })
}

// buildFile builds an index of docs on disk with BuildFile and opens it
// with Open (the mmap path).
func buildFile(t testing.TB, docs []Doc, lim BuildLimits) *Index {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.idx")
	if _, err := BuildFile(path, docs, lim); err != nil {
		t.Fatalf("BuildFile: %v", err)
	}
	ix, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// roomyLimits returns search limits that never truncate a test corpus and
// return whole lines, so results compare with a brute-force scan.
func roomyLimits() SearchLimits {
	l := DefaultSearchLimits()
	l.MaxLineWindow = 1 << 30
	l.MaxOutputBytes = 1 << 30
	if race.Enabled {
		l.Timeout = raceTimeout
	}
	return l
}

// raceTimeout replaces the search timeout where a search must finish:
// under -race a regexp over a line of tens of MB runs 20-50 times slower
// than the 0.2-0.5 s it takes in a normal build, past the default 10 s.
const raceTimeout = 5 * time.Minute

// smallBlocks are build limits that cut lines into many blocks, so that
// tests cross block and group boundaries everywhere.
func smallBlocks() BuildLimits {
	l := DefaultBuildLimits()
	l.BlockSize = 64
	l.Overlap = 16
	return l
}

// bruteForce is the reference grep: split each text file into lines and
// run Go's regexp on every line alone.
func bruteForce(t testing.TB, docs []Doc, q Query, sniff int) ([]Match, error) {
	t.Helper()
	pat := q.Pattern
	if q.FixedStrings {
		pat = regexp.QuoteMeta(pat)
	}
	if q.CaseInsensitive {
		pat = "(?i:" + pat + ")"
	}
	col := 0
	if q.WholeWord {
		pat = `(?:^|[^0-9A-Za-z_])(` + pat + `)(?:[^0-9A-Za-z_]|$)`
		col = 1
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, err
	}
	sorted := slices.Clone(docs)
	slices.SortFunc(sorted, func(a, b Doc) int { return strings.Compare(a.Path, b.Path) })
	var out []Match
	for _, d := range sorted {
		if isBinary(d.Data, sniff) {
			continue
		}
		text := bytes.TrimPrefix(d.Data, utf8BOM)
		if len(text) == 0 {
			continue
		}
		lines := bytes.Split(text, []byte("\n"))
		if text[len(text)-1] == '\n' {
			lines = lines[:len(lines)-1]
		}
		for i, ln := range lines {
			if loc := re.FindSubmatchIndex(ln); loc != nil {
				out = append(out, Match{File: d.Path, Line: i + 1, Column: loc[2*col] + 1, Text: string(ln), LineBytes: len(ln)})
			}
		}
	}
	return out, nil
}

// search runs q with roomy limits and fails on internal errors.
func search(t testing.TB, ix *Index, q Query) (Result, error) {
	t.Helper()
	if q.MaxMatches == 0 {
		q.MaxMatches = roomyLimits().MaxMatches
	}
	res, err := ix.Search(context.Background(), q, roomyLimits())
	if err != nil && !errors.Is(err, ErrBadPattern) && !errors.Is(err, ErrBadQuery) {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return res, err
}

// sameMatches compares matches on file, line, column and text.
func sameMatches(got, want []Match) (string, bool) {
	for i := 0; i < len(got) || i < len(want); i++ {
		if i >= len(got) {
			return "missing " + show(want[i]), false
		}
		if i >= len(want) {
			return "extra " + show(got[i]), false
		}
		g, w := got[i], want[i]
		if g.File != w.File || g.Line != w.Line || g.Column != w.Column || g.Text != w.Text || g.LineBytes != w.LineBytes {
			return "got " + show(g) + ", want " + show(w), false
		}
	}
	return "", true
}

func show(m Match) string {
	t := m.Text
	if len(t) > 60 {
		t = t[:60] + "..."
	}
	return strings.Join([]string{m.File, strconv.Itoa(m.Line), strconv.Itoa(m.Column), strconv.Quote(t)}, ":")
}

func itoa(i int) string { return strconv.Itoa(i) }
