package webdocs

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The search index: an inverted index from terms to pages, over each
// page's title, slug, BCD keys and IDL names, held in memory. The real
// inventory's 14,080 pages give 9,138 distinct terms; loading and indexing
// all four packages takes about 3 s and 78 MB of heap, and a search
// 0.05-2 ms.
//
// Ranking is by hand-set weights, highest first:
//   - the whole query equals the title (after dropping "()" and "<>"):
//     100; the short title: 90; the title without spaces and punctuation
//     ("resize observer"): 85; the page's last slug segment: 80; one of its
//     BCD keys: 100 (+20 when the key ends in that segment, so the
//     interface's page beats the overview listing the same key); the IDL
//     interface the page documents: 60; a key ending in the query, less
//     the deeper it is (api.fetch before api.BackgroundFetchManager.fetch):
//     up to 10; the title starting with the query: 30. A query written as
//     a call ("ResizeObserver()") gets these only on pages about a call;
//   - per query word, the best field it occurs in: title 10, last slug
//     segment 8, IDL names 6, BCD keys 4, the rest of the slug 3; a
//     camel-case part ("map" of flatMap) 0.6 of that, a prefix half;
//   - when no page holds every query word (a question: "is
//     structuredClone available in Safari 15"), -20 per word a page
//     lacks, and the best whole-query score of any one word on the page,
//     times how rare that word is (subject);
//   - reference pages +3, guides +1, release notes and MDN's own meta
//     pages -3, deprecated or non-standard pages -2, and -0.5 per slug
//     segment; among equals, the shorter title first.
//
// So "ResizeObserver" ranks /Web/API/ResizeObserver (261.5) above its
// constructor (219) and the Resize Observer API overview (75.5).

type field int

const (
	fTitle field = iota
	fLeaf
	fIDL
	fCompat
	fSlug
	numFields
)

var fieldWeight = [numFields]float64{fTitle: 10, fLeaf: 8, fIDL: 6, fCompat: 4, fSlug: 3}

// indexDoc is one page as the index sees it.
type indexDoc struct {
	title, short, leaf string   // normalised for whole-query comparison
	compactTitle       string   // title without spaces and punctuation
	call               bool     // the title names a call: "observe()", "ResizeObserver()"
	compat             []string // lower-cased BCD keys
	idlIface           string   // lower-cased, set when the page documents the interface itself
	terms              [numFields][]string
	subs               [numFields][]string // camel-case subwords not already in terms
	boost              float64
}

type searchIndex struct {
	docs     []indexDoc
	postings map[string][]int32
	terms    []string // sorted, for prefix expansion
}

// normalize prepares a title or query for whole-string comparison.
func normalize(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimSuffix(s, "()")
	if strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">") && len(s) > 2 {
		s = s[1 : len(s)-1]
	}
	return strings.TrimSpace(s)
}

// tokenize splits s into lower-cased runs of letters and digits.
func tokenize(s string) []string {
	runs := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, r := range runs {
		runs[i] = strings.ToLower(r)
	}
	return runs
}

// subwords returns the camel-case words of the runs of s that have more
// than one ("ResizeObserver" gives "resize", "observer"), so "resize
// observer" finds ResizeObserver too, with less weight than a whole word.
func subwords(s string) []string {
	var out []string
	for _, r := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if words := camelWords(r); len(words) > 1 {
			for _, w := range words {
				out = append(out, strings.ToLower(w))
			}
		}
	}
	return out
}

// camelWords splits "innerHTML" into inner, HTML and "HTMLElement" into
// HTML, Element.
func camelWords(s string) []string {
	rs := []rune(s)
	var words []string
	start := 0
	for i := 1; i < len(rs); i++ {
		lowerToUpper := unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i])
		acronymEnd := i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i+1])
		digitEdge := unicode.IsDigit(rs[i]) != unicode.IsDigit(rs[i-1])
		if lowerToUpper || acronymEnd || digitEdge {
			words = append(words, string(rs[start:i]))
			start = i
		}
	}
	return append(words, string(rs[start:]))
}

// pageBoost ranks reference pages above guides and meta pages.
func pageBoost(p *page) float64 {
	var b float64
	switch t := p.PageType; {
	case strings.HasSuffix(t, "-interface"), strings.HasSuffix(t, "-property"), strings.HasSuffix(t, "-element"),
		strings.HasSuffix(t, "-class"), strings.HasSuffix(t, "-method"), strings.HasSuffix(t, "-constructor"),
		strings.HasSuffix(t, "-function"), strings.HasSuffix(t, "-header"), strings.HasSuffix(t, "-event"),
		strings.HasSuffix(t, "-attribute"), strings.HasPrefix(t, "css-"), strings.HasPrefix(t, "javascript-"):
		b += 3
	case t == "guide", t == "web-api-overview", t == "landing-page", t == "how-to":
		b++
	case t == "firefox-release-notes", strings.HasPrefix(t, "mdn-"), strings.HasPrefix(t, "learn-"):
		b -= 3
	}
	for _, s := range p.Status {
		if s == "deprecated" || s == "non-standard" {
			b -= 2
			break
		}
	}
	return b - 0.5*float64(strings.Count(p.Slug, "/")+1)
}

// idlNames are the IDL names a page documents, for the index.
type idlNames struct {
	iface string // the interface, when the page documents it whole
	names []string
}

func buildIndex(pages []page, idl func(page int) idlNames) *searchIndex {
	x := &searchIndex{docs: make([]indexDoc, len(pages)), postings: map[string][]int32{}}
	for i := range pages {
		p := &pages[i]
		segs := strings.Split(p.Slug, "/")
		leaf := segs[len(segs)-1]
		d := indexDoc{title: normalize(p.Title), short: normalize(p.ShortTitle), leaf: strings.ToLower(leaf), boost: pageBoost(p)}
		d.compactTitle = compact(p.Title)
		d.call = strings.Contains(p.Title+p.ShortTitle, "()")
		fields := [numFields]string{fTitle: p.Title + " " + p.ShortTitle, fLeaf: leaf, fSlug: strings.Join(segs[:len(segs)-1], " ")}
		for _, k := range p.Compat {
			d.compat = append(d.compat, strings.ToLower(k))
			fields[fCompat] += " " + k
		}
		if idl != nil {
			n := idl(i)
			d.idlIface = strings.ToLower(n.iface)
			fields[fIDL] = strings.Join(n.names, " ")
		}
		for f, text := range fields {
			d.terms[f] = dedup(tokenize(text))
			for _, w := range dedup(subwords(text)) {
				if !slices.Contains(d.terms[f], w) {
					d.subs[f] = append(d.subs[f], w)
				}
			}
		}
		x.docs[i] = d
		seen := map[string]bool{}
		for _, ts := range append(d.terms[:], d.subs[:]...) {
			for _, t := range ts {
				if !seen[t] {
					seen[t] = true
					x.postings[t] = append(x.postings[t], int32(i))
				}
			}
		}
	}
	x.terms = make([]string, 0, len(x.postings))
	for t := range x.postings {
		x.terms = append(x.terms, t)
	}
	sort.Strings(x.terms)
	return x
}

func dedup(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// hit is one scored page.
type hit struct {
	doc   int
	score float64
}

// search returns every page matching q, best first. A page must contain
// every query term (or a word starting with it); when none does, pages
// containing any term are returned, ranked by how many they contain.
// maxPrefixTerms bounds how many index terms one query term may expand to.
func (x *searchIndex) search(q string, maxPrefixTerms int) []hit {
	qterms := dedup(tokenize(q))
	if len(qterms) == 0 {
		return nil
	}
	sets := make([]map[int32]bool, len(qterms))
	for i, t := range qterms {
		sets[i] = map[int32]bool{}
		for _, term := range x.expand(t, maxPrefixTerms) {
			for _, d := range x.postings[term] {
				sets[i][d] = true
			}
		}
	}
	cand := map[int32]int{} // doc → query terms it matches
	for _, s := range sets {
		for d := range s {
			cand[d]++
		}
	}
	all := false
	for _, n := range cand {
		if n == len(qterms) {
			all = true
			break
		}
	}
	nq := normalize(q)
	call := strings.HasSuffix(strings.TrimSpace(q), "()")
	var hits []hit
	for d, n := range cand {
		if all && n < len(qterms) {
			continue
		}
		doc := &x.docs[d]
		s := x.score(doc, nq, qterms, call)
		if !all {
			s -= 20 * float64(len(qterms)-n)
			s += x.subject(doc, qterms, sets)
		}
		hits = append(hits, hit{doc: int(d), score: s})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		// Among equals, the shorter title is the more general page.
		if a, b := len(x.docs[hits[i].doc].title), len(x.docs[hits[j].doc].title); a != b {
			return a < b
		}
		return hits[i].doc < hits[j].doc
	})
	return hits
}

// subject scores a page, for a query no page matches whole, by the query
// word that names it (its title, slug segment, key or interface, as
// wholeQuery scores a one-word query), weighed by how rare the word is:
// log(N/pages holding it)/log(N), near 1 for "structuredclone" (2 of
// 14,080 pages), under half for "is" or "in". A question ("is
// structuredClone available in Safari 15") has its subject among common
// words that many pages match; without this, JavaScript error pages
// holding "is", "in" and "available" ranked first and structuredClone's
// pages not in the first ten.
func (x *searchIndex) subject(d *indexDoc, qterms []string, sets []map[int32]bool) float64 {
	n := float64(len(x.docs))
	if n < 2 {
		return 0
	}
	best := 0.0
	for i, t := range qterms {
		if df := float64(len(sets[i])); df > 0 {
			best = max(best, x.wholeQuery(d, t)*math.Log(n/df)/math.Log(n))
		}
	}
	return best
}

// expand returns t and the index terms starting with it (for terms of at
// least 3 bytes), at most max of them.
func (x *searchIndex) expand(t string, max int) []string {
	out := []string{t}
	if utf8.RuneCountInString(t) < 3 {
		return out
	}
	i := sort.SearchStrings(x.terms, t)
	for ; i < len(x.terms) && strings.HasPrefix(x.terms[i], t) && len(out) <= max; i++ {
		if x.terms[i] != t {
			out = append(out, x.terms[i])
		}
	}
	return out
}

func (x *searchIndex) score(d *indexDoc, nq string, qterms []string, call bool) float64 {
	s := d.boost
	// A query written as a call ("ResizeObserver()") asks for a
	// constructor or method: whole-query matches count only on pages
	// whose title is one.
	if !call || d.call {
		s += x.wholeQuery(d, nq)
	}
	for _, t := range qterms {
		best := 0.0
		for f := range numFields {
			w := fieldWeight[f]
			if w <= best {
				continue
			}
			best = max(best, termWeight(d.terms[f], t, w), termWeight(d.subs[f], t, w*subwordWeight))
		}
		s += best
	}
	return s
}

// wholeQuery scores the query as a whole against the page's names.
func (x *searchIndex) wholeQuery(d *indexDoc, nq string) float64 {
	var s float64
	switch {
	case nq == d.title:
		s += 100
	case nq == d.short:
		s += 90
	case compact(nq) == d.compactTitle:
		s += 85
	}
	if nq == d.leaf {
		s += 80
	}
	for _, k := range d.compat {
		if nq == k {
			s += 100
			if strings.HasSuffix(k, "."+d.leaf) {
				s += 20 // the key's own page, not an overview listing it
			}
			break
		}
	}
	for _, k := range d.compat {
		// "fetch" is api.fetch before api.BackgroundFetchManager.fetch.
		if strings.HasSuffix(k, "."+nq) {
			s += max(0, 10-2*float64(strings.Count(k, ".")-1))
			break
		}
	}
	if d.idlIface != "" && nq == d.idlIface {
		s += 60
	}
	if nq != d.title && strings.HasPrefix(d.title, nq) {
		s += 30
	}
	return s
}

// subwordWeight scales a match on a camel-case part ("map" in flatMap)
// against one on a whole word ("map" in map()).
const subwordWeight = 0.6

// termWeight is w when terms hold t, w/2 when one starts with it (t of 3
// bytes or more), else 0.
func termWeight(terms []string, t string, w float64) float64 {
	best := 0.0
	for _, term := range terms {
		if term == t {
			return w
		}
		if len(t) >= 3 && strings.HasPrefix(term, t) {
			best = w / 2
		}
	}
	return best
}

// compact drops everything but letters and digits, lower-cased.
func compact(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}
