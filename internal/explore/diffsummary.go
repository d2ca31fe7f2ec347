package explore

import (
	"fmt"
	"strings"

	"github.com/pkgscope/pkgscope/internal/english"
)

// Summary says how much a diff page's diff changed: "19 files changed
// (2 added, 17 modified), +397 -97 lines" for a diff on one page; for a
// page of a longer one the totals "in all" (the same on every page), then
// which files this page shows, which it continues or cuts, and whether it
// is the last, so that no page's count reads as the whole diff's. MCP's
// text leads with it, the REST diff sends it as X-Pkgscope-Summary and
// the web page shows it above the diff.
func (r *DiffResult) Summary() string {
	var b strings.Builder
	b.WriteString(english.Count(r.TotalFiles, "file") + " changed")
	whole := r.Whole()
	if !whole {
		b.WriteString(" in all")
	}
	var counts []string
	for _, st := range []string{"added", "deleted", "modified"} {
		if n := r.TotalByStatus[st]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, st))
		}
	}
	if len(counts) > 0 {
		b.WriteString(" (" + strings.Join(counts, ", ") + ")")
	}
	lines := diffLines(r.Files)
	if whole {
		if lines != "" {
			b.WriteString(", " + lines)
		}
		return b.String()
	}
	b.WriteString("; this page: ")
	first, starting := r.FirstFile, r.LastFile-r.FirstFile+1
	if r.FirstFile == 0 {
		starting = 0
	}
	var parts []string
	if c := r.Continues; c != nil {
		what := "the rest of"
		if r.GoesOn && starting == 1 {
			what = "more of"
		}
		parts = append(parts, fmt.Sprintf("%s file %d, %s", what, first, c.Path))
		first, starting = first+1, starting-1
	}
	switch {
	case starting == 1:
		parts = append(parts, fmt.Sprintf("file %d", first))
	case starting > 1:
		parts = append(parts, fmt.Sprintf("files %d–%d", first, r.LastFile))
	case r.Continues == nil:
		parts = append(parts, "no file")
	}
	if starting > 0 && lines != "" {
		parts[len(parts)-1] += " (" + lines + ")"
	}
	b.WriteString(strings.Join(parts, ", then "))
	switch {
	case !r.Truncated:
		b.WriteString("; this is the last page")
	case r.GoesOn && starting > 0:
		fmt.Fprintf(&b, "; file %d continues on the next page", r.LastFile)
	case r.GoesOn:
		b.WriteString(", continued on the next page")
	}
	return b.String()
}

// Whole reports whether the page holds the whole diff.
func (r *DiffResult) Whole() bool {
	return !r.Truncated && r.Continues == nil && (r.FirstFile == 1 || r.TotalFiles == 0)
}

// SeeLess is how to ask for less of a diff cut on its first page ("" on
// any other page): include/exclude, and nameOnly unless the page was
// asked with it.
func (r *DiffResult) SeeLess(nameOnly bool) string {
	if !r.Truncated || r.FirstFile > 1 || r.Continues != nil {
		return ""
	}
	if nameOnly {
		return "to see less, narrow it with include/exclude"
	}
	return "to see less, narrow it with include/exclude or list its files with nameOnly"
}

// diffLines is the "+" and "-" lines of files, "" when none is known.
func diffLines(files []DiffFile) string {
	added, removed := 0, 0
	for _, f := range files {
		if f.Added != nil {
			added += *f.Added
			removed += *f.Removed
		}
	}
	if added+removed == 0 {
		return ""
	}
	return fmt.Sprintf("+%d -%d lines", added, removed)
}
