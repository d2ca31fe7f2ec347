package project

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
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
// package read goes through its read chain, access check first, and every
// answer is budgeted as a package's is (explore's page.go).
type Reader interface {
	// Versions is the read chain: a project asks it for a stored
	// version's files (Stored, never filling) and greps them (Search).
	Versions() explore.Versions
	// Read reads lines of one file of a version (filling it if needed).
	Read(ctx context.Context, r explore.Request) (*explore.ReadResult, error)
	// Budget is the byte budget of one answer (maxBytes, answer-bytes,
	// max-answer-bytes).
	Budget(maxBytes int, read bool) (*explore.Budget, error)
}

// Explorer answers explore_npm over a project's node_modules tree
// (explore.ProjectExplorer).
type Explorer struct {
	svc *Service
	rd  Reader
	lim ExplorerLimits
}

// ExplorerLimits are the explore service's own caps, so a project answer
// is bounded like a package's.
type ExplorerLimits struct {
	Glob                       pathglob.Limits
	DefaultMatches, MaxMatches int
}

// NewExplorer returns an Explorer over svc's projects, reading packages
// through rd.
func NewExplorer(svc *Service, rd Reader, lim ExplorerLimits) *Explorer {
	return &Explorer{svc: svc, rd: rd, lim: lim}
}

// maxNamed is how many pending or failed folders an answer names; the
// counts say how many there are, GET /v1/projects/{id} lists them all.
const maxNamed = 20

// FailedPackage is a folder whose files no answer can hold, and why: its
// ingest failed, or it is not a registry package (git, file:, link).
type FailedPackage struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// coverage is which folders an answer could not cover: pending ones (not
// warm yet: ask again) and failed ones (never: the reason says why).
// noLockfile is a project registered from its package.json alone, whose
// ranges install nothing: no folder to cover at all.
type coverage struct {
	pending    []string
	failed     []FailedPackage
	noLockfile bool
}

// noLockfileNote says what a project registered from a package.json
// alone holds, and what to do: an answer over it searched nothing, and
// must say so rather than report an empty, complete success.
const noLockfileNote = "this project has a package.json but no lockfile (package-lock.json, npm-shrinkwrap.json, pnpm-lock.yaml, " +
	"yarn.lock or bun.lock), so no dependency has an installed version and no file was searched: " +
	"create a lockfile in the project folder with `npm install --package-lock-only` (it resolves versions without installing), " +
	"or pass packageName (and version) to explore one package"

// Fields fills an answer's coverage fields.
func (c coverage) fill(a *explore.Answer, complete *bool, pending *[]string, pendingCount *int, failed *[]FailedPackage, failedCount *int) {
	*complete = len(c.pending) == 0 && len(c.failed) == 0 && !c.noLockfile
	if c.noLockfile {
		a.Note("%s", noLockfileNote)
	}
	*pending, *pendingCount = c.pending[:min(len(c.pending), maxNamed)], len(c.pending)
	*failed, *failedCount = c.failed[:min(len(c.failed), maxNamed)], len(c.failed)
	if len(c.pending) > maxNamed || len(c.failed) > maxNamed {
		a.Note("only the first %d pending and failed folders are named; GET /v1/projects/%s lists every folder's state", maxNamed, a.Project)
	}
}

// ListAnswer answers list and glob over a project: a package's list
// answer (every file as a project path, in byte order, paged the same
// way) and which folders it could not cover.
type ListAnswer struct {
	explore.ListResult
	// Complete is false when folders are missing from the answer: Pending
	// are not warm yet (ask again), Failed never will be (with the
	// reason). Each names at most 20; the counts are all of them.
	Complete     bool            `json:"complete"`
	Pending      []string        `json:"pending,omitempty"`
	PendingCount int             `json:"pendingCount,omitempty"`
	Failed       []FailedPackage `json:"failed,omitempty"`
	FailedCount  int             `json:"failedCount,omitempty"`
}

// PackageCount is outputMode count: matching lines per package folder.
type PackageCount struct {
	Path    string `json:"path"`
	Package string `json:"package"`
	Version string `json:"version"`
	Direct  bool   `json:"direct,omitempty"`
	Matches int    `json:"matches"`
}

// GrepAnswer answers grep over a project: a package's grep answer (the
// same matches and files, paged the same way) in project paths. Direct
// dependencies are searched first, then the others, each in folder order,
// then file and line. outputMode count counts per package (Counts).
type GrepAnswer struct {
	explore.GrepResult
	Counts []PackageCount `json:"counts,omitempty"`
	// PackagesSearched counts the packages this page searched.
	PackagesSearched int             `json:"packagesSearched"`
	Complete         bool            `json:"complete"`
	Pending          []string        `json:"pending,omitempty"`
	PendingCount     int             `json:"pendingCount,omitempty"`
	Failed           []FailedPackage `json:"failed,omitempty"`
	FailedCount      int             `json:"failedCount,omitempty"`
}

// ExploreProject implements explore.ProjectExplorer.
func (x *Explorer) ExploreProject(ctx context.Context, r explore.Request) (any, error) {
	p, err := x.svc.Open(ctx, r.Project)
	if err != nil {
		return nil, err
	}
	switch r.Action {
	case "list":
		return x.list(ctx, p, r, nil)
	case "glob":
		if len(r.Patterns) == 0 {
			return nil, &explore.InputError{Field: "patterns", Err: errors.New(`give at least one glob, e.g. ["node_modules/@types/**/*.d.ts"]`)}
		}
		m, err := pathglob.Compile(r.Patterns, x.lim.Glob)
		if err != nil {
			return nil, &explore.InputError{Field: "patterns", Err: err}
		}
		return x.list(ctx, p, r, m)
	case "read":
		return x.read(ctx, p, r)
	case "grep":
		return x.grep(ctx, p, r)
	}
	return nil, &explore.InputError{Field: "action", Err: fmt.Errorf("%q over a project: use list, glob, read or grep (diff takes a packageName)", r.Action)}
}

// opened is a warm package of the project.
type opened struct {
	pp store.ProjectPackage
	o  *explore.Opened
}

// open returns the project's warm packages (in folder order) and the
// folders it cannot answer from: pending (not in the store yet) and failed
// (their ingest failed, or they are not registry packages). With wait it
// waits up to the project-wait budget for pending ones only: a failed
// package is not going to turn warm while a grep waits.
//
// States are read from the store only for versions not remembered as
// ready (Service.ready): reading all 406 states of a mid-size app on every
// grep was 14% of a warm project grep's CPU. A remembered version is still
// opened (Stored, from the cache), so one that left the store since
// (re-ingested under a new format) is seen missing, forgotten and read
// again; pending and failed ones are read every time, since a fill can
// turn either ready at any moment.
func (x *Explorer) open(ctx context.Context, p store.Project, wait bool) ([]opened, coverage, error) {
	var deadline time.Time
	if wait && x.svc.lim.Wait > 0 {
		deadline = time.Now().Add(x.svc.lim.Wait)
	}
	cov := coverage{noLockfile: noLockfile(p)}
	var todo []store.ProjectPackage
	for _, pp := range p.Packages {
		if warmable(pp) {
			todo = append(todo, pp)
		} else {
			cov.failed = append(cov.failed, FailedPackage{Path: pp.Path, Reason: skipReason(pp)})
		}
	}
	var warm []opened
	for {
		states, err := x.svc.unknownStates(ctx, todo)
		if err != nil {
			return nil, coverage{}, fmt.Errorf("project %s: %w", p.ID, err)
		}
		var pending []store.ProjectPackage
		for _, pp := range todo {
			k := store.VersionKey{Name: pp.Package, Version: pp.Version}
			v, ok := states[k]
			switch {
			case ok && v.State == store.StateFailed:
				cov.failed = append(cov.failed, FailedPackage{Path: pp.Path, Reason: "its ingest failed: " + v.Reason})
				continue
			case !ok || v.State != store.StateReady:
				pending = append(pending, pp)
				continue
			}
			o, err := x.rd.Versions().Stored(ctx, pp.Package, pp.Version)
			switch {
			case err == nil:
				x.svc.ready.Add(k, struct{}{}, 1)
				warm = append(warm, opened{pp, o})
			case errors.Is(err, store.ErrNotFound):
				x.svc.ready.Remove(k)
				pending = append(pending, pp)
			default:
				return nil, coverage{}, fmt.Errorf("project %s: %s: %w", p.ID, pp.Path, err)
			}
		}
		if len(pending) == 0 || deadline.IsZero() || !time.Now().Before(deadline) {
			slices.SortFunc(warm, func(a, b opened) int { return cmp.Compare(a.pp.Path, b.pp.Path) })
			for _, pp := range pending {
				cov.pending = append(cov.pending, pp.Path)
			}
			slices.SortFunc(cov.failed, func(a, b FailedPackage) int { return cmp.Compare(a.Path, b.Path) })
			return warm, cov, nil
		}
		// The warm queue settles a package in well under a second; a
		// quarter second between looks costs one batched store read.
		t := time.NewTimer(min(250*time.Millisecond, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, coverage{}, ctx.Err()
		case <-t.C:
		}
		todo = pending
	}
}

// noLockfile reports whether p was registered from a package.json alone
// (lockfile.Find falls back to it; lockfile.Tree lays out nothing for it).
func noLockfile(p store.Project) bool { return p.Format == "package.json" && len(p.Packages) == 0 }

// skipReason says why a folder that is not a registry package has no files.
func skipReason(pp store.ProjectPackage) string {
	why := pp.Kind + " dependency: the mirror serves registry packages only"
	if pp.Reason != "" {
		why += " (" + pp.Reason + ")"
	}
	return why
}

// header is a project answer's head: the project, and notes. Its
// resolvedFrom names the lockfile's format only: the MCP text prints it
// after the project's id, which it repeated.
func header(p store.Project) explore.Answer {
	return explore.Answer{Project: p.ID, ResolvedFrom: "lockfile " + p.Format}
}

// list answers list and glob over every file of every warm package, as
// project paths: list as a package's list (explore.ListFiles: path,
// depth, a tree when the files do not fit), glob the files it selects in
// byte order; both paged as a package's are.
func (x *Explorer) list(ctx context.Context, p store.Project, r explore.Request, m *pathglob.Matcher) (*ListAnswer, error) {
	b, err := x.rd.Budget(r.MaxBytes, false)
	if err != nil {
		return nil, err
	}
	warm, cov, err := x.open(ctx, p, false)
	if err != nil {
		return nil, err
	}
	var files []store.File
	for _, w := range warm {
		for _, f := range w.o.Files {
			f.Path = w.pp.Path + "/" + f.Path
			if m == nil || m.Match(f.Path) {
				files = append(files, f)
			}
		}
	}
	// Each package's files are sorted, but a nested folder's sort inside
	// its parent's (node_modules/a/node_modules/b/… before a's other
	// files).
	slices.SortFunc(files, func(a, b store.File) int { return cmp.Compare(a.Path, b.Path) })
	ans := &ListAnswer{ListResult: explore.ListResult{Answer: header(p), Entries: []explore.Entry{}}}
	cov.fill(&ans.Answer, &ans.Complete, &ans.Pending, &ans.PendingCount, &ans.Failed, &ans.FailedCount)
	b.Reserve(explore.Cost(ans.Pending) + explore.Cost(ans.Failed) + 64)
	if m == nil {
		if err := explore.ListFiles(&ans.ListResult, files, "", "project "+p.ID, b, r); err != nil {
			return nil, notWarm(r.Path, cov, err)
		}
		return ans, nil
	}
	all := make([]explore.Entry, len(files))
	for i, f := range files {
		all[i] = explore.Entry{Path: f.Path, Type: explore.EntryFile, Bytes: f.Size}
		ans.TotalFiles++
		ans.TotalBytes += f.Size
	}
	b.ReserveHeader(ans.Answer, r)
	explore.PageEntries(&ans.ListResult, all, b, r)
	return ans, nil
}

// notWarm turns a folder list could not find into what it is when the
// path lies in a package folder with no files yet (pending) or none ever
// (failed): not a wrong path, so the error says which.
func notWarm(raw string, cov coverage, err error) error {
	var nf *explore.NotFoundError
	path, cerr := pkgpath.CleanQuery(strings.TrimSuffix(raw, "/"))
	if !errors.As(err, &nf) || cerr != nil {
		return err
	}
	in := func(folder string) bool { return path == folder || strings.HasPrefix(path, folder+"/") }
	for _, f := range cov.pending {
		if in(f) {
			return &explore.NotFoundError{What: fmt.Sprintf("files of %s yet: it is not warm (pending); ask again shortly", f)}
		}
	}
	for _, f := range cov.failed {
		if in(f.Path) {
			return &explore.NotFoundError{What: fmt.Sprintf("files of %s: %s", f.Path, f.Reason)}
		}
	}
	return err
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
	if !ok && noLockfile(p) {
		return nil, &explore.NotFoundError{What: fmt.Sprintf("file %q in project %s", path, p.ID), Hint: noLockfileNote}
	}
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

// grepCursor is where a cut grep page stopped: in pass Pass (Deferred
// saying pass 0 left matches for pass 1), after line Line of File in the
// package at Folder (Direct says which rank it had), Line wholeFile
// meaning after the whole file. An empty File is the start of the
// folder, or with Line wholeFile its end (count mode); an empty Folder
// the start of the pass. It names the folder, not a position, so
// packages that turn warm between pages do not shift it.
type grepCursor struct {
	pass     int
	deferred bool
	direct   bool
	folder   string
	line     int
	file     string
}

const wholeFile = math.MaxInt32

// parseGrepCursor reads "p<direct><pass><deferred>|<folder>|<line>|<file>"
// (each of the three a digit 0 or 1; "|" is in no npm name; the file,
// last, may hold any byte). "p<direct>|…", before passes, is pass 0.
func parseGrepCursor(s string) (grepCursor, bool, error) {
	if s == "" {
		return grepCursor{}, false, nil
	}
	bad := &explore.InputError{Field: "cursor", Err: errors.New("not a project grep cursor: send the answer's next request as is")}
	f := strings.SplitN(strings.TrimPrefix(s, "p"), "|", 4)
	if !strings.HasPrefix(s, "p") || len(f) != 4 || (len(f[0]) != 1 && len(f[0]) != 3) || strings.Trim(f[0], "01") != "" {
		return grepCursor{}, false, bad
	}
	line, err := strconv.Atoi(f[2])
	if err != nil || line < 0 {
		return grepCursor{}, false, bad
	}
	c := grepCursor{direct: f[0][0] == '1', folder: f[1], line: line, file: f[3]}
	if len(f[0]) == 3 {
		c.pass, c.deferred = int(f[0][1]-'0'), f[0][2] == '1'
	}
	return c, true, nil
}

func (c grepCursor) String() string {
	return "p" + strconv.Itoa(b2i(c.direct)) + strconv.Itoa(c.pass) + strconv.Itoa(b2i(c.deferred)) +
		"|" + c.folder + "|" + strconv.Itoa(c.line) + "|" + c.file
}

// rank orders packages for grep: direct dependencies first, then by path.
func rank(direct bool, path string, b store.ProjectPackage) int {
	return cmp.Or(-cmp.Compare(b2i(direct), b2i(b.Direct)), cmp.Compare(path, b.Path))
}

// grep searches every warm package, direct dependencies first, each
// through its own index, and pages the matches as a package's grep does:
// one total order (pass, rank, folder, file, line), a cursor naming the
// last item given, so following next visits every match exactly once.
// With maxMatchesPerFile, pass 0 holds the first that many matches of
// each file and pass 1 the rest, as in a package's grep: the answer
// ends after pass 0 (an overview), and next brings the rest.
func (x *Explorer) grep(ctx context.Context, p store.Project, r explore.Request) (*GrepAnswer, error) {
	if r.Pattern == "" {
		return nil, &explore.InputError{Field: "pattern", Err: errors.New("give a pattern (an RE2 regular expression, or a literal with fixedStrings)")}
	}
	mode := cmp.Or(r.OutputMode, explore.OutputContent)
	if mode != explore.OutputContent && mode != explore.OutputFilesWithMatches && mode != explore.OutputCount {
		return nil, &explore.InputError{Field: "outputMode", Err: fmt.Errorf("%q: use content, files_with_matches or count", r.OutputMode)}
	}
	if r.MaxMatches < 0 || r.MaxMatchesPerFile < 0 || r.ContextLines != nil && *r.ContextLines < 0 {
		return nil, &explore.InputError{Field: "maxMatches", Err: errors.New("maxMatches, maxMatchesPerFile and contextLines must not be negative")}
	}
	if x.lim.MaxMatches > 0 && r.MaxMatches > x.lim.MaxMatches {
		return nil, &explore.LimitError{Setting: "max-matches", Msg: fmt.Sprintf("maxMatches %d is above the most one page holds (%d); follow next for more", r.MaxMatches, x.lim.MaxMatches)}
	}
	sel, err := explore.GrepFilter(r.Include, r.Exclude, x.lim.Glob)
	if err != nil {
		return nil, err
	}
	cur, resume, err := parseGrepCursor(r.Cursor)
	if err != nil {
		return nil, err
	}
	b, err := x.rd.Budget(r.MaxBytes, false)
	if err != nil {
		return nil, err
	}
	warm, cov, err := x.open(ctx, p, true)
	if err != nil {
		return nil, err
	}
	// Direct dependencies first: the package a caller names in its own
	// code is the likeliest to hold what it looks for.
	slices.SortStableFunc(warm, func(a, b opened) int { return rank(a.pp.Direct, a.pp.Path, b.pp) })
	g := &projectGrep{x: x, ctx: ctx, r: r, b: b, mode: mode, sel: sel, compiled: new(index.Compiled),
		ans: &GrepAnswer{GrepResult: explore.GrepResult{Answer: header(p), OutputMode: mode}}}
	for _, w := range warm {
		g.files += len(w.o.Files)
		for _, f := range w.o.Files {
			if sel(w.pp.Path + "/" + f.Path) {
				if f.Binary {
					g.ans.FilesSkipped++
				} else {
					g.ans.FilesSearched++
				}
			}
		}
	}
	cov.fill(&g.ans.Answer, &g.ans.Complete, &g.ans.Pending, &g.ans.PendingCount, &g.ans.Failed, &g.ans.FailedCount)
	b.ReserveHeader(g.ans.Answer, r)
	b.Reserve(explore.Cost(g.ans.Pending) + explore.Cost(g.ans.Failed) + 64)
	lastPass := 0
	if mode == explore.OutputContent && r.MaxMatchesPerFile > 0 {
		g.perFile, lastPass = r.MaxMatchesPerFile, 1
	}
	g.deferred = cur.deferred
	for g.pass = cur.pass; g.pass <= lastPass; g.pass++ {
		if g.pass == 1 && !g.deferred {
			break // no file had more than pass 0 gave
		}
		for _, w := range warm {
			c := grepCursor{pass: g.pass}
			if resume && g.pass == cur.pass && cur.folder != "" {
				switch k := rank(cur.direct, cur.folder, w.pp); {
				case k > 0:
					continue // answered on an earlier page
				case k == 0:
					if cur.file == "" && cur.line == wholeFile {
						continue // the whole folder was answered (count)
					}
					c = cur
				}
			}
			c.direct, c.folder = w.pp.Direct, w.pp.Path
			done, err := g.search(w, c)
			if err != nil {
				return nil, err
			}
			if done {
				return g.answer(), nil
			}
		}
		if g.pass == 0 && g.deferred && lastPass == 1 {
			// As a package's grep: the per-file cap asked for an
			// overview, which ends here; next brings each file's rest.
			next := r
			next.Cursor = grepCursor{pass: 1, deferred: true}.String()
			g.ans.Cut(index.TruncMaxMatchesPerFile, &next)
			break
		}
	}
	return g.answer(), nil
}

// answer is the page built, with an empty match list rather than none,
// and a package grep's note on what to try when nothing matched.
func (g *projectGrep) answer() *GrepAnswer {
	if g.mode == explore.OutputContent && g.ans.Matches == nil {
		g.ans.Matches = []explore.GrepMatch{}
	}
	if len(g.ans.Matches)+len(g.ans.Files)+len(g.ans.Counts) == 0 {
		explore.NoMatchNote(g.r, &g.ans.Answer, g.ans.FilesSearched, g.ans.FilesSkipped, g.files, "the project's warm packages")
	}
	return g.ans
}

// projectGrep builds one page of a project grep.
type projectGrep struct {
	x    *Explorer
	ctx  context.Context
	r    explore.Request
	b    *explore.Budget
	mode string
	sel  func(string) bool
	// compiled is the pattern compiled once for every package's index.
	compiled *index.Compiled
	ans      *GrepAnswer
	files    int // the warm packages' files, selected or not
	taken    int // matches (files, packages) on this page
	// pass is the pass searched: 0, or 1 for what maxMatchesPerFile
	// (perFile, 0 for none) deferred, which deferred says pass 0 did.
	pass     int
	perFile  int
	deferred bool
}

// callMatches bounds one index call: what the page can still hold.
func (g *projectGrep) callMatches() int {
	n := g.b.Left()/48 + 1 // a match costs at least ~48 bytes of JSON
	if g.mode == explore.OutputCount {
		n = 100_000
	}
	if g.r.MaxMatches > 0 {
		n = min(n, g.r.MaxMatches-g.taken+1)
	}
	if m := g.x.lim.MaxMatches; m > 0 {
		n = min(n, m)
	}
	return max(n, 1)
}

// search adds w's matches after c to the page; it reports whether the
// page is full (then the answer is cut with the request that resumes).
func (g *projectGrep) search(w opened, c grepCursor) (bool, error) {
	folder := w.pp.Path + "/"
	cut := func(why string) {
		next := g.r
		c.deferred = g.deferred
		next.Cursor = c.String()
		g.ans.Cut(why, &next)
	}
	count := 0
	g.ans.PackagesSearched++
	for {
		file, line := c.file, c.line
		q := index.Query{Pattern: g.r.Pattern, CaseInsensitive: g.r.CaseInsensitive, FixedStrings: g.r.FixedStrings,
			WholeWord: g.r.WholeWord, MaxMatches: g.callMatches(), Compiled: g.compiled}
		switch {
		case g.mode == explore.OutputContent && g.r.ContextLines != nil:
			q.ContextLines = *g.r.ContextLines
		case g.mode == explore.OutputFilesWithMatches:
			q.MaxMatchesPerFile = 1
		}
		if g.pass == 0 && g.perFile > 0 {
			q.MaxMatchesPerFile = g.perFile
		}
		q.Filter = func(p string) bool {
			if file != "" && (p < file || (p == file && line == wholeFile)) {
				return false
			}
			return g.sel(folder + p)
		}
		if perFile := g.perFile; (g.pass == 1 && perFile > 0) || (file != "" && line != wholeFile) {
			q.Skip = func(p string, l, n int) bool {
				return (g.pass == 1 && n <= perFile) || (p == file && l <= line)
			}
		}
		sr, err := g.x.rd.Versions().Search(g.ctx, w.o, q)
		if err != nil {
			if errors.Is(err, index.ErrBadPattern) && !g.r.FixedStrings {
				return true, fmt.Errorf("%w (to search for the text as written, set fixedStrings: true)", err)
			}
			return true, fmt.Errorf("grep in %s: %w", w.pp.Path, err)
		}
		res := sr.Result
		if g.pass == 0 && g.perFile > 0 && res.Truncated {
			g.deferred = true // a file had more than the cap: pass 1 brings them
		}
		for _, mt := range res.Matches {
			if g.mode == explore.OutputCount {
				count++
				continue
			}
			if g.r.MaxMatches > 0 && g.taken == g.r.MaxMatches {
				cut(index.TruncMaxMatches)
				return true, nil
			}
			if g.mode == explore.OutputFilesWithMatches {
				if mt.File == c.file {
					continue // the file is already given
				}
				gf := explore.GrepFile{Path: folder + mt.File}
				if !g.b.Take(explore.Cost(gf)) {
					cut(explore.TruncMaxBytes)
					return true, nil
				}
				g.ans.Files = append(g.ans.Files, gf)
				c.file, c.line = mt.File, wholeFile
			} else {
				gm := explore.MatchOf(mt)
				gm.File = folder + gm.File
				if !g.b.Take(explore.MatchCost(gm)) {
					cut(explore.TruncMaxBytes)
					return true, nil
				}
				g.ans.Matches = append(g.ans.Matches, gm)
				c.file, c.line = mt.File, mt.Line
			}
			g.taken++
		}
		switch res.TruncatedBy {
		case index.TruncTimeout:
			cut(index.TruncTimeout)
			return true, nil
		case index.TruncMaxMatches, index.TruncOutputBytes:
			if len(res.Matches) > 0 {
				if g.mode == explore.OutputCount {
					last := res.Matches[len(res.Matches)-1]
					c.file, c.line = last.File, last.Line
				}
				continue // the call's own bound: go on after the last match
			}
		}
		break
	}
	if g.mode == explore.OutputCount && count > 0 {
		pc := PackageCount{Path: w.pp.Path, Package: w.pp.Package, Version: w.pp.Version, Direct: w.pp.Direct, Matches: count}
		if !g.b.Take(explore.Cost(pc)) {
			// The cursor names the last package counted (the first
			// always fits, so there is one): the next page counts this
			// one again, whole.
			last := g.ans.Counts[len(g.ans.Counts)-1]
			c = grepCursor{direct: last.Direct, folder: last.Path, line: wholeFile}
			cut(explore.TruncMaxBytes)
			return true, nil
		}
		g.ans.Counts = append(g.ans.Counts, pc)
		g.ans.PageMatches += count
	}
	return false, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
