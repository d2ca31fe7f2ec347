package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLongLineShowsAWindowPerMatch: a long line's later matches get a
// window each, up to MaxWindowsPerLine in all; a match inside the window
// before gets none, and those past the last window are counted, the
// first's column given so that read can go there.
func TestLongLineShowsAWindowPerMatch(t *testing.T) { inBothForms(t, testLongLineShowsAWindowPerMatch) }

func testLongLineShowsAWindowPerMatch(t *testing.T, build builder) {
	line := []byte(strings.Repeat("x", 20_000))
	at := []int{1000, 1010, 5000, 9000, 12000, 15000, 18000}
	for _, p := range at {
		copy(line[p:], "useState")
	}
	ix := build(t, []Doc{{Path: "bundle.js", Data: append(line, '\n')}}, DefaultBuildLimits())
	lim := DefaultSearchLimits()
	lim.MaxWindowsPerLine = 3
	res, err := ix.Search(context.Background(), Query{Pattern: "useState"}, lim)
	if err != nil || len(res.Matches) != 1 {
		t.Fatalf("Search = %+v, %v; want one matching line", res, err)
	}
	m := res.Matches[0]
	var cols []int
	for _, w := range m.Windows {
		cols = append(cols, w.Column)
		if got := line[w.Column-1 : w.Column-1+8]; string(got) != "useState" || !strings.Contains(w.Text, "useState") ||
			w.Text != string(line[w.TextOffset:w.TextOffset+len(w.Text)]) {
			t.Errorf("window %+v does not show the match at its column", w)
		}
	}
	// 1010 lies in the first window (around 1000): no window of its own.
	if m.Column != 1001 || fmt.Sprint(cols) != "[5001 9001]" {
		t.Errorf("columns %d then %v; want 1001 then [5001 9001]", m.Column, cols)
	}
	if m.MoreInLine != 3 || m.MoreColumn != 12001 || m.MoreInLineCapped {
		t.Errorf("more = %d from %d (capped %v); want 3 from 12001", m.MoreInLine, m.MoreColumn, m.MoreInLineCapped)
	}

	lim.MaxLineMatchesCounted = 2
	res, _ = ix.Search(context.Background(), Query{Pattern: "useState"}, lim)
	if m := res.Matches[0]; m.MoreInLine != 2 || !m.MoreInLineCapped {
		t.Errorf("capped count: more = %d, capped %v; want 2, capped", m.MoreInLine, m.MoreInLineCapped)
	}

	// A short line stays one line, as grep -n prints it.
	ix = build(t, []Doc{{Path: "a.js", Data: []byte("useState(useState(useState))\n")}}, DefaultBuildLimits())
	res, _ = ix.Search(context.Background(), Query{Pattern: "useState"}, lim)
	if m := res.Matches[0]; len(m.Windows) != 0 || m.MoreInLine != 0 {
		t.Errorf("short line: %+v; want one plain match", m)
	}
}

// TestLineWindowsFollowFindAll: over random long lines and patterns with
// context (^, \b, classes, repeats), the windows' columns are matches Go's
// FindAll finds in the whole line, and every match it finds is a window's
// or lies inside the window before; past the last window, the count is
// that of FindAll's matches not shown.
func TestLineWindowsFollowFindAll(t *testing.T) { inBothForms(t, testLineWindowsFollowFindAll) }

func testLineWindowsFollowFindAll(t *testing.T, build builder) {
	rng := rand.New(rand.NewPCG(7, 9))
	words := []string{"foo", "fooBar", "a", "aa", " ", "_", "12", "é", "\t", "ab", "^", "."}
	var lines []string
	for range 20 {
		var b strings.Builder
		for b.Len() < 3000 {
			b.WriteString(words[rng.IntN(len(words))])
		}
		lines = append(lines, b.String())
	}
	var docs []Doc
	for i, l := range lines {
		docs = append(docs, Doc{Path: fmt.Sprintf("f%02d.js", i), Data: []byte(l + "\n")})
	}
	ix := build(t, docs, smallBlocks())
	for _, pat := range []string{`foo`, `\bfoo\w*`, `^fo+`, `a+`, `[0-9]{2}`, `(?i)FOOB`, `é\s`, `\Bo`, `a|aa`, `o\b`} {
		re := regexp.MustCompile(pat)
		for _, windows := range []int{1, 1000} {
			lim := DefaultSearchLimits()
			lim.MaxLineWindow, lim.MaxWindowsPerLine, lim.MaxLineMatchesCounted = 16, windows, 1<<20
			res, err := ix.Search(context.Background(), Query{Pattern: pat, MaxMatches: 1000}, lim)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range res.Matches {
				var i int
				fmt.Sscanf(m.File, "f%02d.js", &i)
				line := lines[i]
				all := re.FindAllStringIndex(line, -1)
				shown := map[int]bool{m.Column: true}
				for _, w := range m.Windows {
					shown[w.Column] = true
				}
				end := m.TextOffset + len(m.Text) // the end of the window before
				wi, more := 0, 0
				for _, loc := range all[1:] {
					switch {
					case loc[1] <= end:
					case wi < len(m.Windows) && m.Windows[wi].Column == loc[0]+1:
						w := m.Windows[wi]
						end, wi = w.TextOffset+len(w.Text), wi+1
						delete(shown, loc[0]+1)
					case wi == len(m.Windows) && windows == 1:
						more++
					default:
						t.Fatalf("%s in %s: the match at %d has no window (windows %+v)", pat, m.File, loc[0]+1, m.Windows)
					}
				}
				delete(shown, m.Column)
				if all[0][0]+1 != m.Column || len(shown) > 0 {
					t.Errorf("%s in %s: windows at %v are not matches", pat, m.File, shown)
				}
				if windows == 1 && more != m.MoreInLine {
					t.Errorf("%s in %s: %d more, FindAll finds %d", pat, m.File, m.MoreInLine, more)
				}
			}
		}
	}
}

// TestWindowAtTheLineWidth: lines of the window's width, one byte under
// and just over it (a 522-byte line of a 512-byte window shows bytes
// 11-522: 512 of them), with the match anywhere and characters of two
// bytes: a line that fits is whole; a longer one shows exactly the
// window's width or less (a character is never split), bytes of the line
// at TextOffset, the match inside it.
func TestWindowAtTheLineWidth(t *testing.T) { inBothForms(t, testWindowAtTheLineWidth) }

func testWindowAtTheLineWidth(t *testing.T, build builder) {
	lim := DefaultSearchLimits()
	w := lim.MaxLineWindow
	for _, n := range []int{w - 1, w, w + 1, w + 2, w + 10, 2 * w, 2*w + 1} {
		for _, odd := range []bool{false, true} {
			for _, at := range []int{0, 1, w/3 - 1, w / 3, w/3 + 1, n / 2, n - 9, n - 8} {
				// k bytes of two-byte characters, from an odd byte with odd.
				fill := func(k int, odd bool) string {
					if odd && k > 0 {
						return "x" + strings.Repeat("é", (k-1)/2) + strings.Repeat("x", (k-1)%2)
					}
					return strings.Repeat("é", k/2) + strings.Repeat("x", k%2)
				}
				line := []byte(fill(at, odd) + "useState" + fill(n-at-8, !odd))
				ix := build(t, []Doc{{Path: "a.js", Data: append(line, '\n')}}, DefaultBuildLimits())
				res, err := ix.Search(context.Background(), Query{Pattern: "useState"}, lim)
				if err != nil || len(res.Matches) != 1 {
					t.Fatalf("n=%d at=%d: %+v, %v", n, at, res.Matches, err)
				}
				m := res.Matches[0]
				end := m.TextOffset + len(m.Text)
				switch {
				case m.LineBytes != n || m.Column != at+1:
					t.Errorf("n=%d at=%d: line %d bytes, column %d", n, at, m.LineBytes, m.Column)
				case n <= w && (m.TextOffset != 0 || m.Text != string(line)):
					t.Errorf("n=%d at=%d: a line that fits is not whole (bytes %d-%d)", n, at, m.TextOffset+1, end)
				case len(m.Text) > w || len(m.Text) < w-2*(utf8.UTFMax-1) || end > n || m.Text != string(line[m.TextOffset:end]):
					t.Errorf("n=%d at=%d: window bytes %d-%d (%d bytes) of %d", n, at, m.TextOffset+1, end, len(m.Text), n)
				case m.TextOffset > at || end < at+len("useState"):
					t.Errorf("n=%d at=%d: window bytes %d-%d misses the match", n, at, m.TextOffset+1, end)
				case !utf8.ValidString(m.Text):
					t.Errorf("n=%d at=%d: window splits a character", n, at)
				}
			}
		}
	}
}

// TestFromColumnContinuesALine: a search that starts each long line at
// the MoreColumn of the one before gives, call after call, every match
// FindAll finds past the first window, each once (as a window's match or
// inside a window), and the last call counts none left; a column past a
// line's last match returns nothing for it.
func TestFromColumnContinuesALine(t *testing.T) { inBothForms(t, testFromColumnContinuesALine) }

func testFromColumnContinuesALine(t *testing.T, build builder) {
	rng := rand.New(rand.NewPCG(3, 5))
	words := []string{"foo", "fooBar", "a", " ", "é", "ab", "."}
	var b strings.Builder
	for b.Len() < 5000 {
		b.WriteString(words[rng.IntN(len(words))])
	}
	line := b.String()
	ix := build(t, []Doc{{Path: "a.js", Data: []byte("short foo\n" + line + "\n")}}, smallBlocks())
	for _, pat := range []string{`foo`, `\bfoo\w*`, `a+`, `é\s`, `o\b`} {
		all := regexp.MustCompile(pat).FindAllStringIndex(line, -1)
		lim := DefaultSearchLimits()
		lim.MaxLineWindow, lim.MaxWindowsPerLine = 16, 2
		var seen []int // the columns given or shown, in order
		col, calls := 1, 0
		for ; calls < 10_000; calls++ {
			q := Query{Pattern: pat, MaxMatches: 10, Skip: func(_ string, l, _ int) bool { return l != 2 },
				FromColumn: func(_ string, l int) int { return col }}
			res, err := ix.Search(context.Background(), q, lim)
			if err != nil || len(res.Matches) != 1 {
				t.Fatalf("%s from %d: %+v, %v; want one match", pat, col, res.Matches, err)
			}
			m := res.Matches[0]
			windows := append([]Window{{Column: m.Column, Text: m.Text, TextOffset: m.TextOffset}}, m.Windows...)
			for i, w := range windows {
				end := len(line)
				if i+1 < len(windows) {
					end = windows[i+1].Column - 1
				} else if m.MoreInLine > 0 {
					end = m.MoreColumn - 1
				}
				for _, loc := range all {
					if loc[0] >= w.Column-1 && loc[0] < end && (loc[0] == w.Column-1 || loc[1] <= w.TextOffset+len(w.Text)) {
						seen = append(seen, loc[0]+1)
					}
				}
			}
			if m.MoreInLine == 0 {
				break
			}
			col = m.MoreColumn
		}
		var want []int
		for _, loc := range all {
			want = append(want, loc[0]+1)
		}
		if fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Errorf("%s: %d calls gave or showed %d matches, FindAll finds %d:\n%v\n%v", pat, calls+1, len(seen), len(want), seen, want)
		}
		q := Query{Pattern: pat, FromColumn: func(_ string, l int) int { return (l - 1) * (all[len(all)-1][0] + 2) }}
		res, err := ix.Search(context.Background(), q, lim)
		if err != nil || len(res.Matches) > 1 || len(res.Matches) == 1 && res.Matches[0].Line != 1 {
			t.Errorf("%s past the last match: %+v, %v; want no match in line 2", pat, res.Matches, err)
		}
	}
}

// TestWholeWordWindowsSeeTheSpaceBetween: -w matches next to each other
// ("foo foo") each get a window, though the word before took the space.
func TestWholeWordWindowsSeeTheSpaceBetween(t *testing.T) {
	inBothForms(t, testWholeWordWindowsSeeTheSpaceBetween)
}

func testWholeWordWindowsSeeTheSpaceBetween(t *testing.T, build builder) {
	line := strings.Repeat("x", 1000) + " foo foo" + strings.Repeat("y", 1000) + " foo"
	ix := build(t, []Doc{{Path: "a.js", Data: []byte(line)}}, DefaultBuildLimits())
	lim := DefaultSearchLimits()
	lim.MaxLineWindow = 16
	res, err := ix.Search(context.Background(), Query{Pattern: "foo", WholeWord: true}, lim)
	if err != nil || len(res.Matches) != 1 {
		t.Fatalf("Search = %+v, %v", res, err)
	}
	m := res.Matches[0]
	var cols []int
	for _, w := range m.Windows {
		cols = append(cols, w.Column)
	}
	// 1006 lies in the first window (1002..1017); 2010 gets one.
	if m.Column != 1002 || fmt.Sprint(cols) != "[2010]" || m.MoreInLine != 0 {
		t.Errorf("columns %d, %v, more %d; want 1002, [2010], 0", m.Column, cols, m.MoreInLine)
	}
}

// TestTallyCountsAFileInOneMatch: a file Tally picks gives one match with
// its number of matching lines, however many it has, with no per-file
// cap, while the other files are listed line by line.
func TestTallyCountsAFileInOneMatch(t *testing.T) { inBothForms(t, testTallyCountsAFileInOneMatch) }

func testTallyCountsAFileInOneMatch(t *testing.T, build builder) {
	body := []byte("hit\nno\nhit hit\nhit\n")
	ix := build(t, []Doc{{Path: "a.d.ts", Data: body}, {Path: "b.d.cts", Data: body}}, DefaultBuildLimits())
	q := Query{Pattern: "hit", MaxMatchesPerFile: 1, Tally: func(p string) bool { return p == "b.d.cts" },
		Skip: func(p string, line, n int) bool { return p == "b.d.cts" }}
	res, err := ix.Search(context.Background(), q, DefaultSearchLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 2 || res.Matches[0].File != "a.d.ts" || res.Matches[0].Count != 0 ||
		res.Matches[1].File != "b.d.cts" || res.Matches[1].Count != 3 || res.Matches[1].Line != 0 {
		t.Errorf("matches %+v; want a.d.ts:1, then b.d.cts counted (3 lines)", res.Matches)
	}
}

// TestMoreInLineCountsEveryHitOfARareLiteral: a literal that a long line
// holds a few times among filler, each hit anywhere (across the 64-byte
// blocks' edges too), alone or inside a pattern: the line's matches after
// its window are found from the blocks that can hold the literal, and
// they are every match FindAll finds that the window does not show;
// FromColumn starts at each (or a byte before it).
func TestMoreInLineCountsEveryHitOfARareLiteral(t *testing.T) {
	inBothForms(t, testMoreInLineCountsEveryHitOfARareLiteral)
}

func testMoreInLineCountsEveryHitOfARareLiteral(t *testing.T, build builder) {
	rng := rand.New(rand.NewPCG(3, 5))
	const lit = "useRouter"
	var lines []string
	for range 30 {
		b := []byte(strings.Repeat("abcdefg hij.", 1000)) // 12,000 bytes holding none of the literal's trigrams
		for range 1 + rng.IntN(12) {
			at := rng.IntN(len(b) - len(lit))
			copy(b[at:], lit)
		}
		lines = append(lines, string(b))
	}
	var docs []Doc
	for i, l := range lines {
		docs = append(docs, Doc{Path: fmt.Sprintf("f%02d.js", i), Data: []byte(l + "\n")})
	}
	ix := build(t, docs, smallBlocks())
	lim := DefaultSearchLimits()
	lim.MaxLineWindow, lim.MaxWindowsPerLine, lim.MaxLineMatchesCounted = 16, 1, 1<<20
	// more is how many of all[from:] the window [0, shown) does not show.
	more := func(all [][]int, from, shown int) int {
		n := 0
		for _, loc := range all[from:] {
			if loc[1] > shown {
				n++
			}
		}
		return n
	}
	for _, pat := range []string{lit, `\w+Router`, `use\w*`, `\buseR\w+`, `[a-z]eRouter\b`} {
		re := regexp.MustCompile(pat)
		res, err := ix.Search(context.Background(), Query{Pattern: pat, MaxMatches: 1000}, lim)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, l := range lines {
			if re.MatchString(l) {
				want++
			}
		}
		if len(res.Matches) != want {
			t.Fatalf("%s: %d matching lines, want %d", pat, len(res.Matches), want)
		}
		for _, m := range res.Matches {
			var i int
			fmt.Sscanf(m.File, "f%02d.js", &i)
			all := re.FindAllStringIndex(lines[i], -1)
			if m.Column != all[0][0]+1 || m.MoreInLine != more(all, 1, m.TextOffset+len(m.Text)) {
				t.Errorf("%s in %s: first at %d, %d more; want %d, %d", pat, m.File, m.Column, m.MoreInLine, all[0][0]+1, more(all, 1, m.TextOffset+len(m.Text)))
			}
			for k, loc := range all {
				col := loc[0] + 1 - k%2 // at the match, or a byte before it
				if k%2 == 1 && all[k-1][1] > loc[0]-1 {
					col = loc[0] + 1 // the byte before ends the match before
				}
				r, err := ix.Search(context.Background(), Query{Pattern: pat, MaxMatches: 1,
					Filter: func(p string) bool { return p == m.File }, FromColumn: func(string, int) int { return col }}, lim)
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Matches) != 1 || r.Matches[0].Column != loc[0]+1 {
					t.Errorf("%s in %s from %d: %+v; want the match at %d", pat, m.File, col, r.Matches, loc[0]+1)
					continue
				}
				if got, w := r.Matches[0].MoreInLine, more(all, k+1, r.Matches[0].TextOffset+len(r.Matches[0].Text)); got != w {
					t.Errorf("%s in %s from %d: %d more, want %d", pat, m.File, col, got, w)
				}
			}
		}
	}
}

// FuzzLineWindows holds a long line's first match and the count of its
// matches past the window (Match.MoreInLine) to Go's FindAll over the line,
// for any pattern and line. A line where FindAll finds an empty match is
// left out: after one, lineWindows looks again a byte on, FindAll a
// character on. It walks the
// ways a line's later matches are found: a literal's candidate blocks
// (nextHit), the alphabet runs around a literal (nextInRuns) or long
// enough for a match (nextInAlphaRuns), and the regexp over the line.
func FuzzLineWindows(f *testing.F) {
	f.Add("useRouter", "abc useRouter def;useRouter(x)//useRouterX useRouter")
	f.Add(`function\s+\w+Sync`, "function readSync(){} function  aSyncX(){}; functionSync function statSync")
	f.Add(`[A-Z]{5}_[A-Z]{5}`, "ABCDE_FGHIJ abcde_fghij XABCDE_FGHIJK ABCDE_FGHI")
	f.Add(`(?i)userouter`, "UseRouter userouter USEROUTER use_router")
	f.Add(`\bfoo\w*`, "foo foobar xfoo foo_1 é foo")
	f.Fuzz(func(t *testing.T, pattern, unit string) {
		if len(pattern) > 40 || unit == "" || len(unit) > 200 {
			return
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		unit = strings.NewReplacer("\n", " ", "\r", " ", "\x00", " ").Replace(unit)
		line := strings.Repeat(unit, 3000/len(unit)+1) // a long line, many blocks of smallBlocks
		all := re.FindAllStringIndex(line, -1)
		for _, loc := range all {
			if loc[0] == loc[1] {
				return
			}
		}
		ix := buildBytes(t, []Doc{{Path: "a.js", Data: []byte(line + "\n")}}, smallBlocks())
		lim := DefaultSearchLimits()
		lim.MaxLineWindow, lim.MaxWindowsPerLine, lim.MaxLineMatchesCounted = 16, 1, 1<<20
		res, err := ix.Search(context.Background(), Query{Pattern: pattern, MaxMatches: 10}, lim)
		if errors.Is(err, ErrBadPattern) {
			return // a pattern Search does not take (\n, too large)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Matches) != min(len(all), 1) {
			t.Fatalf("%q: %d matching lines, FindAll finds %d matches", pattern, len(res.Matches), len(all))
		}
		if len(all) == 0 {
			return
		}
		m := res.Matches[0]
		end, more := m.TextOffset+len(m.Text), 0
		for _, loc := range all[1:] {
			if loc[1] > end {
				more++
			}
		}
		if m.Column != all[0][0]+1 || m.MoreInLine != more {
			t.Fatalf("%q over %q…: first at %d, %d more; FindAll: %d, %d", pattern, line[:min(len(line), 60)], m.Column, m.MoreInLine, all[0][0]+1, more)
		}
	})
}
