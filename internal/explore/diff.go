package explore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/pkgscope/pkgscope/internal/closest"
	"github.com/pkgscope/pkgscope/internal/diff"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/pathglob"
	"github.com/pkgscope/pkgscope/internal/semver"
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
	// Truncated says the diff goes on: TruncatedBy names the budget
	// ("maxBytes") and Next is the request for the next page.
	Truncated   bool     `json:"truncated"`
	TruncatedBy string   `json:"truncatedBy,omitempty"`
	Next        *Request `json:"next,omitempty"`
}

// DiffFile is one changed file.
type DiffFile struct {
	Path   string `json:"path"`
	Status string `json:"status"` // added, deleted, modified
	// Added and Removed count the diff's "+" and "-" lines (not given
	// with nameOnly, which does not diff lines).
	Added   *int `json:"added,omitempty"`
	Removed *int `json:"removed,omitempty"`
	// Note says why a file's hunks are missing (too many changed lines
	// to compare within max-diff-work).
	Note string `json:"note,omitempty"`
}

// DiffDefaultContext is npm diff's --diff-unified default.
const DiffDefaultContext = 3

// diffCursor is where a page starts: the index of a changed file in npm
// diff's order and a byte offset into its text (at a line start).
type diffCursor struct{ file, offset int }

func (c diffCursor) String() string {
	return "diff:" + strconv.Itoa(c.file) + ":" + strconv.Itoa(c.offset)
}

func parseDiffCursor(s string) (diffCursor, error) {
	if s == "" {
		return diffCursor{}, nil
	}
	bad := &InputError{Field: "cursor", Err: errors.New("not a diff cursor: send the answer's next request as it is")}
	rest, ok := strings.CutPrefix(s, "diff:")
	a, b, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return diffCursor{}, bad
	}
	f, err1 := strconv.Atoi(a)
	o, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || f < 0 || o < 0 {
		return diffCursor{}, bad
	}
	return diffCursor{f, o}, nil
}

// Diff answers the diff action: what changed between two versions of a
// package, as npm diff prints it, a page of at most the byte budget.
//
// Both versions are read from the store (after a fill when needed) and
// never from the fallback: npm diff's order and modes come from the
// tarball, which only the store keeps. Files whose sha256 and mode agree
// are skipped without reading their bodies.
func (s *Service) Diff(ctx context.Context, r Request) (*DiffResult, error) {
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
	include, err := diff.NewFilter(r.Include)
	if err != nil {
		return nil, &InputError{Field: "include", Err: err}
	}
	var exclude *pathglob.Matcher
	if len(r.Exclude) > 0 {
		if exclude, err = pathglob.Compile(r.Exclude, s.lim.Glob); err != nil {
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
	changes := diff.Changes(oldV.Files, newV.Files, keep)
	if cur.file > len(changes) {
		return nil, &InputError{Field: "cursor", Err: errors.New("past the end of this diff: send the answer's next request as it is")}
	}

	opts := diff.Options{
		NameOnly: r.NameOnly, Context: ctxLines, IgnoreAllSpace: r.IgnoreAllSpace,
		NoPrefix: r.NoPrefix, SrcPrefix: r.SrcPrefix, DstPrefix: r.DstPrefix, Text: r.Text, MaxWork: s.lim.DiffMaxWork,
	}
	res := &DiffResult{PackageName: r.PackageName, From: oldV.Version, To: newV.Version, Files: []DiffFile{}}
	// The header and a next request are reserved before any text.
	budget.Reserve(Cost(res) + 2*Cost(r) + 256)
	var page strings.Builder
	first := cur.file == 0 && cur.offset == 0
	i, off := cur.file, cur.offset
	for ; i < len(changes); i, off = i+1, 0 {
		fd, err := s.renderChange(ctx, pkgs, oldV, newV, changes[i], opts)
		if err != nil {
			return nil, err
		}
		if off > len(fd.Text) {
			return nil, &InputError{Field: "cursor", Err: errors.New("does not match this diff: send the answer's next request as it is")}
		}
		text := fd.Text[off:]
		if text == "" {
			continue
		}
		// The items are lines; a file's entry in Files is charged with
		// its first line. Budget.Take always takes a page's first item,
		// so paging advances.
		var entry *DiffFile
		entryCost := 0
		if off == 0 {
			entry = diffFileOf(fd, r.NameOnly)
			entryCost = Cost(entry)
		}
		take := 0
		for take < len(text) {
			end := strings.IndexByte(text[take:], '\n')
			if end < 0 {
				end = len(text)
			} else {
				end += take + 1
			}
			if !budget.Take(StringCost(text[take:end]) - 2 + entryCost) {
				// The end of the whole diff is trimmed: a tail of blank
				// lines goes with this page, or the next page would be
				// an extra "\n" that the whole diff does not have.
				if i == len(changes)-1 && diff.Blank(text[take:]) {
					take = len(text)
				}
				break
			}
			if take == 0 && entry != nil {
				res.Files = append(res.Files, *entry)
			}
			entryCost, take = 0, end
		}
		page.WriteString(text[:take])
		if take < len(text) {
			off += take
			res.Truncated, res.TruncatedBy = true, TruncMaxBytes
			next := r
			next.Version, next.From, next.To = "", oldV.Version, newV.Version
			next.Cursor = diffCursor{i, off}.String()
			res.Next = &next
			break
		}
	}
	res.Diff = diff.Print(page.String(), first, !res.Truncated)
	return res, nil
}

func diffFileOf(fd diff.FileDiff, nameOnly bool) *DiffFile {
	e := &DiffFile{Path: fd.Path, Status: string(fd.Status)}
	if !nameOnly {
		a, r := fd.Added, fd.Removed
		e.Added, e.Removed = &a, &r
	}
	if fd.TooComplex {
		e.Note = "too many changed lines to compare within max-diff-work: hunks not shown"
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

// MaxAnswerBytes is the largest page a request may ask for (the REST
// diff's page).
func (s *Service) MaxAnswerBytes() int { return s.lim.MaxAnswerBytes }
