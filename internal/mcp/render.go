package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pkgscope/pkgscope/internal/explore"
)

// ListOutput is the answer to list and glob: the API's ListResult, capped
// at Limits.MaxListEntries paths, with the total before the cap.
type ListOutput struct {
	explore.ListResult
	// TotalFiles is how many paths matched; len(Files) when not truncated.
	TotalFiles int `json:"totalFiles"`
	// Truncated says Files holds only the first MaxListEntries paths (in
	// byte order); TruncatedBy is then "maxListEntries" and Hint says how
	// to narrow the listing.
	Truncated   bool   `json:"truncated"`
	TruncatedBy string `json:"truncatedBy,omitempty"`
	Hint        string `json:"hint,omitempty"`
}

func capList(res *explore.ListResult, limit int, action string) *ListOutput {
	out := &ListOutput{ListResult: *res, TotalFiles: len(res.Files)}
	if out.Files == nil {
		out.Files = []string{}
	}
	if len(out.Files) > limit {
		out.Files = out.Files[:limit]
		out.Truncated, out.TruncatedBy = true, "maxListEntries"
		out.Hint = fmt.Sprintf("showing the first %d of %d paths; ", limit, out.TotalFiles)
		if action == "glob" {
			out.Hint += "use more specific patterns, e.g. restrict to one folder or extension"
		} else {
			out.Hint += "use action 'glob' with patterns to narrow, e.g. ['*'] for the top-level files, ['dist/**'] for one folder or ['**/*.d.ts'] for types"
		}
	}
	return out
}

func title(name, version string) string { return name + "@" + version }

func withNote(s, note string) string {
	if note == "" {
		return s
	}
	return s + " " + note
}

func renderList(o *ListOutput, action, note string) string {
	var b strings.Builder
	what := "files"
	if action == "glob" {
		what = "matching files"
	}
	fmt.Fprintf(&b, "%s: %d %s", title(o.PackageName, o.Version), o.TotalFiles, what)
	if o.Truncated {
		fmt.Fprintf(&b, ", first %d shown", len(o.Files))
	}
	b.WriteString(withNote("", note))
	b.WriteByte('\n')
	for _, f := range o.Files {
		b.WriteString(f)
		b.WriteByte('\n')
	}
	if o.Truncated {
		fmt.Fprintf(&b, "[truncated: %s]\n", o.Hint)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func renderRead(r *explore.ReadResult, note string) string {
	var b strings.Builder
	head := title(r.PackageName, r.Version) + " " + r.Path
	switch {
	case r.Binary:
		fmt.Fprintf(&b, "%s: binary file, %d bytes, not shown", head, r.Size)
		b.WriteString(withNote("", note))
		return b.String()
	case r.TotalLines == 0:
		fmt.Fprintf(&b, "%s: empty file", head)
		b.WriteString(withNote("", note))
		return b.String()
	case r.Column > 0:
		last := r.LineBytes
		if r.NextColumn > 0 {
			last = r.NextColumn - 1
		}
		fmt.Fprintf(&b, "%s: line %d, bytes %d-%d of %d", head, r.StartLine, r.Column, last, r.LineBytes)
	default:
		fmt.Fprintf(&b, "%s: lines %d-%d of %d", head, r.StartLine, r.EndLine, r.TotalLines)
	}
	b.WriteString(withNote("", note))
	b.WriteByte('\n')
	b.WriteString(r.Content)
	switch {
	case r.Column > 0 && r.NextColumn > 0:
		fmt.Fprintf(&b, "\n[line %d continues: read with offset=%d, column=%d]", r.StartLine, r.StartLine, r.NextColumn)
	case r.Truncated && r.TruncatedBy == "maxReadBytes":
		fmt.Fprintf(&b, "\n[stopped at the size cap of one read; lines %d-%d remain: read with offset=%d]", r.EndLine+1, r.TotalLines, r.EndLine+1)
	case r.Truncated:
		fmt.Fprintf(&b, "\n[lines %d-%d remain: read with offset=%d]", r.EndLine+1, r.TotalLines, r.EndLine+1)
	}
	return b.String()
}

// renderGrep prints matches as grep -n does: "path:line:col:text" for a
// match, "path-line-text" for context, "--" between groups that are not
// adjacent; a context line is printed once even when two matches share it.
func renderGrep(r *explore.GrepResult, note string) string {
	var b strings.Builder
	files := map[string]bool{}
	context := false
	for _, m := range r.Matches {
		files[m.File] = true
		context = context || len(m.Before) > 0 || len(m.After) > 0
	}
	fmt.Fprintf(&b, "%s: %s in %s (%s searched", title(r.PackageName, r.Version),
		plural(len(r.Matches), "matching line"), plural(len(files), "file"), plural(r.FilesSearched, "file"))
	if r.FilesSkipped > 0 {
		fmt.Fprintf(&b, ", %d skipped", r.FilesSkipped)
	}
	b.WriteString(")")
	b.WriteString(withNote("", note))
	b.WriteByte('\n')
	lastFile, lastLine := "", 0 // the last line printed
	for i, m := range r.Matches {
		same := m.File == lastFile
		start := m.Line - len(m.Before)
		if context && i > 0 && (!same || start > lastLine+1) {
			b.WriteString("--\n")
		}
		for j, l := range m.Before {
			if n := start + j; !same || n > lastLine {
				fmt.Fprintf(&b, "%s-%d-%s\n", m.File, n, l)
			}
		}
		if m.LineBytes > 0 { // a window of a long line: say where it sits
			fmt.Fprintf(&b, "%s:%d:%d:[bytes %d-%d of %d] %s\n", m.File, m.Line, m.Column,
				m.TextOffset+1, m.TextOffset+len(m.Text), m.LineBytes, m.Text)
		} else {
			fmt.Fprintf(&b, "%s:%d:%d:%s\n", m.File, m.Line, m.Column, m.Text)
		}
		lastFile, lastLine = m.File, m.Line
		for j, l := range m.After {
			n := m.Line + 1 + j
			if i+1 < len(r.Matches) && r.Matches[i+1].File == m.File && n >= r.Matches[i+1].Line {
				break // the next match prints this line itself
			}
			fmt.Fprintf(&b, "%s-%d-%s\n", m.File, n, l)
			lastLine = n
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "[not searched: %s (%s)]\n", s.Path, s.Reason)
	}
	if r.Truncated {
		fmt.Fprintf(&b, "[truncated by %s: narrow with include/exclude or a more specific pattern, or raise maxMatches]\n", r.TruncatedBy)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// renderDiff prints a diff page as npm diff does, under a line that says
// which versions were compared and how much changed on the page, and over
// the request that continues a cut page.
func renderDiff(r *explore.DiffResult, note string) string {
	var b strings.Builder
	added, removed := 0, 0
	for _, f := range r.Files {
		if f.Added != nil {
			added += *f.Added
			removed += *f.Removed
		}
	}
	fmt.Fprintf(&b, "%s: %s changed", title(r.PackageName, r.From+" → "+r.To), plural(len(r.Files), "file"))
	if added+removed > 0 {
		fmt.Fprintf(&b, " (+%d -%d lines)", added, removed)
	}
	if r.Truncated {
		b.WriteString(" on this page")
	}
	b.WriteString(withNote("", note))
	b.WriteByte('\n')
	b.WriteString(r.Diff)
	if r.Next != nil {
		next, _ := json.Marshal(r.Next)
		fmt.Fprintf(&b, "\n[the diff goes on (cut by %s): call again with %s]", r.TruncatedBy, next)
	}
	return b.String()
}
