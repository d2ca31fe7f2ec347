package webdocs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/pkgscope/pkgscope/internal/explore"
)

// SearchRequest asks for MDN pages matching a query.
type SearchRequest struct {
	// Query is words, an API or CSS name ("ResizeObserver", "gap"), a BCD
	// key ("api.ResizeObserver") or an MDN path or URL.
	Query string
	// Limit is how many documents to return (default
	// Limits.DefaultResults, at most MaxResults); Offset skips that many
	// first, for paging.
	Limit, Offset int
}

// SearchResult is the answer to search.
type SearchResult struct {
	Query string `json:"query"`
	// Total is how many pages matched; Documents holds Limit of them from
	// Offset.
	Total     int        `json:"total"`
	Offset    int        `json:"offset"`
	Documents []Document `json:"documents"`
	// Versions are the exact data package versions answered from.
	Versions Versions `json:"dataVersions"`
}

// Document is one search hit.
type Document struct {
	Title    string `json:"title"`
	Path     string `json:"path"`
	PageType string `json:"pageType,omitempty"`
	// Summary is MDN's own when known (from its search API or a page
	// read before), else what the packages say: the IDL declaration of a
	// member, a web-features or BCD description.
	Summary    string   `json:"summary,omitempty"`
	Score      float64  `json:"score"`
	CompatKeys []string `json:"compatKeys"`
	// Baseline is the page's first compat key's Baseline status, when
	// web-features has one: "can I use X" answered by the search alone,
	// not a get_compat after it (issue 28).
	Baseline *Baseline `json:"baseline,omitempty"`
}

// Search returns the pages best matching the query; see index.go for the
// ranking.
func (s *Service) Search(ctx context.Context, r SearchRequest) (*SearchResult, error) {
	q := strings.TrimSpace(r.Query)
	if q == "" {
		return nil, &explore.InputError{Field: "query", Err: errors.New(`missing: give words or a name to search for, e.g. "ResizeObserver" or "css gap"`)}
	}
	if err := s.checkLen("query", q); err != nil {
		return nil, err
	}
	if r.Limit < 0 || r.Offset < 0 {
		return nil, &explore.InputError{Field: "limit", Err: errors.New("limit and offset must not be negative")}
	}
	if r.Limit == 0 {
		r.Limit = s.lim.DefaultResults
	}
	if r.Limit > s.lim.MaxResults {
		return nil, &explore.LimitError{Setting: "webdocs-max-results", Msg: fmt.Sprintf("limit %d is above the most documents one search returns (%d); page with offset", r.Limit, s.lim.MaxResults)}
	}
	d, err := s.data(ctx)
	if err != nil {
		return nil, err
	}
	hits := d.index.search(q, s.lim.MaxPrefixTerms)
	// A query that is a page's path or URL finds that page first.
	if slug, _, err := parseDocPath(q); err == nil && strings.Contains(q, "/") {
		if i, _, ok := d.resolve(slug); ok {
			hits = append([]hit{{doc: i, score: 1000}}, dropDoc(hits, i)...)
		}
	}
	res := &SearchResult{Query: q, Total: len(hits), Offset: r.Offset, Documents: []Document{}, Versions: d.versions}
	if r.Offset >= len(hits) {
		return res, nil
	}
	hits = hits[r.Offset:min(len(hits), r.Offset+r.Limit)]
	var mdnSummaries map[string]string
	if s.mdn != nil {
		mdnSummaries = s.mdn.summaries(ctx, q, r.Offset+r.Limit)
	}
	for _, h := range hits {
		p := &d.inv.pages[h.doc]
		doc := Document{
			Title: p.Title, Path: p.Path(), PageType: p.PageType,
			Score: math.Round(h.score*100) / 100, CompatKeys: append([]string{}, p.Compat...),
		}
		if len(p.Compat) > 0 {
			var tags []string
			if e := d.bcd.entries[p.Compat[0]]; e != nil {
				tags = e.tags
			}
			doc.Baseline = d.features.baseline(p.Compat[0], tags)
		}
		doc.Summary = mdnSummaries[strings.ToLower(doc.Path)]
		if doc.Summary == "" && s.mdn != nil {
			doc.Summary = s.mdn.cachedSummary(doc.Path)
		}
		if doc.Summary == "" {
			doc.Summary = d.localSummary(h.doc)
		}
		res.Documents = append(res.Documents, doc)
	}
	return res, nil
}

func dropDoc(hits []hit, doc int) []hit {
	out := hits[:0:0]
	for _, h := range hits {
		if h.doc != doc {
			out = append(out, h)
		}
	}
	return out
}

// localSummary describes a page from the packages: the IDL declaration of
// the member it documents, else the web-features description of its
// feature when that names the page's subject (the grid feature's
// description would mislead on the gap page), else its BCD description.
func (d *dataset) localSummary(i int) string {
	p := &d.inv.pages[i]
	if t := d.idlTarget[i]; t.Interface != "" && t.Member != "" {
		if _, ms := d.idl.render(t, 4096); len(ms) > 0 {
			return "IDL: " + ms[0].Text + ";"
		}
	}
	if len(p.Compat) == 0 {
		return ""
	}
	key := p.Compat[0]
	if f := d.features.byKey[key]; f != nil && f.desc != "" {
		leaf := strings.ToLower(p.Slug[strings.LastIndexByte(p.Slug, '/')+1:])
		if strings.Contains(strings.ToLower(f.desc), leaf) {
			return f.desc
		}
	}
	if e := d.bcd.entries[key]; e != nil && e.desc != "" {
		return stripTags(e.desc)
	}
	return ""
}

// stripTags removes HTML tags from a short BCD description
// ("<code>ResizeObserver()</code> constructor").
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", `"`).Replace(b.String())
}
