package webdocs

import (
	"context"
	"errors"
	"fmt"
	"github.com/pkgscope/pkgscope/internal/closest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/pkgscope/pkgscope/internal/explore"
)

// Doc is the answer to get_doc.
type Doc struct {
	// Path is the page's canonical path, after redirects.
	Path     string `json:"path"`
	Title    string `json:"title"`
	PageType string `json:"pageType"`
	// Content is the page as markdown: MDN's article when MDN answered
	// (Source "mdn"), else what the packages say (Source "packages"), with
	// Note saying why the prose is missing.
	Content string `json:"content"`
	Source  string `json:"source"`
	Note    string `json:"note,omitempty"`
	// Truncated is set when Content was cut at Limits.MaxDocBytes.
	Truncated bool `json:"truncated,omitempty"`
	// BrowserCompat are the page's BCD keys, for get_compat.
	BrowserCompat []string `json:"browserCompat"`
	SpecURLs      []string `json:"specUrls"`
	// IDL is the Web IDL of the interface or member the page documents,
	// from @webref/idl, whatever the Source.
	IDL string `json:"idl,omitempty"`
	// RedirectedFrom is the path asked for, when it redirected to Path.
	RedirectedFrom string   `json:"redirectedFrom,omitempty"`
	Versions       Versions `json:"dataVersions"`
}

// maxRedirects bounds a redirect chain; the inventory has no chains at all
// (0 of 17,411 redirects point at another redirect), so 8 is plenty.
const maxRedirects = 8

var localeRE = regexp.MustCompile(`^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})?$`)

// parseDocPath turns what a caller gave into a page slug: an MDN path
// ("/en-US/docs/Web/API/ResizeObserver", also without the locale as BCD's
// mdn_url writes it), a full URL on any host, or a bare slug
// ("Web/API/ResizeObserver"). It drops a query, a fragment, a trailing
// slash and "/index.json". Other locales are read as en-US, the only one
// indexed; locale reports the one asked for.
func parseDocPath(raw string) (slug, locale string, err error) {
	p := strings.TrimSpace(raw)
	if p == "" {
		return "", "", errors.New(`missing: give an MDN path, e.g. "/en-US/docs/Web/API/ResizeObserver", or a full MDN URL`)
	}
	if strings.Contains(p, "://") {
		u, err := url.Parse(p)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return "", "", fmt.Errorf("%q is not an http(s) URL", raw)
		}
		p = u.Path
	} else {
		if i := strings.IndexAny(p, "?#"); i >= 0 {
			p = p[:i]
		}
		if u, err := url.PathUnescape(p); err == nil {
			p = u
		}
	}
	p = strings.TrimSuffix(p, "/index.json")
	locale = "en-US"
	if strings.HasPrefix(p, "/") {
		segs := strings.Split(strings.Trim(p, "/"), "/")
		switch {
		case segs[0] == "docs":
			slug = strings.Join(segs[1:], "/")
		case len(segs) >= 2 && strings.EqualFold(segs[1], "docs") && localeRE.MatchString(segs[0]):
			locale, slug = segs[0], strings.Join(segs[2:], "/")
		default:
			return "", "", fmt.Errorf("%q is outside /docs: only MDN's reference and guide pages (paths like /en-US/docs/Web/...) can be read", raw)
		}
	} else {
		slug = p
	}
	slug = strings.Trim(slug, "/")
	if slug == "" {
		return "", "", fmt.Errorf("%q names no page under /docs", raw)
	}
	for _, seg := range strings.Split(slug, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", "", fmt.Errorf("%q has an empty, . or .. segment", raw)
		}
	}
	for _, r := range slug {
		if unicode.IsControl(r) || unicode.IsSpace(r) && r != ' ' {
			return "", "", fmt.Errorf("%q holds control characters", raw)
		}
	}
	return slug, locale, nil
}

// resolve finds the page of slug, following redirects. redirected is the
// path asked for when a redirect was followed.
func (d *dataset) resolve(slug string) (page int, redirected string, ok bool) {
	path := docsPrefix + slug
	for range maxRedirects {
		if i, ok := d.inv.bySlug[strings.ToLower(strings.TrimPrefix(path, docsPrefix))]; ok && strings.HasPrefix(path, docsPrefix) {
			if !strings.EqualFold(path, docsPrefix+slug) {
				redirected = docsPrefix + slug
			}
			return i, redirected, true
		}
		to, ok := d.inv.redirects[strings.ToLower(path)]
		if !ok {
			return 0, "", false
		}
		path = to
	}
	return 0, "", false
}

// externalRedirect returns where slug redirects when it leaves MDN.
func (d *dataset) externalRedirect(slug string) string {
	to := d.inv.redirects[strings.ToLower(docsPrefix+slug)]
	if strings.HasPrefix(to, "http://") || strings.HasPrefix(to, "https://") {
		return to
	}
	return ""
}

// GetDoc returns one MDN page.
func (s *Service) GetDoc(ctx context.Context, rawPath string) (*Doc, error) {
	if err := s.checkLen("path", rawPath); err != nil {
		return nil, err
	}
	slug, locale, err := parseDocPath(rawPath)
	if err != nil {
		return nil, &explore.InputError{Field: "path", Err: err}
	}
	d, err := s.data(ctx)
	if err != nil {
		return nil, err
	}
	i, redirected, ok := d.resolve(slug)
	if !ok {
		if ext := d.externalRedirect(slug); ext != "" {
			return nil, &explore.NotFoundError{What: fmt.Sprintf("MDN page %s: it moved off MDN, to %s", docsPrefix+slug, ext)}
		}
		return nil, &explore.NotFoundError{What: fmt.Sprintf("MDN page %s%s", docsPrefix+slug, d.suggestPaths(slug, s.lim))}
	}
	p := &d.inv.pages[i]
	doc := &Doc{
		Path: p.Path(), Title: p.Title, PageType: p.PageType, RedirectedFrom: redirected,
		BrowserCompat: append([]string{}, p.Compat...), SpecURLs: d.specURLs(p), Versions: d.versions,
	}
	if t := d.idlTarget[i]; t.Interface != "" {
		doc.IDL, _ = d.idl.render(t, s.lim.MaxDocBytes)
	}
	var notes []string
	if !strings.EqualFold(locale, "en-US") {
		notes = append(notes, fmt.Sprintf("only en-US pages are indexed; showing the en-US page for locale %s", locale))
	}
	if redirected != "" {
		notes = append(notes, fmt.Sprintf("%s redirects here", redirected))
	}
	prose, why := s.prose(ctx, doc.Path)
	if prose != nil {
		doc.Source, doc.Content = "mdn", prose.markdown
		if doc.Title == "" {
			doc.Title = prose.title
		}
	} else {
		doc.Source = "packages"
		notes = append(notes, "MDN's article text was unavailable ("+why+"); this page is built from the data packages: title, page type, Web IDL, compat keys and spec links")
		doc.Content = d.fallbackContent(i, doc, s.lim)
	}
	doc.Note = strings.Join(notes, "; ")
	if len(doc.Content) > s.lim.MaxDocBytes {
		cut := strings.LastIndexByte(doc.Content[:s.lim.MaxDocBytes], '\n')
		if cut <= 0 {
			cut = runeCut(doc.Content, s.lim.MaxDocBytes)
		}
		doc.Content = doc.Content[:cut] + fmt.Sprintf("\n\n[… content cut at %d of %d bytes (setting webdocs-max-doc-bytes)]", cut, len(doc.Content))
		doc.Truncated = true
	}
	return doc, nil
}

// prose returns MDN's article, or why it is unavailable.
func (s *Service) prose(ctx context.Context, path string) (*mdnDoc, string) {
	if s.mdn == nil {
		return nil, "MDN fetching is off (setting mdn-base-url)"
	}
	md, err := s.mdn.doc(ctx, path)
	if err != nil {
		return nil, err.Error()
	}
	return md, ""
}

// specURLs are the page's spec-urls front matter, else the spec_url of
// its BCD keys, without duplicates.
func (d *dataset) specURLs(p *page) []string {
	out := []string{}
	seen := map[string]bool{}
	add := func(u string) {
		if u != "" && !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	for _, u := range p.SpecURLs {
		add(u)
	}
	if len(out) == 0 {
		for _, k := range p.Compat {
			if e := d.bcd.entries[k]; e != nil {
				for _, u := range e.specURLs {
					add(u)
				}
			}
		}
	}
	return out
}

// fallbackContent builds a page from the packages when MDN's prose is
// unavailable.
func (d *dataset) fallbackContent(i int, doc *Doc, lim Limits) string {
	p := &d.inv.pages[i]
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", p.Title)
	fmt.Fprintf(&b, "Page type: %s\n", p.PageType)
	if len(p.Status) > 0 {
		fmt.Fprintf(&b, "Status: %s\n", strings.Join(p.Status, ", "))
	}
	if sum := d.localSummary(i); sum != "" && !strings.HasPrefix(sum, "IDL: ") {
		fmt.Fprintf(&b, "\n%s\n", sum)
	}
	if doc.IDL != "" {
		fmt.Fprintf(&b, "\n## Web IDL\n\n```webidl\n%s```\n", doc.IDL)
	}
	if len(p.Compat) > 0 {
		b.WriteString("\n## Browser compatibility\n\n")
		for _, k := range p.Compat {
			fmt.Fprintf(&b, "- `%s`", k)
			if bl := d.features.baseline(k, d.tagsOf(k)); bl != nil {
				fmt.Fprintf(&b, ": %s", baselineLine(bl))
			}
			b.WriteString("\n")
		}
		b.WriteString("\nThe full support table of each key: action get_compat with that key.\n")
	}
	if len(doc.SpecURLs) > 0 {
		b.WriteString("\n## Specifications\n\n")
		for _, u := range doc.SpecURLs {
			fmt.Fprintf(&b, "- %s\n", u)
		}
	}
	if kids := d.children[strings.ToLower(p.Slug)]; len(kids) > 0 {
		b.WriteString("\n## Pages under this one\n\n")
		for n, k := range kids {
			if n == lim.MaxCompatChildren {
				fmt.Fprintf(&b, "- … and %d more (search for them)\n", len(kids)-n)
				break
			}
			c := &d.inv.pages[k]
			fmt.Fprintf(&b, "- [%s](%s)\n", c.Title, c.Path())
		}
	}
	return b.String()
}

func (d *dataset) tagsOf(key string) []string {
	if e := d.bcd.entries[key]; e != nil {
		return e.tags
	}
	return nil
}

// baselineLine says a Baseline status in words.
func baselineLine(b *Baseline) string {
	var s string
	switch b.Status {
	case "high":
		s = "Baseline widely available"
		if b.HighDate != "" {
			s += " since " + b.HighDate
		}
	case "low":
		s = "Baseline newly available"
		if b.LowDate != "" {
			s += " since " + b.LowDate
		}
	default:
		s = "limited availability (not Baseline)"
	}
	if b.Scope == "feature" {
		s += " (status of the whole feature " + b.Feature + ")"
	} else {
		s += " (this key's own, web-features " + b.Feature + ")"
		if b.FeatureStatus != "" {
			s += "; the feature as a whole: " + Phrase(b.FeatureStatus, b.FeatureLowDate, b.FeatureHighDate)
		}
	}
	return s
}

// suggestPaths names the pages closest to a slug that does not exist:
// those at the least edit distance (case-insensitive; every page is
// compared, about a millisecond for 14,000 slugs, spent only on a 404),
// then the best search hits for its last segment.
func (d *dataset) suggestPaths(slug string, lim Limits) string {
	ls := strings.ToLower(slug)
	bound := len(ls)/4 + 2
	type cand struct{ page, dist int }
	var cands []cand
	for i := range d.inv.pages {
		if dist := closest.Distance(ls, strings.ToLower(d.inv.pages[i].Slug), bound); dist <= bound {
			cands = append(cands, cand{i, dist})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].dist < cands[j].dist })
	var out []string
	add := func(i int) {
		if p := d.inv.pages[i].Path(); len(out) < lim.MaxSuggestions && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, c := range cands {
		add(c.page)
	}
	for _, h := range d.index.search(slug[strings.LastIndexByte(slug, '/')+1:], lim.MaxPrefixTerms) {
		add(h.doc)
	}
	if len(out) == 0 {
		return " (use action search to find the page)"
	}
	return "; closest pages: " + strings.Join(out, ", ")
}
