package diff

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pkgscope/pkgscope/internal/store"
)

// npmNodePath is npm's own node_modules (libnpmdiff, jsdiff), for NODE_PATH.
func npmNodePath(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("npm", "root", "-g").Output()
	if err != nil {
		t.Fatalf("npm root -g: %v (these tests compare against the installed npm; install Node.js and npm)", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "npm", "node_modules")
}

type jsFile struct {
	Path string `json:"path"`
	Body string `json:"body"` // base64
	Mode string `json:"mode"`
}

type jsCase struct {
	A    []jsFile       `json:"a"`
	B    []jsFile       `json:"b"`
	Opts map[string]any `json:"opts"`
}

// goCase is a jsCase on the Go side.
type goCase struct {
	old, new []store.File
	bodies   map[store.Hash][]byte
	opts     Options
}

// render runs Changes and Render over a case and returns format-diff's
// result (trimmed, without npm's final newline).
func (c goCase) render() string {
	var b strings.Builder
	for _, ch := range Changes(c.old, c.new, nil) {
		var ob, nb []byte
		if ch.Old != nil {
			ob = c.bodies[ch.Old.Hash]
		}
		if ch.New != nil {
			nb = c.bodies[ch.New.Hash]
		}
		b.WriteString(Render(ch, ob, nb, "1.0.0", "1.0.1", c.opts).Text)
	}
	return jsTrim(b.String())
}

var (
	fuzzLines = []string{"a", "b", "c", "a", "b", " a", "a ", "", "\t", "x\t", "  ", "\xff", "\xe2\x82", "é", "d\r"}
	fuzzPaths = []string{"index.js", "lib/a.js", "img.png", "README.md", ".DS_Store", "lib/b.d.ts"}
)

func randomBody(r *rand.Rand) []byte {
	n := r.IntN(12)
	sep := "\n"
	if r.IntN(4) == 0 {
		sep = "\r\n"
	}
	var b bytes.Buffer
	for i := range n {
		b.WriteString(fuzzLines[r.IntN(len(fuzzLines))])
		if i < n-1 || r.IntN(3) > 0 {
			b.WriteString(sep)
		}
	}
	return b.Bytes()
}

// mutate derives a new body from an old one, so that most pairs share lines.
func mutate(r *rand.Rand, body []byte) []byte {
	lines := strings.SplitAfter(string(body), "\n")
	for range r.IntN(4) {
		i := r.IntN(len(lines) + 1)
		switch r.IntN(3) {
		case 0:
			lines = append(lines[:i], append([]string{fuzzLines[r.IntN(len(fuzzLines))] + "\n"}, lines[i:]...)...)
		case 1:
			if i < len(lines) {
				lines = append(lines[:i], lines[i+1:]...)
			}
		default:
			if i < len(lines) {
				lines[i] = fuzzLines[r.IntN(len(fuzzLines))] + "\n"
			}
		}
	}
	out := strings.Join(lines, "")
	if r.IntN(5) == 0 {
		out = strings.TrimSuffix(out, "\n")
	}
	return []byte(out)
}

func randomCase(r *rand.Rand) (jsCase, goCase) {
	gc := goCase{bodies: map[store.Hash][]byte{}}
	jc := jsCase{A: []jsFile{}, B: []jsFile{}}
	add := func(files *[]store.File, js *[]jsFile, p string, body []byte, perm uint32) {
		h := store.HashOf(body)
		gc.bodies[h] = body
		*files = append(*files, store.File{Path: p, Hash: h, Size: int64(len(body)), Mode: store.ModeRegular | perm, Order: len(*files)})
		*js = append(*js, jsFile{Path: p, Body: base64.StdEncoding.EncodeToString(body), Mode: modeString(store.ModeRegular | perm)})
	}
	perms := []uint32{0o644, 0o644, 0o644, 0o755}
	for _, i := range r.Perm(len(fuzzPaths)) {
		p := fuzzPaths[i]
		old := randomBody(r)
		switch r.IntN(5) {
		case 0: // deleted
			add(&gc.old, &jc.A, p, old, perms[r.IntN(4)])
		case 1: // added
			add(&gc.new, &jc.B, p, old, perms[r.IntN(4)])
		case 2: // unchanged or mode-only
			add(&gc.old, &jc.A, p, old, perms[r.IntN(4)])
			add(&gc.new, &jc.B, p, old, perms[r.IntN(4)])
		default:
			perm := perms[r.IntN(4)]
			add(&gc.old, &jc.A, p, old, perm)
			add(&gc.new, &jc.B, p, mutate(r, old), perm)
		}
	}
	// The store hands lists over in byte order; Order keeps tarball order.
	for _, fs := range []*[]store.File{&gc.old, &gc.new} {
		slicesSortByPath(*fs)
	}
	gc.opts = Options{Context: r.IntN(5), IgnoreAllSpace: r.IntN(4) == 0, NameOnly: r.IntN(8) == 0}
	jc.Opts = map[string]any{"diffUnified": gc.opts.Context, "diffIgnoreAllSpace": gc.opts.IgnoreAllSpace, "diffNameOnly": gc.opts.NameOnly}
	switch r.IntN(5) {
	case 0:
		gc.opts.NoPrefix = true
		jc.Opts["diffNoPrefix"] = true
	case 1:
		gc.opts.SrcPrefix, gc.opts.DstPrefix = "x/", "y/"
		jc.Opts["diffSrcPrefix"], jc.Opts["diffDstPrefix"] = "x/", "y/"
	}
	return jc, gc
}

func slicesSortByPath(fs []store.File) {
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j-1].Path > fs[j].Path; j-- {
			fs[j-1], fs[j] = fs[j], fs[j-1]
		}
	}
}

// runFormatDiff asks the installed libnpmdiff to format the cases.
func runFormatDiff(t *testing.T, cases []jsCase) []string {
	t.Helper()
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "testdata/formatdiff.js")
	cmd.Env = append(cmd.Environ(), "NODE_PATH="+npmNodePath(t))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node formatdiff.js: %v\n%s", err, stderr.String())
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestRenderMatchesLibnpmdiff compares Changes+Render with libnpmdiff's
// format-diff on random pairs built to hit jsdiff's corners: repeated
// lines, CRLF, lines differing only in spaces or a trailing tab, missing
// final newlines, invalid UTF-8, mode changes, binary extensions.
func TestRenderMatchesLibnpmdiff(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(14, 1))
	const n = 600
	var jcs []jsCase
	var gcs []goCase
	for range n {
		jc, gc := randomCase(r)
		jcs, gcs = append(jcs, jc), append(gcs, gc)
	}
	want := runFormatDiff(t, jcs)
	hunks := 0
	for _, w := range want {
		if strings.Contains(w, "\n@@ ") {
			hunks++
		}
	}
	if hunks < n/2 {
		t.Fatalf("only %d of %d cases have hunks: the generator no longer exercises the line diff", hunks, n)
	}
	failures := 0
	for i := range gcs {
		if got := gcs[i].render(); got != want[i] {
			in, _ := json.Marshal(jcs[i])
			t.Errorf("case %d (%s):\ngot:\n%s\nwant (libnpmdiff):\n%s", i, in, got, want[i])
			if failures++; failures > 3 {
				t.FailNow()
			}
		}
	}
}

// FuzzDecodeUTF8: the result is valid UTF-8, equals the input when that
// is valid, and is never shorter than the input's valid prefix.
func FuzzDecodeUTF8(f *testing.F) {
	for _, s := range []string{"abc", "\xff", "\xe2\x82", "\xe2\x82a", "\xed\xa0\x80", "\xf4\x90\x80\x80", "é\xc3"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := decodeUTF8(b)
		if !utf8.ValidString(s) {
			t.Fatalf("decodeUTF8(%q) = %q: not valid UTF-8", b, s)
		}
		if utf8.Valid(b) && s != string(b) {
			t.Fatalf("decodeUTF8(%q) = %q: changed valid input", b, s)
		}
	})
}

// FuzzDiffLines: the runs of any two texts rebuild both texts (kept and
// removed lines give the old one; kept and added lines the new one).
func FuzzDiffLines(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd", false)
	f.Add("x\r\ny", " x\r\ny\n", true)
	f.Fuzz(func(t *testing.T, a, b string, ws bool) {
		oldT, newT := tokenizeLines(a), tokenizeLines(b)
		runs, _, err := diffLines(oldT, newT, ws, DefaultMaxWork)
		if err != nil {
			t.Fatal(err)
		}
		var gotOld, gotNew int
		for _, r := range runs {
			if !r.added {
				gotOld += len(r.lines)
			}
			if !r.removed {
				gotNew += len(r.lines)
			}
		}
		if gotOld != len(oldT) || gotNew != len(newT) {
			t.Fatalf("runs cover %d old and %d new lines, want %d and %d", gotOld, gotNew, len(oldT), len(newT))
		}
		if !ws {
			var ob, nb strings.Builder
			for _, r := range runs {
				for _, l := range r.lines {
					if !r.added {
						ob.WriteString(l)
					}
					if !r.removed {
						nb.WriteString(l)
					}
				}
			}
			if ob.String() != a || nb.String() != b {
				t.Fatalf("runs rebuild %q and %q, want %q and %q", ob.String(), nb.String(), a, b)
			}
		}
	})
}
