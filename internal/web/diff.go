package web

import (
	"errors"
	"net/http"
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
	Files     []diffFileRow
	Lines     []diffLine
	Next      string
}

type diffFileRow struct {
	explore.DiffFile
	Anchor string // "" when its text is not on this page
}

// diffLine is one line of npm diff's text, with its kind for the page's
// colours: file (a "diff --git" header), meta, hunk, add, del or ctx.
type diffLine struct {
	Kind, Text, ID string
}

// diffPage serves /diff/{name}?from=&to=[&include=][&cursor=]: what npm
// diff prints between two versions, one budgeted page at a time.
func (p *Pages) diffPage(c echo.Context) error {
	ref, _, err := npmspec.SplitPath(strings.TrimPrefix(c.Request().URL.Path, "/diff/"))
	if err != nil {
		return p.fail(c, &explore.InputError{Field: "url", Err: err})
	}
	d := &diffData{Name: ref.Name, From: c.QueryParam("from"), To: c.QueryParam("to"), Include: c.QueryParam("include")}
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
	d.Summary, d.Unprinted = res.Summary(), res.Unprinted
	onPage := map[string]string{}
	fileNo := 0
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
				onPage[res.Files[fileNo].Path] = dl.ID
				fileNo++
			}
		case strings.HasPrefix(l, "index "), strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "+++ "),
			strings.HasPrefix(l, "new file mode"), strings.HasPrefix(l, "deleted file mode"),
			strings.HasPrefix(l, "old mode"), strings.HasPrefix(l, "new mode"), strings.HasPrefix(l, "Binary files"):
			dl.Kind = "meta"
		case strings.HasPrefix(l, "@@"):
			dl.Kind = "hunk"
		case strings.HasPrefix(l, "+"):
			dl.Kind = "add"
		case strings.HasPrefix(l, "-"):
			dl.Kind = "del"
		}
		d.Lines = append(d.Lines, dl)
	}
	for _, f := range res.Files {
		d.Files = append(d.Files, diffFileRow{DiffFile: f, Anchor: onPage[f.Path]})
	}
	if res.Next != nil {
		q := c.QueryParams()
		q.Set("cursor", res.Next.Cursor)
		d.Next = c.Request().URL.Path + "?" + q.Encode()
	}
	return p.render(c, http.StatusOK, "diff", page{Title: ref.Name + " " + res.From + " → " + res.To, Data: d})
}
