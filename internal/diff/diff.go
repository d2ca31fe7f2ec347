// Package diff computes what changed between two stored versions of a
// package and prints it byte for byte as `npm diff` (libnpmdiff 8 with
// jsdiff 8, npm 11) does: files in tarball order (the old version's, then
// files only in the new one), git-style headers with "index vA..vB mode"
// lines, "new file mode" / "deleted file mode" / "old mode" + "new mode",
// hunks from jsdiff's line diff, "--- / +++" headers alone for files whose
// extension npm deems binary, and the whole text trimmed and ended with
// one newline as npm's console output.
//
// Unchanged files are found from the store's sha256 and mode, without
// reading their bodies: on next 16.4.5 → 16.4.6, 143 of about 8,700 files
// are read. Bodies of changed files are decoded as Node decodes them
// (WHATWG UTF-8, one U+FFFD per ill-formed subsequence) before they are
// compared and diffed, so two bodies that differ only in invalid bytes
// which decode alike are unchanged for npm and here.
//
// Known differences from npm, all outside what npm pack produces: a tar
// mode of 0 prints as 100644 (the store keeps 0 for "unknown", as for
// versions stored before modes were kept); "contiguous file" entries,
// which npm diff skips, are diffed; and a file whose line diff passes
// Options.MaxWork is shown without hunks (FileDiff.TooComplex).
package diff

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/pkgscope/pkgscope/internal/store"
)

// Status is how a path changed.
type Status string

// Statuses of a changed path.
const (
	Added    Status = "added"
	Deleted  Status = "deleted"
	Modified Status = "modified"
)

// Change is a path whose body hash or mode differs between the versions.
type Change struct {
	Path   string
	Status Status
	// Old and New are the path's file in each version; nil when absent.
	Old, New *store.File
}

// Changes lists the paths of old and new (each sorted by path, as the
// store returns them) whose hash or mode differs, in npm diff's order:
// old's files in tarball order, then those only in new in its tarball
// order. keep selects paths (nil keeps all). No body is read.
func Changes(old, new []store.File, keep func(path string) bool) []Change {
	inOld := make(map[string]*store.File, len(old))
	for i := range old {
		inOld[old[i].Path] = &old[i]
	}
	inNew := make(map[string]*store.File, len(new))
	for i := range new {
		inNew[new[i].Path] = &new[i]
	}
	var out []Change
	for _, f := range tarOrder(old) {
		if keep != nil && !keep(f.Path) {
			continue
		}
		n := inNew[f.Path]
		switch {
		case n == nil:
			out = append(out, Change{Path: f.Path, Status: Deleted, Old: f})
		case n.Hash != f.Hash || modeString(n.Mode) != modeString(f.Mode):
			out = append(out, Change{Path: f.Path, Status: Modified, Old: f, New: n})
		}
	}
	for _, f := range tarOrder(new) {
		if inOld[f.Path] != nil || (keep != nil && !keep(f.Path)) {
			continue
		}
		out = append(out, Change{Path: f.Path, Status: Added, New: f})
	}
	return out
}

// tarOrder returns pointers to files sorted by Order; equal orders (all
// 0 when unknown) keep byte order.
func tarOrder(files []store.File) []*store.File {
	out := make([]*store.File, len(files))
	for i := range files {
		out[i] = &files[i]
	}
	slices.SortStableFunc(out, func(a, b *store.File) int { return a.Order - b.Order })
	return out
}

// modeString is npm diff's mode: "100" and the permission bits in octal.
func modeString(m uint32) string {
	if m == 0 {
		return "100644" // unknown: what npm pack writes for a file
	}
	return "100" + strconv.FormatUint(uint64(m&0o7777), 8)
}

// Options are npm diff's options that change the text.
type Options struct {
	NameOnly       bool   // --diff-name-only
	Context        int    // --diff-unified (npm's default is 3)
	IgnoreAllSpace bool   // --diff-ignore-all-space
	NoPrefix       bool   // --diff-no-prefix
	SrcPrefix      string // --diff-src-prefix; "" means "a/"
	DstPrefix      string // --diff-dst-prefix; "" means "b/"
	// Text prints hunks for files npm deems binary by extension.
	// npm 11 accepts --diff-text but libnpmdiff never passes it on
	// (format-diff.js calls shouldPrintPatch without options), so npm
	// itself prints no hunks for them either way.
	Text bool
	// MaxWork bounds one file's line diff (see diffLines); 0 means
	// DefaultMaxWork.
	MaxWork int
}

// DefaultMaxWork is about a second of line diffing. A step costs about
// 75 ns of CPU, most of it the two allocations of jsdiff's path search and
// their collection: typescript 5.8.2 → 5.9.2's lib/lib.dom.d.ts (19,391
// lines apart) needs 1.9·10^8 steps, 29 s of CPU; 2·10^7 steps took 1.6 s
// (GOMAXPROCS=1, load 10; docs/BENCHMARKS.md). The default was 2·10^8,
// which let one diff request spend half a minute of CPU per changed file,
// again for a page that starts inside the file once it is no longer held
// (--diff-render-bytes). next 16.4.5 → 16.4.6
// prints the same 62 MB with either.
const DefaultMaxWork = 10_000_000

// FileDiff is one changed file's part of the text.
type FileDiff struct {
	Change
	// Text is the file's part of npm diff's output; empty when the
	// bodies decode to the same text and the modes agree.
	Text string
	// Added and Removed count the hunks' "+" and "-" lines.
	Added, Removed int
	// TooComplex: the line diff passed MaxWork, so Text has the headers
	// and no hunks.
	TooComplex bool
	// Work is the steps the line diff took (MaxWork's unit), so a caller
	// rendering many files can bound their sum.
	Work int
}

// Render prints one change, given its bodies (nil for an absent side),
// as npm diff does for versions vOld and vNew.
func Render(c Change, oldBody, newBody []byte, vOld, vNew string, o Options) FileDiff {
	fd := FileDiff{Change: c}
	var oldText, newText, oldMode, newMode string
	if c.Old != nil {
		oldText, oldMode = decodeUTF8(oldBody), modeString(c.Old.Mode)
	}
	if c.New != nil {
		newText, newMode = decodeUTF8(newBody), modeString(c.New.Mode)
	}
	if c.Old != nil && c.New != nil && oldText == newText && oldMode == newMode {
		return fd
	}
	if o.NameOnly {
		fd.Text = c.Path + "\n"
		return fd
	}
	src, dst := "a/", "b/"
	if o.SrcPrefix != "" {
		src = o.SrcPrefix
	}
	if o.DstPrefix != "" {
		dst = o.DstPrefix
	}
	if o.NoPrefix {
		src, dst = "", ""
	}
	nameA, nameB := src+c.Path, dst+c.Path
	var b strings.Builder
	b.WriteString("diff --git " + nameA + " " + nameB + "\n")
	fileMode := ""
	switch {
	case oldMode == newMode:
		fileMode = oldMode
	case newMode == "":
		b.WriteString("deleted file mode " + oldMode + "\n")
	case oldMode == "":
		b.WriteString("new file mode " + newMode + "\n")
	default:
		b.WriteString("old mode " + oldMode + "\n")
		b.WriteString("new mode " + newMode + "\n")
	}
	b.WriteString("index v" + vOld + "..v" + vNew + " " + fileMode + "\n")
	if !o.Text && binaryByExtension(c.Path) {
		b.WriteString("--- " + nameA + "\n")
		b.WriteString("+++ " + nameB + "\n")
		fd.Text = b.String()
		return fd
	}
	maxWork := o.MaxWork
	if maxWork <= 0 {
		maxWork = DefaultMaxWork
	}
	runs, work, err := diffLines(tokenizeLines(oldText), tokenizeLines(newText), o.IgnoreAllSpace, maxWork)
	fd.Work = work
	if err != nil {
		fd.TooComplex = true
	}
	fd.Added, fd.Removed = formatPatch(&b, nameA, nameB, structuredPatch(runs, max(o.Context, 0)))
	fd.Text = b.String()
	return fd
}

// NamePrintedUnread reports whether a name-only diff prints c, known
// without reading its bodies. Render prints nothing for a change only
// when both sides exist, their modes agree as npm prints them and their
// bodies decode to the same text; a name-only diff prints the path
// otherwise, whatever the extension or Binary flag. So an added or
// deleted file is printed, a modified one whose modes differ too, and so
// is one whose bodies are both valid UTF-8: they decode to themselves, and
// Changes found their bytes differ. A body that is not UTF-8, or of
// unknown validity, needs Render: bytes that differ only where they are
// not UTF-8 can decode alike (one body's literal U+FFFD against another's
// invalid byte, too, which is why both must be valid).
func NamePrintedUnread(c Change) bool {
	if c.Old == nil || c.New == nil || modeString(c.Old.Mode) != modeString(c.New.Mode) {
		return true
	}
	return c.Old.UTF8 == store.UTF8Valid && c.New.UTF8 == store.UTF8Valid
}

// binaryByExtension is libnpmdiff's shouldPrintPatch, negated: a file
// named ".x" is judged by "x", any other by what follows its last dot.
func binaryByExtension(p string) bool {
	name := path.Base(p)
	ext := name
	if !strings.HasPrefix(name, ".") {
		ext = path.Ext(name)
	}
	if ext == "" {
		return binaryExtensions[""]
	}
	return binaryExtensions[ext[1:]]
}

// Print turns consecutive file texts (FileDiff.Text) into what npm
// prints for them: the start of the whole diff (first) trimmed of
// JavaScript whitespace, its end (last) too and then ended with one
// newline, every line passed through npm's output layer (print.go). The
// Prints of a diff cut anywhere between files, concatenated, are the
// Print of the whole.
func Print(text string, first, last bool) string {
	if first {
		text = jsTrimLeft(text)
	}
	if last {
		text = jsTrimRight(text)
	}
	out := printNpm(text)
	if last {
		out += "\n"
	}
	return out
}

// Blank reports whether Print would trim s away entirely at the end of a
// diff: it is all JavaScript whitespace.
func Blank(s string) bool { return jsTrimRight(s) == "" }

// Finish is Print of a whole diff: exactly npm diff's standard output.
func Finish(text string) string { return Print(text, true, true) }
