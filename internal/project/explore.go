package project

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/pathglob"
	"github.com/pkgscope/pkgscope/internal/pkgpath"
	"github.com/pkgscope/pkgscope/internal/store"
)

// Reader is what exploring a project needs of the explore service: every
// package read goes through its read chain, access check first.
type Reader interface {
	// StoredVersion returns a stored version's files, never filling.
	StoredVersion(ctx context.Context, name, version string) (*explore.Opened, error)
	// SearchIn greps an opened version.
	SearchIn(ctx context.Context, o *explore.Opened, q index.Query) (*explore.Searched, error)
	// Read reads lines of one file of a version (filling it if needed).
	Read(ctx context.Context, r explore.Request) (*explore.ReadResult, error)
}

// Explorer answers explore_npm over a project's node_modules tree
// (explore.ProjectExplorer).
type Explorer struct {
	svc  *Service
	rd   Reader
	glob pathglob.Limits
	// answerBytes is the default budget of a list, glob or grep answer,
	// maxAnswerBytes the most a caller may ask for (maxBytes).
	answerBytes, maxAnswerBytes int
	defaultMatches, maxMatches  int
}

// ExplorerLimits are the explore service's own caps, so a project answer
// is bounded like a package's; the byte budgets are the project's
// Limits.
type ExplorerLimits struct {
	Glob                       pathglob.Limits
	DefaultMatches, MaxMatches int
}

// NewExplorer returns an Explorer over svc's projects, reading packages
// through rd.
func NewExplorer(svc *Service, rd Reader, lim ExplorerLimits) *Explorer {
	return &Explorer{svc: svc, rd: rd, glob: lim.Glob, answerBytes: svc.lim.AnswerBytes, maxAnswerBytes: svc.lim.MaxAnswerBytes,
		defaultMatches: lim.DefaultMatches, maxMatches: lim.MaxMatches}
}

// ListAnswer answers list and glob over a project.
type ListAnswer struct {
	Project string `json:"project"`
	// Files are project paths in byte order.
	Files []string `json:"files"`
	// Complete is false when packages the answer should cover were not
	// warm yet: Pending names their folders (ask again, or GET
	// /v1/projects/{id}).
	Complete bool     `json:"complete"`
	Pending  []string `json:"pending,omitempty"`
	// Truncated says the budget (maxBytes) cut the answer; Next is the
	// complete request that continues it.
	Truncated bool             `json:"truncated"`
	Next      *explore.Request `json:"next,omitempty"`
}

// GrepMatch is one matching line of a project file.
type GrepMatch struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Text   string `json:"text,omitempty"`
}

// PackageCount is outputMode count: matching lines per package folder.
type PackageCount struct {
	Path    string `json:"path"`
	Package string `json:"package"`
	Version string `json:"version"`
	Direct  bool   `json:"direct,omitempty"`
	Matches int    `json:"matches"`
}

// GrepAnswer answers grep over a project. Direct dependencies are
// searched first, then the others, each in path order.
type GrepAnswer struct {
	Project          string           `json:"project"`
	OutputMode       string           `json:"outputMode"`
	Matches          []GrepMatch      `json:"matches,omitempty"`
	Files            []string         `json:"files,omitempty"`
	Counts           []PackageCount   `json:"counts,omitempty"`
	PackagesSearched int              `json:"packagesSearched"`
	Complete         bool             `json:"complete"`
	Pending          []string         `json:"pending,omitempty"`
	Truncated        bool             `json:"truncated"`
	TruncatedBy      string           `json:"truncatedBy,omitempty"`
	Next             *explore.Request `json:"next,omitempty"`
}

// ExploreProject implements explore.ProjectExplorer.
func (x *Explorer) ExploreProject(ctx context.Context, r explore.Request) (any, error) {
	p, err := x.svc.Open(ctx, r.Project)
	if err != nil {
		return nil, err
	}
	budget := x.answerBytes
	if r.MaxBytes > 0 {
		budget = min(r.MaxBytes, x.maxAnswerBytes)
	}
	switch r.Action {
	case "list":
		return x.list(ctx, p, r, nil, budget)
	case "glob":
		if len(r.Patterns) == 0 {
			return nil, &explore.InputError{Field: "patterns", Err: errors.New(`give at least one glob, e.g. ["node_modules/@types/**/*.d.ts"]`)}
		}
		m, err := pathglob.Compile(r.Patterns, x.glob)
		if err != nil {
			return nil, &explore.InputError{Field: "patterns", Err: err}
		}
		return x.list(ctx, p, r, m, budget)
	case "read":
		return x.read(ctx, p, r)
	case "grep":
		return x.grep(ctx, p, r, budget)
	}
	return nil, &explore.InputError{Field: "action", Err: fmt.Errorf("%q over a project: use list, glob, read or grep (diff takes a packageName)", r.Action)}
}

// opened is a warm package of the project.
type opened struct {
	pp store.ProjectPackage
	o  *explore.Opened
}

// open returns the project's warm packages (in folder order) and the
// folders of the registry packages not warm yet. It waits up to the
// project-wait budget for pending ones when wait is set.
func (x *Explorer) open(ctx context.Context, p store.Project, wait bool) ([]opened, []string, error) {
	var deadline time.Time
	if wait && x.svc.lim.Wait > 0 {
		deadline = time.Now().Add(x.svc.lim.Wait)
	}
	todo := slices.Clone(p.Packages)
	var warm []opened
	for {
		var pending []store.ProjectPackage
		for _, pp := range todo {
			if !warmable(pp) {
				continue
			}
			o, err := x.rd.StoredVersion(ctx, pp.Package, pp.Version)
			switch {
			case err == nil:
				warm = append(warm, opened{pp, o})
			case errors.Is(err, store.ErrNotFound):
				pending = append(pending, pp)
			default:
				return nil, nil, fmt.Errorf("project %s: %s: %w", p.ID, pp.Path, err)
			}
		}
		if len(pending) == 0 || deadline.IsZero() || !time.Now().Before(deadline) {
			slices.SortFunc(warm, func(a, b opened) int { return cmp.Compare(a.pp.Path, b.pp.Path) })
			paths := make([]string, len(pending))
			for i, pp := range pending {
				paths[i] = pp.Path
			}
			return warm, paths, nil
		}
		// The warm queue settles a package in well under a second; a
		// quarter second between looks costs a few store reads.
		t := time.NewTimer(min(250*time.Millisecond, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, ctx.Err()
		case <-t.C:
		}
		todo = pending
	}
}

// list answers list and glob: every file of every warm package, as
// project paths in byte order, from the cursor on.
func (x *Explorer) list(ctx context.Context, p store.Project, r explore.Request, m *pathglob.Matcher, budget int) (*ListAnswer, error) {
	warm, pending, err := x.open(ctx, p, false)
	if err != nil {
		return nil, err
	}
	var all []string
	for _, w := range warm {
		for _, f := range w.o.Files {
			path := w.pp.Path + "/" + f.Path
			if path > r.Cursor && (m == nil || m.Match(path)) {
				all = append(all, path)
			}
		}
	}
	slices.Sort(all)
	ans := &ListAnswer{Project: p.ID, Files: []string{}, Complete: len(pending) == 0, Pending: pending}
	used := 0
	for _, path := range all {
		if used+len(path)+1 > budget && len(ans.Files) > 0 {
			ans.Truncated = true
			next := r
			next.Cursor = ans.Files[len(ans.Files)-1]
			ans.Next = &next
			break
		}
		used += len(path) + 1
		ans.Files = append(ans.Files, path)
	}
	return ans, nil
}

// folderOf splits a project path into the package folder holding it and
// the path inside the package: the longest folder that is a prefix.
func folderOf(p store.Project, path string) (store.ProjectPackage, string, bool) {
	for i := len(path); i > 0; i = strings.LastIndex(path[:i], "/") {
		folder := path[:i]
		j, ok := slices.BinarySearchFunc(p.Packages, folder, func(pp store.ProjectPackage, f string) int { return cmp.Compare(pp.Path, f) })
		if ok && i < len(path) {
			return p.Packages[j], path[i+1:], true
		}
	}
	return store.ProjectPackage{}, "", false
}

// read reads one file of a project: the package at the longest folder
// prefix of the path, read through the explore service (filling it if it
// is not warm: one package is a short wait).
func (x *Explorer) read(ctx context.Context, p store.Project, r explore.Request) (*explore.ReadResult, error) {
	path, err := pkgpath.CleanQuery(r.Path)
	if err != nil {
		return nil, &explore.InputError{Field: "path", Err: err}
	}
	pp, rest, ok := folderOf(p, path)
	if !ok {
		return nil, &explore.NotFoundError{What: fmt.Sprintf("package folder holding %q in project %s (paths start with node_modules/<name>/; list or glob the project to see them)", path, p.ID)}
	}
	if !warmable(pp) {
		return nil, &explore.NotFoundError{What: fmt.Sprintf("files of %s: it is a %s dependency (%s), which the mirror does not serve", pp.Path, pp.Kind, pp.Reason)}
	}
	res, err := x.rd.Read(ctx, explore.Request{Action: "read", PackageName: pp.Package, Version: pp.Version,
		Path: rest, Offset: r.Offset, Limit: r.Limit, Column: r.Column, MaxBytes: r.MaxBytes, Cursor: r.Cursor})
	if err != nil || res.Next == nil {
		return res, err
	}
	// The package's next, in project terms.
	next := *res.Next
	next.PackageName, next.Version, next.Project = "", "", r.Project
	next.Path = pp.Path + "/" + next.Path
	res.Next = &next
	return res, nil
}

// grepCursor is where a cut grep stops: the package folder and the last
// file of it whose matches were all answered. It names the folder, not a
// rank, so packages that turn warm between pages do not shift it.
type grepCursor struct {
	direct bool
	folder string
	file   string
}

// parseGrepCursor reads "<1|0>|<folder>|<file>" ("|" is in no npm name).
func parseGrepCursor(s string) (grepCursor, bool, error) {
	if s == "" {
		return grepCursor{}, false, nil
	}
	d, rest, ok1 := strings.Cut(s, "|")
	folder, file, ok2 := strings.Cut(rest, "|")
	if !ok1 || !ok2 || (d != "0" && d != "1") || folder == "" {
		return grepCursor{}, false, &explore.InputError{Field: "cursor", Err: errors.New("not a cursor this server wrote: send the answer's next request as is")}
	}
	return grepCursor{d == "1", folder, file}, true, nil
}

func (c grepCursor) String() string {
	return strconv.Itoa(b2i(c.direct)) + "|" + c.folder + "|" + c.file
}

// rank orders packages for grep: direct dependencies first, then by path.
func rank(direct bool, path string, b store.ProjectPackage) int {
	return cmp.Or(-cmp.Compare(b2i(direct), b2i(b.Direct)), cmp.Compare(path, b.Path))
}

// grep searches every warm package, direct dependencies first, each
// through its own index, and joins the answers in project paths.
func (x *Explorer) grep(ctx context.Context, p store.Project, r explore.Request, budget int) (*GrepAnswer, error) {
	if r.Pattern == "" {
		return nil, &explore.InputError{Field: "pattern", Err: errors.New("give a pattern (an RE2 regular expression, or a literal with fixedStrings)")}
	}
	mode := cmp.Or(r.OutputMode, "content")
	if mode != "content" && mode != "files_with_matches" && mode != "count" {
		return nil, &explore.InputError{Field: "outputMode", Err: fmt.Errorf("%q: use content, files_with_matches or count", r.OutputMode)}
	}
	maxMatches := cmp.Or(r.MaxMatches, x.defaultMatches)
	if x.maxMatches > 0 && maxMatches > x.maxMatches {
		return nil, &explore.LimitError{Setting: "max-matches", Msg: fmt.Sprintf("maxMatches %d is above the most one grep returns (%d)", maxMatches, x.maxMatches)}
	}
	globs := append([]string(nil), r.Include...)
	for _, g := range r.Exclude {
		globs = append(globs, "!"+g)
	}
	m, err := pathglob.Compile(globs, x.glob)
	if err != nil {
		return nil, &explore.InputError{Field: "include", Err: err}
	}
	cur, resume, err := parseGrepCursor(r.Cursor)
	if err != nil {
		return nil, err
	}
	warm, pending, err := x.open(ctx, p, true)
	if err != nil {
		return nil, err
	}
	// Direct dependencies first: the package a caller names in its own
	// code is the likeliest to hold what it looks for.
	slices.SortStableFunc(warm, func(a, b opened) int { return rank(a.pp.Direct, a.pp.Path, b.pp) })
	ans := &GrepAnswer{Project: p.ID, OutputMode: mode, Complete: len(pending) == 0, Pending: pending}
	used, count := 0, 0
	cut := func(c grepCursor, by string) {
		ans.Truncated, ans.TruncatedBy = true, by
		next := r
		next.Cursor = c.String()
		ans.Next = &next
	}
	for _, w := range warm {
		after := ""
		if resume {
			switch c := rank(cur.direct, cur.folder, w.pp); {
			case c > 0:
				continue // answered on an earlier page
			case c == 0:
				after = cur.file
			}
		}
		q := index.Query{Pattern: r.Pattern, CaseInsensitive: r.CaseInsensitive, FixedStrings: r.FixedStrings,
			WholeWord: r.WholeWord, MaxMatches: x.maxMatches, MaxMatchesPerFile: r.MaxMatchesPerFile}
		folder := w.pp.Path + "/"
		q.Filter = func(path string) bool { return path > after && (m.Empty() || m.Match(folder+path)) }
		sr, err := x.rd.SearchIn(ctx, w.o, q)
		if err != nil {
			return nil, fmt.Errorf("grep in %s: %w", w.pp.Path, err)
		}
		ans.PackagesSearched++
		res := sr.Result
		if mode == "count" {
			if len(res.Matches) > 0 {
				ans.Counts = append(ans.Counts, PackageCount{Path: w.pp.Path, Package: w.pp.Package, Version: w.pp.Version, Direct: w.pp.Direct, Matches: len(res.Matches)})
			}
			continue
		}
		// Answer whole files: a cut always falls between two files, so
		// the next request resumes after the last one answered.
		for start := 0; start < len(res.Matches); {
			end := start
			for end < len(res.Matches) && res.Matches[end].File == res.Matches[start].File {
				end++
			}
			file := folder + res.Matches[start].File
			cost := len(file) + 1
			if mode == "content" {
				for _, mt := range res.Matches[start:end] {
					cost += len(mt.Text) + 16
				}
			}
			n := end - start
			if mode == "files_with_matches" {
				n = 1
			}
			if (used+cost > budget || count+n > maxMatches) && used > 0 {
				by := "maxBytes"
				if count+n > maxMatches {
					by = "maxMatches"
				}
				prev := after
				if start > 0 {
					prev = res.Matches[start-1].File
				}
				cut(grepCursor{w.pp.Direct, w.pp.Path, prev}, by)
				return ans, nil
			}
			used += cost
			count += n
			if mode == "files_with_matches" {
				ans.Files = append(ans.Files, file)
			} else {
				for _, mt := range res.Matches[start:end] {
					ans.Matches = append(ans.Matches, GrepMatch{File: file, Line: mt.Line, Column: mt.Column, Text: mt.Text})
				}
			}
			start = end
		}
		if res.Truncated {
			// The package's own search hit a cap: say so rather than
			// answer silently short.
			ans.Truncated, ans.TruncatedBy = true, w.pp.Path+": "+res.TruncatedBy
		}
	}
	return ans, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
