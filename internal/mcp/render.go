package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/project"
)

// head is an answer's first line: what was answered, which version and
// why, then what follows; each note gets its own line after it.
func head(a explore.Answer, what string) string {
	var b strings.Builder
	if a.PackageName == "" && a.Project != "" {
		b.WriteString("project " + a.Project)
	} else {
		b.WriteString(a.PackageName + "@" + a.Version)
	}
	if a.ResolvedFrom != "" {
		b.WriteString(" (" + a.ResolvedFrom + ")")
	}
	b.WriteString(" " + what)
	if a.Browse != "" {
		b.WriteString("\n[web page: " + a.Browse + "]")
	}
	for _, n := range a.Notes {
		b.WriteString("\n[note: " + n + "]")
	}
	return b.String()
}

// tail says how a cut answer goes on: the next request, whole, to send as
// the tool's arguments.
func tail(a explore.Answer) string {
	if !a.Truncated || a.Next == nil {
		return ""
	}
	next, err := json.Marshal(a.Next)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("\n[truncated by %s; to continue, call explore_npm with %s]", a.TruncatedBy, next)
}

func renderList(r *explore.ListResult, action string) string {
	var b strings.Builder
	what := english.Count(r.TotalFiles, "file") + ", " + english.Bytes(r.TotalBytes)
	switch {
	case action == "glob":
		what = english.CountAs(r.TotalFiles, "matching file or folder", "matching files and folders")
	case r.Path != "":
		what = r.Path + "/: " + what
	}
	if r.Depth > 0 {
		what += "; " + english.Count(r.Depth, "level") + " shown, deeper folders summed up"
	}
	// A glob's answer keeps every path whole: the agent asked for paths
	// to copy (and its header already counts them).
	lines := foldEntries(r.Entries)
	if action == "glob" {
		lines = lines[:0]
		for _, e := range r.Entries {
			lines = append(lines, entry(e))
		}
	}
	what += listed(r.Entries, len(lines))
	b.WriteString(head(r.Answer, what))
	for _, l := range lines {
		b.WriteByte('\n')
		b.WriteString(l)
	}
	b.WriteString(tail(r.Answer))
	return b.String()
}

// listed counts a page's entries when folding hides how many there are
// and the header's total does not say it (a tree, or a folder's
// entries): "; listed: 388 files, 96 folders"; else "".
func listed(es []explore.Entry, lines int) string {
	files := 0
	for _, e := range es {
		if e.Type != explore.EntryFolder {
			files++
		}
	}
	if lines == len(es) || files == len(es) {
		return ""
	}
	return fmt.Sprintf("; listed: %s, %s", english.Count(files, "file"), english.Count(len(es)-files, "folder"))
}

// entry is one listing line: "dist/ (120 files, 3.1 MB)" or "index.js (812 B)".
func entry(e explore.Entry) string {
	if e.Type == explore.EntryFolder {
		return fmt.Sprintf("%s (%s, %s)", e.Path, english.Count(e.Files, "file"), english.Bytes(e.Bytes))
	}
	return fmt.Sprintf("%s (%s)", e.Path, english.Bytes(e.Bytes))
}

func renderRead(r *explore.ReadResult) string {
	var b strings.Builder
	switch {
	case r.Folder:
		what := r.Path + "/: a folder"
		lines := foldEntries(r.Entries)
		what += listed(r.Entries, len(lines))
		b.WriteString(head(r.Answer, what))
		for _, l := range lines {
			b.WriteByte('\n')
			b.WriteString(l)
		}
		b.WriteString(tail(r.Answer))
		return b.String()
	case r.Binary:
		return head(r.Answer, fmt.Sprintf("%s: binary file, %d bytes, not shown", r.Path, r.Size))
	case r.TotalLines == 0:
		return head(r.Answer, r.Path+": empty file")
	case r.Column > 0:
		last := r.LineBytes
		if r.NextColumn > 0 {
			last = r.NextColumn - 1
		}
		b.WriteString(head(r.Answer, fmt.Sprintf("%s: line %d, bytes %d-%d of %d", r.Path, r.StartLine, r.Column, last, r.LineBytes)))
	default:
		b.WriteString(head(r.Answer, fmt.Sprintf("%s: lines %d-%d of %d", r.Path, r.StartLine, r.EndLine, r.TotalLines)))
	}
	b.WriteByte('\n')
	b.WriteString(r.Content)
	b.WriteString(tail(r.Answer))
	return b.String()
}

// renderGrep prints matches as grep -n does: "path:line:col:text" for a
// match; with context lines, as ripgrep's --heading does (below); a
// context line is printed once even when two matches share it.
// A long line prints one "path:line:col:" line per window, as ripgrep's
// --vimgrep prints one per match, then how many more it holds; a file
// with the same bytes as one before prints one line naming it.
func renderGrep(r *explore.GrepResult) string {
	var b strings.Builder
	files := map[string]bool{}
	context := false
	lines, copies, copied := 0, 0, 0
	for _, m := range r.Matches {
		if m.SameBytesAs != "" {
			copies++
			copied += m.MatchingLines
			continue
		}
		lines++
		files[m.File] = true
		context = context || len(m.Before) > 0 || len(m.After) > 0
	}
	what := plural(lines, "matching line") + " in " + plural(len(files), "file")
	if copies > 0 {
		what += fmt.Sprintf(", and %s with the same bytes as one before (%s not repeated)", plural(copies, "file"), plural(copied, "matching line"))
	}
	switch r.OutputMode {
	case explore.OutputFilesWithMatches:
		what = plural(len(r.Files), "file") + " with matches"
	case explore.OutputCount:
		what = plural(r.PageMatches, "matching line") + " in " + plural(len(r.Files), "file")
	}
	if r.Next != nil {
		what += " on this page"
	}
	if p := r.Place; p != nil {
		what += fmt.Sprintf(", lines %d–%d of %s in all (%s)", p.First, p.Last, atLeast(p.AtLeast, p.Lines, ""), atLeast(p.AtLeast, p.Files, "file"))
	}
	what += " (" + plural(r.FilesSearched, "file") + " searched"
	if r.FilesSkipped > 0 {
		what += fmt.Sprintf(", %d binary skipped", r.FilesSkipped)
	}
	b.WriteString(head(r.Answer, "grep: "+what+")"))
	b.WriteByte('\n')
	for _, f := range r.Files {
		if r.OutputMode == explore.OutputCount {
			fmt.Fprintf(&b, "%s:%d\n", f.Path, f.Count)
		} else {
			b.WriteString(f.Path + "\n")
		}
	}
	// With context lines the answer takes ripgrep's --heading form: each
	// file's path once, on a line of its own (a blank line before the
	// next file), its lines as "line:col:text" and "line-text", "--"
	// between groups that do not touch. On next's useRouter with
	// contextLines 2, 32% of the text was paths repeated from the line
	// before (docs/BENCHMARKS.md); without context, 7%, so that stays
	// grep -n's one line per match.
	heading := context
	lastFile, lastLine := "", 0 // the last line printed
	var repeats map[int]repeat
	if !heading {
		repeats = repeatedRuns(r.Matches)
	}
	for i, m := range r.Matches {
		if rep, ok := repeats[i]; ok {
			if rep.of != "" {
				b.WriteString(repeatLine(m.File, m.Line, r.Matches[i+rep.n-1].Line, rep))
			}
			lastFile = ""
			continue
		}
		if m.SameBytesAs != "" {
			if heading && i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "[%s: same bytes as %s; its %s not repeated]\n", m.File, m.SameBytesAs, plural(m.MatchingLines, "matching line"))
			lastFile = ""
			continue
		}
		// at is where a line starts: "path:12:" (sep ':' for a match,
		// '-' for context), "12:" under a heading.
		at := func(n int, sep byte) string {
			if heading {
				return fmt.Sprintf("%d%c", n, sep)
			}
			return fmt.Sprintf("%s%c%d%c", m.File, sep, n, sep)
		}
		same := m.File == lastFile
		start := m.Line - len(m.Before)
		switch {
		case heading && !same:
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(m.File + "\n")
		case heading && start > lastLine+1:
			b.WriteString("--\n")
		}
		for j, l := range m.Before {
			if n := start + j; !same || n > lastLine {
				b.WriteString(at(n, '-') + l + "\n")
			}
		}
		if m.LineBytes > 0 { // a window of a long line: say where it sits
			fmt.Fprintf(&b, "%s%d:[bytes %d-%d of %d] %s\n", at(m.Line, ':'), m.Column,
				m.TextOffset+1, m.TextOffset+len(m.Text), m.LineBytes, m.Text)
		} else {
			fmt.Fprintf(&b, "%s%d:%s\n", at(m.Line, ':'), m.Column, m.Text)
		}
		for _, w := range m.Windows {
			fmt.Fprintf(&b, "%s%d:[bytes %d-%d of %d] %s\n", at(m.Line, ':'), w.Column,
				w.TextOffset+1, w.TextOffset+len(w.Text), m.LineBytes, w.Text)
		}
		if m.MoreInLine > 0 {
			more := strconv.Itoa(m.MoreInLine) + " more matches"
			switch {
			case m.MoreInLineCapped:
				more = "at least " + more
			case m.MoreInLine == 1:
				more = "1 more match"
			}
			if next, err := json.Marshal(m.MoreNext); err == nil && m.MoreNext != nil {
				fmt.Fprintf(&b, "[%s:%d: %s in this line from byte %d; to see them, a window each, call explore_npm with %s]\n",
					m.File, m.Line, more, m.MoreColumn, next)
			} else {
				fmt.Fprintf(&b, "[%s:%d: %s in this line from byte %d: read offset %d, column %d to see them]\n",
					m.File, m.Line, more, m.MoreColumn, m.Line, m.MoreColumn)
			}
		}
		lastFile, lastLine = m.File, m.Line
		for j, l := range m.After {
			n := m.Line + 1 + j
			if i+1 < len(r.Matches) && r.Matches[i+1].File == m.File && n >= r.Matches[i+1].Line {
				break // the next match prints this line itself
			}
			b.WriteString(at(n, '-') + l + "\n")
			lastLine = n
		}
	}
	b.WriteString(skippedLine(r.Skipped, r.FilesSkipped))
	return strings.TrimSuffix(b.String(), "\n") + tail(r.Answer)
}

// repeat marks a match of a run that repeats an earlier file's: the
// run's first match carries the earlier file and the run's length, the
// others nothing.
type repeat struct {
	of string
	n  int
}

// repeatedRuns finds the runs of a page's matches (a file's consecutive
// plain matching lines) whose line numbers, columns and text
// are those of an earlier file's run on the page: packages ship builds
// that differ only past the lines that match (lucide-react's .d.ts, its
// .prefixed.d.ts and .suffixed.d.ts agree on their first 3,890 lines),
// and on its grep for ArrowRight such repeats were 7,358 of 22,815 bytes
// of text. The text names the file, its lines and the file they repeat,
// when that is shorter than the lines; structuredContent keeps every match.
func repeatedRuns(ms []explore.GrepMatch) map[int]repeat {
	plain := func(m explore.GrepMatch) bool {
		return m.SameBytesAs == "" && m.LineBytes == 0 && len(m.Windows) == 0 && m.MoreInLine == 0 && len(m.Before)+len(m.After) == 0
	}
	seen := map[string]string{} // a run's lines → the file that had them first
	out := map[int]repeat{}
	for i := 0; i < len(ms); {
		j := i
		var key strings.Builder
		for ; j < len(ms) && ms[j].File == ms[i].File && plain(ms[j]); j++ {
			fmt.Fprintf(&key, "%d:%d:%s\n", ms[j].Line, ms[j].Column, ms[j].Text)
		}
		if j == i {
			i++
			continue
		}
		k := key.String()
		printed := len(k) + (j-i)*(len(ms[i].File)+1) // each line is "path:" and a line of k
		if of, ok := seen[k]; ok && of != ms[i].File && len(repeatLine(ms[i].File, ms[i].Line, ms[j-1].Line, repeat{of, j - i})) < printed {
			out[i] = repeat{of: of, n: j - i}
			for x := i + 1; x < j; x++ {
				out[x] = repeat{}
			}
		} else if !ok {
			seen[k] = ms[i].File
		}
		i = j
	}
	return out
}

// repeatLine is the text of a repeated run: "[b.d.ts:12-40: the same 10
// matching lines as a.d.ts above]".
func repeatLine(file string, first, last int, rep repeat) string {
	return fmt.Sprintf("[%s:%d-%d: the same %s as %s above]\n", file, first, last, plural(rep.n, "matching line"), rep.of)
}

// maxSkippedNamed is how many files grep's text names of those it did
// not search; structuredContent's skipped lists them all. A line each
// was 13 lines, 900 bytes, of fonts and .wasm on every grep of next that
// the header's "13 binary skipped" already counts.
const maxSkippedNamed = 3

// skippedLine names the first files of skipped on one line, with how
// many more there are of total, and their reason when they share one:
// "[not searched: a.wasm, b.ttf, c.woff2 and 10 more (binary)]".
func skippedLine(skipped []explore.SkippedFile, total int) string {
	if len(skipped) == 0 {
		return ""
	}
	var paths []string
	reason := skipped[0].Reason
	for i, s := range skipped {
		if s.Reason != reason {
			reason = ""
		}
		if i < maxSkippedNamed {
			paths = append(paths, s.Path)
		}
	}
	line := strings.Join(paths, ", ")
	if more := max(total, len(skipped)) - len(paths); more > 0 {
		line += fmt.Sprintf(" and %d more", more)
	}
	if reason != "" {
		line += " (" + reason + ")"
	}
	return "[not searched: " + line + "]\n"
}

// atLeast is n ("427", or "3 files" with what), after "at least " when
// a limit stopped the count.
func atLeast(more bool, n int, what string) string {
	s := strconv.Itoa(n)
	if what != "" {
		s = plural(n, what)
	}
	if more {
		return "at least " + s
	}
	return s
}

// plural is english.Count: "1 file", "2 files".
func plural(n int, what string) string { return english.Count(n, what) }

func title(name, version string) string { return name + "@" + version }

func withNote(s, note string) string {
	if note == "" {
		return s
	}
	return s + " " + note
}

// renderDiff prints a diff page as npm diff does (nameOnly: each path
// after its status), under a line that says which versions were compared,
// how many files changed in all and which of them this page shows, and
// over the request that continues a cut page.
func renderDiff(r *explore.DiffResult, note string, nameOnly bool) string {
	var b strings.Builder
	b.WriteString(title(r.PackageName, r.From+" → "+r.To) + ": " + diffHead(r, nameOnly))
	b.WriteString(withNote("", note))
	for _, n := range r.Notes {
		b.WriteString("\n[note: " + n + "]")
	}
	for _, f := range slices.Concat(diffContinued(r), r.Files) {
		if f.Note != "" {
			b.WriteString("\n[note: " + f.Path + ": " + f.Note + "]")
		}
	}
	if len(r.Unprinted) > 0 {
		fmt.Fprintf(&b, "\n[note: npm diff prints nothing for %s, whose bytes differ only where they are not UTF-8 and decode alike: %s]",
			plural(len(r.Unprinted), "file"), strings.Join(r.Unprinted, ", "))
	}
	b.WriteByte('\n')
	if nameOnly && r.Continues == nil && !r.GoesOn {
		for _, f := range r.Files {
			fmt.Fprintf(&b, "%-8s %s", f.Status, f.Path)
			if size := f.Bytes(); size != "" {
				b.WriteString(" (" + size + ")")
			}
			b.WriteByte('\n')
		}
	} else {
		b.WriteString(r.Diff)
	}
	if r.Next != nil {
		next, _ := json.Marshal(r.Next)
		fmt.Fprintf(&b, "\n[the diff goes on (cut by %s): call again with %s]", r.TruncatedBy, next)
	}
	return b.String()
}

// diffContinued is the file a page continues, if any.
func diffContinued(r *explore.DiffResult) []explore.DiffFile {
	if r.Continues == nil {
		return nil
	}
	return []explore.DiffFile{*r.Continues}
}

// diffHead is the page's explore.DiffResult.Summary, then, on the first
// page of a cut diff, how to see less.
func diffHead(r *explore.DiffResult, nameOnly bool) string {
	if less := r.SeeLess(nameOnly); less != "" {
		return r.Summary() + "; " + less
	}
	return r.Summary()
}

// renderProjectList is a package's list text over a project's tree, then
// what the answer could not cover.
func renderProjectList(r *project.ListAnswer, action string) string {
	return renderList(&r.ListResult, action) + coverageText(r.Complete, r.Pending, r.PendingCount, r.Failed, r.FailedCount)
}

// renderProjectGrep is a package's grep text in project paths (count:
// matching lines per package folder), then what it could not cover.
func renderProjectGrep(r *project.GrepAnswer) string {
	text := renderGrep(&r.GrepResult)
	if r.OutputMode == explore.OutputCount {
		var b strings.Builder
		what := plural(r.PageMatches, "matching line") + " in " + plural(len(r.Counts), "package")
		if r.Next != nil {
			what += " on this page"
		}
		b.WriteString(head(r.Answer, fmt.Sprintf("grep: %s (%s searched)", what, plural(r.PackagesSearched, "package"))))
		for _, c := range r.Counts {
			fmt.Fprintf(&b, "\n%s (%s@%s): %d", c.Path, c.Package, c.Version, c.Matches)
		}
		text = b.String() + tail(r.Answer)
	}
	return text + coverageText(r.Complete, r.Pending, r.PendingCount, r.Failed, r.FailedCount)
}

// coverageText says which folders a project answer left out and why.
func coverageText(complete bool, pending []string, pendingCount int, failed []project.FailedPackage, failedCount int) string {
	if complete {
		return ""
	}
	var b strings.Builder
	if pendingCount > 0 {
		fmt.Fprintf(&b, "\n[incomplete: %s not warm yet, ask again: %s", plural(pendingCount, "package"), strings.Join(pending, ", "))
		if pendingCount > len(pending) {
			b.WriteString(", ...")
		}
		b.WriteString("]")
	}
	if failedCount > 0 {
		fmt.Fprintf(&b, "\n[incomplete: %s cannot be explored:", plural(failedCount, "package"))
		for _, f := range failed {
			fmt.Fprintf(&b, "\n  %s: %s", f.Path, f.Reason)
		}
		if failedCount > len(failed) {
			b.WriteString("\n  ...")
		}
		b.WriteString("]")
	}
	return b.String()
}
