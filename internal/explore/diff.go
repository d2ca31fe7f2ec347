package explore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pkgscope/pkgscope/internal/closest"
	"github.com/pkgscope/pkgscope/internal/diff"
	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/semver"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// DiffResult is the answer to diff: one page of what `npm diff
// --diff=name@from --diff=name@to` prints, and the changed files whose
// text starts on this page.
type DiffResult struct {
	PackageName string `json:"packageName"`
	// From and To are the exact versions compared.
	From string `json:"from"`
	To   string `json:"to"`
	// Diff is this page's part of npm diff's output: the Diffs of the
	// pages, concatenated, are byte for byte what npm diff prints.
	Diff string `json:"diff"`
	// Files are the changed files whose text starts on this page, in
	// npm diff's order.
	Files []DiffFile `json:"files"`
	// TotalFiles counts the changed files of the whole diff (after
	// include and exclude), the same on every page: each is in the Files
	// or Unprinted of exactly one page. Known from the two file lists
	// alone; the whole diff's line counts are not (they take every body).
	TotalFiles int `json:"totalFiles"`
	// TotalByStatus splits TotalFiles by status (added, deleted,
	// modified); a status no file has is left out.
	TotalByStatus map[string]int `json:"totalByStatus,omitempty"`
	// FirstFile and LastFile are the numbers (1-based, npm diff's order,
	// out of TotalFiles) of the first and last file this page shows part
	// of; 0 on a page that shows none.
	FirstFile int `json:"firstFile,omitempty"`
	LastFile  int `json:"lastFile,omitempty"`
	// Continues is the file this page starts inside: its header, first
	// lines and entry in Files are on an earlier page.
	Continues *DiffFile `json:"continues,omitempty"`
	// GoesOn says the page ends inside its last file, whose text goes on
	// on the next page (which Continues it).
	GoesOn bool `json:"goesOn,omitempty"`
	// Unprinted are changed files npm diff prints nothing for: their
	// bytes differ, but only in bytes that are not UTF-8 and decode to
	// the same text.
	Unprinted []string `json:"unprinted,omitempty"`
	// Notes are hints, one line each: an include or exclude that
	// selected no file of either version.
	Notes []string `json:"notes,omitempty"`
	// Truncated says the diff goes on: TruncatedBy names the budget
	// ("maxBytes", or "diffWork": the page's line-diff work passed
	// max-diff-page-work at a file boundary) and Next is the request for
	// the next page.
	Truncated   bool     `json:"truncated"`
	TruncatedBy string   `json:"truncatedBy,omitempty"`
	Next        *Request `json:"next,omitempty"`
}

// DiffFile is one changed file.
type DiffFile struct {
	Path   string `json:"path"`
	Status string `json:"status"` // added, deleted, modified
	// Added and Removed count the diff's "+" and "-" lines (not given
	// with nameOnly, which does not diff lines, nor for a file too
	// complex to diff, whose hunks are not shown).
	Added   *int `json:"added,omitempty"`
	Removed *int `json:"removed,omitempty"`
	// OldBytes and NewBytes are the file's size in each version it is
	// in (an added file has no old size, a deleted one no new), so an
	// agent can tell what is worth reading.
	OldBytes *int64 `json:"oldBytes,omitempty"`
	NewBytes *int64 `json:"newBytes,omitempty"`
	// Note says why a file's hunks are missing (too many changed lines
	// to compare within max-diff-work).
	Note string `json:"note,omitempty"`
}

// DiffDefaultContext is npm diff's --diff-unified default.
const DiffDefaultContext = 3

// diffCursor is where a page starts: the index of a changed file in npm
// diff's order, a byte offset into its text (at a line start) and, for a
// line longer than a page, a byte offset into that line as npm prints it
// (at a rune boundary).
type diffCursor struct{ file, offset, inline int }

func (c diffCursor) String() string {
	s := "diff:" + strconv.Itoa(c.file) + ":" + strconv.Itoa(c.offset)
	if c.inline > 0 {
		s += ":" + strconv.Itoa(c.inline)
	}
	return s
}

func parseDiffCursor(s string) (diffCursor, error) {
	if s == "" {
		return diffCursor{}, nil
	}
	bad := &InputError{Field: "cursor", Err: errors.New("not a diff cursor: send the answer's next request as it is")}
	rest, ok := strings.CutPrefix(s, "diff:")
	parts := strings.Split(rest, ":")
	if !ok || len(parts) < 2 || len(parts) > 3 {
		return diffCursor{}, bad
	}
	var n [3]int
	for k, part := range parts {
		v, err := strconv.Atoi(part)
		if err != nil || v < 0 {
			return diffCursor{}, bad
		}
		n[k] = v
	}
	return diffCursor{n[0], n[1], n[2]}, nil
}

// Diff answers the diff action: what changed between two versions of a
// package, as npm diff prints it, a page of at most the byte budget.
//
// Both versions are read from the store (after a fill when needed) and
// never from the fallback: npm diff's order and modes come from the
// tarball, which only the store keeps. Files whose sha256 and mode agree
// are skipped without reading their bodies.
func (s *Service) Diff(ctx context.Context, r Request) (*DiffResult, error) {
	scopeNote := unscoped(&r.PackageName)
	if err := npmspec.ValidateName(r.PackageName); err != nil {
		return nil, &InputError{Field: "packageName", Err: err}
	}
	from, err := diffSpec("from", r.From)
	if err != nil {
		return nil, err
	}
	to, err := diffSpec("to", r.To)
	if err != nil {
		return nil, err
	}
	ctxLines := DiffDefaultContext
	if r.ContextLines != nil {
		ctxLines = *r.ContextLines
	}
	if ctxLines < 0 {
		return nil, &InputError{Field: "contextLines", Err: errors.New("must not be negative")}
	}
	include, err := diff.NewFilter(r.Include, s.lim.Glob)
	if err != nil {
		return nil, &InputError{Field: "include", Err: err}
	}
	// exclude reads its patterns as include does (npm diff's path
	// arguments: "*.map" is a file name in any folder, "lib" a folder), so
	// the one field that narrows and the one that drops agree on a pattern.
	var exclude *diff.Filter
	if len(r.Exclude) > 0 {
		if exclude, err = diff.NewFilter(r.Exclude, s.lim.Glob); err != nil {
			return nil, &InputError{Field: "exclude", Err: err}
		}
	}
	cur, err := parseDiffCursor(r.Cursor)
	if err != nil {
		return nil, err
	}
	budget, err := s.Budget(r.MaxBytes, false)
	if err != nil {
		return nil, err
	}

	// The store's chain: access is checked for both versions.
	pkgs := s.stored.pkgs
	oldV, err := s.openDiffSide(ctx, pkgs, r.PackageName, "from", from)
	if err != nil {
		return nil, err
	}
	newV, err := s.openDiffSide(ctx, pkgs, r.PackageName, "to", to)
	if err != nil {
		return nil, err
	}
	keep := func(p string) bool { return include.Match(p) && (exclude == nil || !exclude.Match(p)) }
	pair := s.pairOf(oldV, newV)
	changes := pair.selected(keep)
	if cur.file > len(changes) {
		return nil, &InputError{Field: "cursor", Err: errors.New("past the end of this diff: send the answer's next request as it is")}
	}

	opts := diff.Options{
		NameOnly: r.NameOnly, Context: ctxLines, IgnoreAllSpace: r.IgnoreAllSpace,
		NoPrefix: r.NoPrefix, SrcPrefix: r.SrcPrefix, DstPrefix: r.DstPrefix, Text: r.Text, MaxWork: s.lim.DiffMaxWork,
	}
	res := &DiffResult{PackageName: r.PackageName, From: oldV.Version, To: newV.Version, Files: []DiffFile{},
		TotalFiles: len(changes), TotalByStatus: countStatuses(changes)}
	if scopeNote != "" {
		res.Notes = append(res.Notes, scopeNote)
	}
	if len(changes) == 0 && len(r.Include)+len(r.Exclude) > 0 {
		res.Notes = append(res.Notes, diffFilterNote(oldV.Files, newV.Files, keep)...)
	}
	// Whether to move to (or stay on) a version: the first page says
	// which side is deprecated, as every answer's first page does.
	for _, v := range []*Opened{oldV, newV} {
		if v.Deprecated != "" && r.Cursor == "" {
			res.Notes = append(res.Notes, s.deprecationNote(v))
		}
	}
	// The header (its page fields at their widest) and a next request are
	// reserved before any text; room is what an empty page holds.
	widest := *res
	widest.FirstFile, widest.LastFile, widest.GoesOn = len(changes), len(changes), true
	budget.Reserve(Cost(widest) + 2*Cost(r) + 256)
	room := budget.Left()
	// shown records that file i has a part on this page.
	shown := func(i int) {
		if res.FirstFile == 0 {
			res.FirstFile = i + 1
		}
		res.LastFile = i + 1
	}
	cutAt := func(c diffCursor, by string) {
		res.Truncated, res.TruncatedBy = true, by
		next := r
		next.Version, next.From, next.To = "", oldV.Version, newV.Version
		next.Cursor = c.String()
		res.Next = &next
		res.GoesOn = c.offset+c.inline > 0 && res.LastFile == c.file+1
	}
	p := diffPager{first: cur.file == 0 && cur.offset == 0 && cur.inline == 0}
	i, off, inl := cur.file, cur.offset, cur.inline
	// work is the line-diff steps this page spent: once it passes
	// DiffPageWork the page ends before the next file (a page of 32 KiB
	// could otherwise hold ~200 files that each spend max-diff-work and
	// print only their headers: minutes of CPU from one request).
	work := 0
	for ; i < len(changes); i, off, inl = i+1, 0, 0 {
		if work >= s.lim.DiffPageWork && budget.items > 0 {
			cutAt(diffCursor{i, 0, 0}, TruncDiffWork)
			break
		}
		fd, kept, err := pair.render(ctx, s, pkgs, oldV, newV, changes[i], opts, off+inl > 0)
		if err != nil {
			return nil, err
		}
		// A held file counts the work of its render too, so that where a
		// page ends does not depend on what is held.
		work += fd.Work
		if off > len(fd.Text) || (inl > 0 && off == len(fd.Text)) {
			return nil, errDiffCursor
		}
		if fd.Text == "" {
			// npm prints nothing for it; listed so that the pages' files
			// add up to TotalFiles.
			cost := StringCost(fd.Path) + 1
			if len(res.Unprinted) == 0 {
				cost += len(`,"unprinted":[]`)
			}
			if !budget.Take(cost) {
				cutAt(diffCursor{i, 0, 0}, TruncMaxBytes)
				break
			}
			res.Unprinted = append(res.Unprinted, fd.Path)
			shown(i)
			continue
		}
		text := fd.Text[off:]
		if text == "" {
			continue
		}
		if off > 0 || inl > 0 {
			// The page starts inside this file: it is named, and room is
			// what is left beside its name.
			res.Continues = diffFileOf(fd, r.NameOnly)
			budget.Reserve(Cost(res.Continues) + len(`"continues":`))
			room = budget.Left()
		}
		// The items are lines; a file's entry in Files is charged with
		// its first line. Budget.Take always takes a page's first item,
		// so paging advances.
		var entry *DiffFile
		entryCost := 0
		if off == 0 && inl == 0 {
			entry = diffFileOf(fd, r.NameOnly)
			entryCost = Cost(entry)
		}
		lastFile := i == len(changes)-1
		take, cut := 0, 0
		// alone is the last line printed alone, kept for the next page
		// if this one is cut at or inside it.
		var alone *heldLine
		for take < len(text) {
			var end int
			if h := kept.lineAt(off + take); h != nil {
				end = h.end - off
			} else if end = strings.IndexByte(text[take:], '\n'); end < 0 {
				end = len(text)
			} else {
				end += take + 1
			}
			line := text[take:end]
			// A line costs at least its length as JSON: one longer than
			// the room is not scanned (a 5.5 MB line, on every page of it).
			cost := -1
			if inl == 0 && len(line)+entryCost <= room {
				cost = StringCost(line) - 2 + entryCost
			}
			if cost >= 0 && cost <= room {
				if !budget.Take(cost) {
					// The end of the whole diff is trimmed: a tail of
					// blank lines goes with this page, or the next page
					// would be an extra "\n" that the whole diff lacks.
					if lastFile && diff.Blank(text[take:]) {
						p.raw.WriteString(text[take:])
						take = len(text)
					}
					break
				}
				if take == 0 && entry != nil {
					res.Files = append(res.Files, *entry)
				}
				shown(i)
				p.raw.WriteString(line)
				entryCost, take = 0, end
				continue
			}
			// A line longer than an empty page (or the rest of one
			// cut on the page before) is cut inside its printed form.
			if lastFile && diff.Blank(text[take:]) {
				p.raw.WriteString(text[take:])
				take = len(text)
				break
			}
			tail := lastFile && diff.Blank(text[end:])
			src := line
			if tail {
				src = text[take:]
			}
			first := i == 0 && off+take == 0
			if h := kept.lineAt(off + take); h != nil && h.first == first && h.tail == tail {
				alone = h
			} else {
				alone = &heldLine{at: off + take, end: off + end, first: first, tail: tail, printed: diff.Print(src, first, tail)}
			}
			printed := alone.printed
			if inl >= len(printed) || !utf8.RuneStart(printed[inl]) {
				return nil, errDiffCursor
			}
			n := fitJSON(printed[inl:], budget.Left()-entryCost)
			if n == 0 && budget.items > 0 {
				break // the next page starts with this line
			}
			if n == 0 {
				_, n = utf8.DecodeRuneInString(printed[inl:])
			}
			budget.Take(StringCost(printed[inl:inl+n]) - 2 + entryCost)
			if take == 0 && entry != nil {
				res.Files = append(res.Files, *entry)
			}
			shown(i)
			entryCost = 0
			p.flush(false)
			p.out.WriteString(printed[inl : inl+n])
			if inl+n < len(printed) {
				cut = inl + n
				break
			}
			inl = 0
			if take = end; tail {
				take, p.ended = len(text), true
			}
		}
		if take < len(text) {
			if alone != nil && alone.at != off+take {
				alone = nil
			}
			if off+take+cut > 0 { // a cut at the file's start renders it anew
				pair.keepRender(s, fd, opts, alone, kept != nil)
			}
			cutAt(diffCursor{i, off + take, cut}, TruncMaxBytes)
			break
		}
	}
	p.flush(!res.Truncated && !p.ended)
	res.Diff = p.out.String()
	return res, nil
}

// diffFilterNote says when include/exclude selected no file of either
// version, as grep does, so that an empty diff is not read as "no change".
func diffFilterNote(oldFiles, newFiles []store.File, keep func(string) bool) []string {
	paths := map[string]bool{}
	for _, fs := range [][]store.File{oldFiles, newFiles} {
		for _, f := range fs {
			if keep(f.Path) {
				return nil
			}
			paths[f.Path] = true
		}
	}
	return []string{fmt.Sprintf("include/exclude selected none of the %s of either version; a pattern starting with '*' matches file names in any folder (e.g. '*.d.ts'), others the path from the package root (e.g. 'dist/**/*.js'), and a plain path selects what starts with it (e.g. 'lib')", english.Count(len(paths), "file"))}
}

var errDiffCursor = &InputError{Field: "cursor", Err: errors.New("does not match this diff: send the answer's next request as it is")}

// diffPager builds a page's text: whole lines (raw) go through diff.Print
// together, as the whole diff does; a line cut inside is printed alone
// and its part written as it is.
type diffPager struct {
	raw, out strings.Builder
	// first: the page starts the diff, whose start Print trims; ended:
	// the diff's last line was printed, with its end.
	first, ended bool
}

// flush prints the whole lines held; last ends the diff.
func (p *diffPager) flush(last bool) {
	if p.raw.Len() == 0 && !last {
		return
	}
	p.out.WriteString(diff.Print(p.raw.String(), p.first && p.out.Len() == 0, last))
	p.raw.Reset()
}

// fitJSON is the length of s's longest prefix that ends at a rune
// boundary and costs at most n bytes as part of a JSON string.
func fitJSON(s string, n int) int {
	used := 0
	for i := 0; i < len(s); {
		c, size := runeCost(s, i)
		if used+c > n {
			return i
		}
		used += c
		i += size
	}
	return len(s)
}

// countStatuses is TotalByStatus: how many changes have each status.
func countStatuses(changes []diff.Change) map[string]int {
	if len(changes) == 0 {
		return nil
	}
	n := map[string]int{}
	for _, c := range changes {
		n[string(c.Status)]++
	}
	return n
}

// TruncDiffWork: a diff page ended at a file boundary because its line
// diffs spent max-diff-page-work.
const TruncDiffWork = "diffWork"

// Bytes is the file's size as a list shows it: "12.4 KB" for an added
// or deleted file, "12.4 KB → 13.0 KB" for a modified one.
func (f DiffFile) Bytes() string {
	switch {
	case f.OldBytes != nil && f.NewBytes != nil:
		return english.Bytes(*f.OldBytes) + " → " + english.Bytes(*f.NewBytes)
	case f.NewBytes != nil:
		return english.Bytes(*f.NewBytes)
	case f.OldBytes != nil:
		return english.Bytes(*f.OldBytes)
	}
	return ""
}

func diffFileOf(fd diff.FileDiff, nameOnly bool) *DiffFile {
	e := &DiffFile{Path: fd.Path, Status: string(fd.Status)}
	if fd.Old != nil {
		e.OldBytes = &fd.Old.Size
	}
	if fd.New != nil {
		e.NewBytes = &fd.New.Size
	}
	if !nameOnly && !fd.TooComplex {
		a, r := fd.Added, fd.Removed
		e.Added, e.Removed = &a, &r
	}
	if fd.TooComplex {
		e.Note = "too many changed lines to compare within max-diff-work: hunks not shown; read or grep the file in each version to compare"
	}
	return e
}

// renderChange reads c's bodies through the chain and renders it.
func (s *Service) renderChange(ctx context.Context, pkgs Versions, oldV, newV *Opened, c diff.Change, o diff.Options) (diff.FileDiff, error) {
	var oldBody, newBody []byte
	var err error
	if c.Old != nil {
		if _, oldBody, _, err = pkgs.Body(ctx, oldV, *c.Old); err != nil {
			return diff.FileDiff{}, fmt.Errorf("reading %s from %s@%s: %w", c.Path, oldV.Name, oldV.Version, err)
		}
	}
	if c.New != nil {
		if _, newBody, _, err = pkgs.Body(ctx, newV, *c.New); err != nil {
			return diff.FileDiff{}, fmt.Errorf("reading %s from %s@%s: %w", c.Path, newV.Name, newV.Version, err)
		}
	}
	return diff.Render(c, oldBody, newBody, oldV.Version, newV.Version, o), nil
}

// diffSpec parses from or to; both are required.
func diffSpec(field, raw string) (npmspec.Spec, error) {
	if strings.TrimSpace(raw) == "" {
		return npmspec.Spec{}, &InputError{Field: field, Err: errors.New(`missing: give a version, range or dist-tag, e.g. "1.2.0"`)}
	}
	spec, err := npmspec.ParseSpec(raw)
	if err != nil {
		return npmspec.Spec{}, &InputError{Field: field, Err: err}
	}
	return spec, nil
}

// openDiffSide opens one version; a spec that resolves to nothing is a
// 404 naming the field and the nearest published versions, an unknown
// package one naming the closest package names.
func (s *Service) openDiffSide(ctx context.Context, pkgs Versions, name, field string, spec npmspec.Spec) (*Opened, error) {
	o, err := pkgs.Open(ctx, name, spec)
	switch {
	case errors.Is(err, semver.ErrNoMatch):
		nf := &NotFoundError{What: fmt.Sprintf("version of %s matching %s %q", name, field, spec.Raw)}
		if p, perr := pkgs.Packument(ctx, name); perr == nil {
			versions := slices.Collect(maps.Keys(p.Versions))
			near := closest.Strings(spec.Raw, versions, maxSuggestions)
			nf.Hint = fmt.Sprintf("%s: latest is %s; nearest versions: %s", field, p.DistTags["latest"], strings.Join(near, ", "))
		}
		return nil, nf
	case errors.Is(err, upstream.ErrNotFound):
		err = s.unknownPackage(ctx, name, err)
		var nf *NotFoundError
		if errors.As(err, &nf) {
			nf.What = field + ": " + nf.What
		}
		return nil, err
	case err != nil:
		return nil, err
	}
	return o, nil
}
