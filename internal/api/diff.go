package api

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/explore"
)

// diff serves GET /v1/npm/{name}/-/diff?from=A&to=B: the diff action as
// text/plain, the same bytes npm diff prints. Options are the action's
// fields as query parameters (include and exclude repeat; booleans are
// "true" or "1"). A page holds max-answer-bytes (an answer's largest)
// unless maxBytes asks for less; a cut page carries Link: <…&cursor=…>; rel="next" and
// X-Pkgscope-Truncated-By, and the pages' bodies, concatenated, are the
// whole diff. Every page says the whole diff's totals, as MCP's text does:
// X-Pkgscope-Total-Files, X-Pkgscope-Files (the page's first and last
// file, "3-4") and X-Pkgscope-Summary ("19 files changed in all (2 added,
// 17 modified); this page: files 3-4 ..."). Hints (an include that selected no file) come as
// X-Pkgscope-Note headers, as is each file on the page shown without its
// hunks (its line diff passed max-diff-work).
func (s *Server) diff(c echo.Context, t explore.Target) error {
	if t.Version != "" {
		return inputErr("url", "a diff names its versions with ?from=…&to=…, not name@version: /v1/npm/{name}/-/diff?from=1.0.0&to=1.1.0")
	}
	q := c.QueryParams()
	r := explore.Request{
		Action: "diff", PackageName: t.PackageName, From: q.Get("from"), To: q.Get("to"),
		Include: q["include"], Exclude: q["exclude"],
		SrcPrefix: q.Get("srcPrefix"), DstPrefix: q.Get("dstPrefix"), Cursor: q.Get("cursor"),
	}
	var err error
	flags := []struct {
		name string
		dst  *bool
	}{{"nameOnly", &r.NameOnly}, {"ignoreAllSpace", &r.IgnoreAllSpace}, {"noPrefix", &r.NoPrefix}, {"text", &r.Text}}
	for _, f := range flags {
		if v := q.Get(f.name); v != "" {
			if *f.dst, err = strconv.ParseBool(v); err != nil {
				return inputErr(f.name, "want true or false")
			}
		}
	}
	if v := q.Get("contextLines"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return inputErr("contextLines", "want a whole number of lines, e.g. 3")
		}
		r.ContextLines = &n
	}
	r.MaxBytes = s.diffPage
	if v := q.Get("maxBytes"); v != "" {
		if r.MaxBytes, err = strconv.Atoi(v); err != nil {
			return inputErr("maxBytes", "want a number of bytes")
		}
	}
	res, err := s.svc.Diff(c.Request().Context(), r)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("X-Pkgscope-From", res.From)
	h.Set("X-Pkgscope-To", res.To)
	// The totals MCP's text leads with: the whole diff's files on every
	// page, and which of them this page shows.
	h.Set("X-Pkgscope-Total-Files", strconv.Itoa(res.TotalFiles))
	if res.FirstFile > 0 {
		h.Set("X-Pkgscope-Files", strconv.Itoa(res.FirstFile)+"-"+strconv.Itoa(res.LastFile))
	}
	summary := res.Summary()
	if less := res.SeeLess(r.NameOnly); less != "" {
		summary += "; " + less
	}
	h.Set("X-Pkgscope-Summary", strings.ReplaceAll(summary, "–", "-")) // header values are best ASCII
	if len(res.Unprinted) > 0 {
		h.Add("X-Pkgscope-Note", "npm diff prints nothing for "+english.Count(len(res.Unprinted), "file")+
			", whose bytes differ only where they are not UTF-8 and decode alike: "+strings.Join(res.Unprinted, ", "))
	}
	for _, n := range res.Notes {
		h.Add("X-Pkgscope-Note", n)
	}
	// A file shown without hunks (its line diff passed max-diff-work) is
	// where this body stops being npm diff's bytes: say which, on its page.
	for _, f := range res.Files {
		if f.Note != "" {
			h.Add("X-Pkgscope-Note", f.Path+": "+f.Note)
		}
	}
	if res.Next != nil {
		next := *c.Request().URL
		nq := next.Query()
		nq.Set("from", res.Next.From)
		nq.Set("to", res.Next.To)
		nq.Set("cursor", res.Next.Cursor)
		next.RawQuery = nq.Encode()
		h.Set("Link", "<"+(&url.URL{Path: next.Path, RawQuery: next.RawQuery}).String()+`>; rel="next"`)
		h.Set("X-Pkgscope-Truncated-By", res.TruncatedBy)
	}
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", []byte(res.Diff))
}
