package web

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/npmspec"
)

// diffPageBytes is one diff page's budget: the API's read maximum, since
// people scroll a page where a model pays for every byte.
const diffPageBytes = 100 << 10

// diffData is a page of a diff between two versions.
type diffData struct {
	Name, From, To string
	Include        string
	// Summary is the page's explore.DiffResult.Summary, MCP's first
	// line: the whole diff's files and which of them this page shows.
	Summary string
	// Unprinted are changed files npm diff prints nothing for.
	Unprinted []string
	// Files are every changed file of the diff (a name-only diff, paged
	// by FilesNext/FilesPrev), each linked to its text: on this page, or
	// the diff of that file alone.
	Files                []diffFileRow
	FilesFrom            int // number of Files[0], 1-based
	FilesNext, FilesPrev string
	Lines                []diffLine
	// Rows are Lines side by side (Split).
	Rows  []splitRow
	Split bool
	// Unified and SplitHref are the page in each view.
	UnifiedHref, SplitHref string
	Next                   string
}

type diffFileRow struct {
	explore.DiffFile
	Href string // the file's text: "#fN" on this page, else its own diff
	Here bool   // its text starts on this page
}

// diffLine is one line of npm diff's text, with its kind for the page's
// colours: file (a "diff --git" header), meta, hunk, add, del or ctx; the
// line's numbers in the old and new file (0 where it has none); a file
// header's links to the neighbouring files.
type diffLine struct {
	Kind, Text, ID string
	Old, New       int
	Prev, NextFile string
}

// splitRow is a line of the split view: the old file's side and the new
// file's, or one full-width line (Kind file, meta or hunk).
type splitRow struct {
	Kind, Text, ID string
	Prev, NextFile string
	L, R           *diffLine
}

// fileOnPage is a changed file whose text starts on this page: its
// anchor and its entry with line counts.
type fileOnPage struct {
	ID string
	explore.DiffFile
}

// hunkHeader reads "@@ -a,b +c,d @@": the first old and new line numbers.
func hunkHeader(l string) (oldStart, newStart int) {
	f := strings.Fields(l)
	if len(f) < 3 {
		return 0, 0
	}
	num := func(s string) int {
		s, _, _ = strings.Cut(s[1:], ",")
		n, _ := strconv.Atoi(s)
		return n
	}
	return num(f[1]), num(f[2])
}

// diffPage serves /diff/{name}?from=&to=[&include=][&cursor=][&view=split]
// [&files=]: what npm diff prints between two versions, one budgeted page
// at a time, with line numbers, every changed file listed (a page of
// them), links between files and a split view.
func (p *Pages) diffPage(c echo.Context) error {
	ref, _, err := npmspec.SplitPath(strings.TrimPrefix(c.Request().URL.Path, "/diff/"))
	if err != nil {
		return p.fail(c, &explore.InputError{Field: "url", Err: err})
	}
	d := &diffData{Name: ref.Name, From: c.QueryParam("from"), To: c.QueryParam("to"), Include: c.QueryParam("include"), Split: c.QueryParam("view") == "split"}
	if d.From == "" || d.To == "" {
		return p.render(c, http.StatusOK, "diff", page{Title: "Compare " + ref.Name, Data: d})
	}
	// Following a diff link never fills the store either (fetch.go).
	var missing []string
	for _, v := range []string{d.From, d.To} {
		_, exact, err := p.stored(c, ref.Name, v)
		switch {
		case errors.Is(err, errNotStored):
			if !slices.Contains(missing, exact) {
				missing = append(missing, exact)
			}
		case err != nil:
			return p.fail(c, err)
		}
	}
	if len(missing) > 0 {
		return p.offerFetch(c, ref.Name, missing...)
	}
	req := explore.Request{Action: "diff", PackageName: ref.Name, From: d.From, To: d.To, MaxBytes: diffPageBytes, Cursor: c.QueryParam("cursor")}
	if d.Include != "" {
		req.Include = explore.StringList{d.Include}
	}
	res, err := p.d.Packages.Diff(c.Request().Context(), req)
	if err != nil {
		return p.fail(c, err)
	}
	if res.From != d.From || res.To != d.To {
		// Ranges and tags: show the exact versions in the URL.
		q := c.QueryParams()
		q.Set("from", res.From)
		q.Set("to", res.To)
		return c.Redirect(http.StatusFound, c.Request().URL.Path+"?"+q.Encode())
	}
	self := func(edit func(q url.Values)) string {
		q := c.QueryParams()
		edit(q)
		return c.Request().URL.Path + "?" + q.Encode()
	}
	d.UnifiedHref = self(func(q url.Values) { q.Del("view") })
	d.SplitHref = self(func(q url.Values) { q.Set("view", "split") })
	d.Summary, d.Unprinted = res.Summary(), res.Unprinted
	onPage := map[string]fileOnPage{}
	fileNo := 0
	var oldN, newN int
	var headers []int // indexes of the file headers in d.Lines
	for _, l := range strings.SplitAfter(res.Diff, "\n") {
		if strings.TrimSpace(l) == "" && len(d.Lines) == 0 {
			continue // npm diff prints a lone newline for no differences
		}
		if l == "" {
			continue
		}
		dl := diffLine{Text: strings.TrimSuffix(l, "\n"), Kind: "ctx"}
		switch {
		case strings.HasPrefix(l, "diff --git "):
			dl.Kind = "file"
			if fileNo < len(res.Files) {
				dl.ID = "f" + strconv.Itoa(fileNo)
				onPage[res.Files[fileNo].Path] = fileOnPage{ID: dl.ID, DiffFile: res.Files[fileNo]}
				fileNo++
			}
			headers = append(headers, len(d.Lines))
		case strings.HasPrefix(l, "index "), strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "+++ "),
			strings.HasPrefix(l, "new file mode"), strings.HasPrefix(l, "deleted file mode"),
			strings.HasPrefix(l, "old mode"), strings.HasPrefix(l, "new mode"), strings.HasPrefix(l, "Binary files"):
			dl.Kind = "meta"
		case strings.HasPrefix(l, "@@"):
			dl.Kind = "hunk"
			oldN, newN = hunkHeader(l)
		case strings.HasPrefix(l, "+"):
			dl.Kind, dl.New = "add", newN
			newN++
		case strings.HasPrefix(l, "-"):
			dl.Kind, dl.Old = "del", oldN
			oldN++
		case strings.HasPrefix(l, "\\"): // "\ No newline at end of file"
			dl.Kind = "meta"
		default:
			dl.Old, dl.New = oldN, newN
			oldN++
			newN++
		}
		d.Lines = append(d.Lines, dl)
	}
	if res.Next != nil {
		d.Next = self(func(q url.Values) { q.Set("cursor", res.Next.Cursor) })
	}
	// Each file header links the file before and after it: on this page,
	// or the page before (the browser's back) and the next page.
	for i, h := range headers {
		if i > 0 && d.Lines[headers[i-1]].ID != "" {
			d.Lines[h].Prev = "#" + d.Lines[headers[i-1]].ID
		}
		if i+1 < len(headers) && d.Lines[headers[i+1]].ID != "" {
			d.Lines[h].NextFile = "#" + d.Lines[headers[i+1]].ID
		} else if d.Next != "" {
			d.Lines[h].NextFile = d.Next
		}
	}
	if d.Split {
		d.Rows = splitRows(d.Lines)
		d.Lines = nil
	}
	if err := p.changedFiles(c, d, onPage); err != nil {
		return p.fail(c, err)
	}
	return p.render(c, http.StatusOK, "diff", page{Title: ref.Name + " " + res.From + " → " + res.To, Data: d})
}

// changedFiles lists a page of every changed file (a name-only diff of
// the same versions and paths, paged by ?files=), each linked to its text.
func (p *Pages) changedFiles(c echo.Context, d *diffData, onPage map[string]fileOnPage) error {
	req := explore.Request{Action: "diff", PackageName: d.Name, From: d.From, To: d.To, NameOnly: true, MaxBytes: diffPageBytes, Cursor: c.QueryParam("files")}
	if d.Include != "" {
		req.Include = explore.StringList{d.Include}
	}
	res, err := p.d.Packages.Diff(c.Request().Context(), req)
	if err != nil {
		return err
	}
	d.FilesFrom = max(1, res.FirstFile)
	for _, f := range res.Files {
		row := diffFileRow{DiffFile: f}
		if here, ok := onPage[f.Path]; ok {
			// With its line counts, which a name-only diff leaves out.
			row.DiffFile, row.Href, row.Here = here.DiffFile, "#"+here.ID, true
		} else {
			q := url.Values{"from": {d.From}, "to": {d.To}, "include": {f.Path}}
			if d.Split {
				q.Set("view", "split")
			}
			row.Href = c.Request().URL.Path + "?" + q.Encode()
		}
		d.Files = append(d.Files, row)
	}
	q := c.QueryParams()
	if res.Next != nil {
		q.Set("files", res.Next.Cursor)
		d.FilesNext = c.Request().URL.Path + "?" + q.Encode() + "#changed"
	}
	if c.QueryParam("files") != "" {
		q := c.QueryParams()
		q.Del("files")
		d.FilesPrev = c.Request().URL.Path + "?" + q.Encode() + "#changed"
	}
	return nil
}

// splitRows pairs a diff's lines side by side: within a hunk, a run of
// removed lines faces the run of added lines after it; context faces
// itself; headers span both sides.
func splitRows(lines []diffLine) []splitRow {
	var out []splitRow
	var dels, adds []*diffLine
	flush := func() {
		for i := range max(len(dels), len(adds)) {
			var r splitRow
			if i < len(dels) {
				r.L = dels[i]
			}
			if i < len(adds) {
				r.R = adds[i]
			}
			r.Kind = "pair"
			out = append(out, r)
		}
		dels, adds = nil, nil
	}
	for i := range lines {
		l := &lines[i]
		switch l.Kind {
		case "del":
			if len(adds) > 0 {
				flush()
			}
			dels = append(dels, l)
		case "add":
			adds = append(adds, l)
		case "ctx":
			flush()
			out = append(out, splitRow{Kind: "pair", L: l, R: l})
		default:
			flush()
			out = append(out, splitRow{Kind: l.Kind, Text: l.Text, ID: l.ID, Prev: l.Prev, NextFile: l.NextFile})
		}
	}
	flush()
	return out
}
