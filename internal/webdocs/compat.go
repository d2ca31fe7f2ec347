package webdocs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/pkgscope/pkgscope/internal/closest"
	"github.com/pkgscope/pkgscope/internal/explore"
)

// Compat is the answer to get_compat.
type Compat struct {
	// Key is the BCD key answered (its canonical spelling when the one
	// asked for differed only in case).
	Key string `json:"key"`
	// Data is the BCD subtree as published: {"__compat": {...},
	// "child": {"__compat": {...}}, ...} for the key and its direct
	// children (at most Limits.MaxCompatChildren of them; the rest are
	// named in MoreChildren). __compat holds support (per browser:
	// version_added, version_removed, partial_implementation, flags,
	// prefix, notes), status (experimental, standard_track, deprecated),
	// mdn_url and spec_url. An interior key (api, css.properties) has no
	// __compat of its own.
	Data json.RawMessage `json:"data"`
	// MoreChildren are child keys left out of Data.
	MoreChildren []string `json:"moreChildren,omitempty"`
	// Baseline is the key's Baseline status from web-features, when it
	// belongs to a feature there.
	Baseline *Baseline `json:"baseline,omitempty"`
	// DocPath is the MDN page documenting the key, for get_doc.
	DocPath  string   `json:"docPath,omitempty"`
	Versions Versions `json:"dataVersions"`
}

// validKey: BCD keys are dot-separated names of letters, digits and
// "_-@$" (every one of the 20,968 keys of 8.1.9 is).
func validKey(k string) bool {
	if k == "" || strings.HasPrefix(k, ".") || strings.HasSuffix(k, ".") || strings.Contains(k, "..") {
		return false
	}
	for _, r := range k {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-@$", r)) {
			return false
		}
	}
	return true
}

// GetCompat returns the BCD support data of key and its direct children,
// with its Baseline status. An unknown key is an *explore.NotFoundError
// naming the closest valid keys.
func (s *Service) GetCompat(ctx context.Context, key string) (*Compat, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return nil, &explore.InputError{Field: "key", Err: errors.New(`missing: give a BCD feature key, e.g. "api.ResizeObserver" or "css.properties.gap" (get_doc and search list each page's keys)`)}
	}
	if err := s.checkLen("key", key); err != nil {
		return nil, err
	}
	key = strings.TrimSuffix(key, "()") // "ResizeObserver.observe()", as code calls it
	if strings.Contains(key, "/") {
		// An MDN URL or path where a key belongs: the page's keys.
		if slug, _, err := parseDocPath(key); err == nil {
			d, err := s.data(ctx)
			if err != nil {
				return nil, err
			}
			if i, _, ok := d.resolve(slug); ok && len(d.inv.pages[i].Compat) > 0 {
				return nil, &explore.NotFoundError{What: fmt.Sprintf("BCD key %q: that is an MDN page; closest valid keys (the page's): %s", key, strings.Join(d.inv.pages[i].Compat, ", "))}
			}
		}
	}
	if !validKey(key) {
		return nil, &explore.InputError{Field: "key", Err: fmt.Errorf("%q is not a BCD key: dot-separated names of letters, digits and _-@$, e.g. api.ResizeObserver.observe", key)}
	}
	d, err := s.data(ctx)
	if err != nil {
		return nil, err
	}
	e, ok := d.bcd.entries[key]
	if !ok {
		if canon := d.bcd.foldedKey(key); canon != "" {
			key, e = canon, d.bcd.entries[canon]
		} else {
			return nil, &explore.NotFoundError{What: fmt.Sprintf("BCD key %q%s", key, d.suggestKeys(key, s.lim.MaxSuggestions))}
		}
	}
	c := &Compat{Key: key, Versions: d.versions}
	var buf bytes.Buffer
	buf.WriteByte('{')
	n := 0
	if e.raw != nil {
		buf.WriteString(`"__compat":`)
		buf.Write(e.raw)
		n++
	}
	kids := d.bcd.children[key]
	for i, ck := range kids {
		if i == s.lim.MaxCompatChildren {
			c.MoreChildren = kids[i:]
			break
		}
		name, _ := json.Marshal(ck[len(key)+1:])
		if n > 0 {
			buf.WriteByte(',')
		}
		buf.Write(name)
		buf.WriteString(`:{`)
		if ce := d.bcd.entries[ck]; ce != nil && ce.raw != nil {
			buf.WriteString(`"__compat":`)
			buf.Write(ce.raw)
		}
		buf.WriteByte('}')
		n++
	}
	buf.WriteByte('}')
	c.Data = buf.Bytes()
	c.Baseline = d.features.baseline(key, e.tags)
	c.DocPath = d.docFor(key, e)
	return c, nil
}

// docFor is the page documenting a key: the one BCD's mdn_url names, else
// the first page declaring the key (an overview page may declare its
// interface's key too, so mdn_url comes first).
func (d *dataset) docFor(key string, e *compatEntry) string {
	if e.mdnURL != "" {
		if slug, _, err := parseDocPath(e.mdnURL); err == nil {
			if i, _, ok := d.resolve(slug); ok {
				return d.inv.pages[i].Path()
			}
		}
	}
	if ps := d.byCompat[key]; len(ps) > 0 {
		return d.inv.pages[ps[0]].Path()
	}
	return ""
}

// foldedKey returns the key equal to k but for case, if one is.
func (b *bcd) foldedKey(k string) string {
	for _, key := range b.keys {
		if strings.EqualFold(key, k) {
			return key
		}
	}
	return ""
}

// keyGuesses are the BCD keys a name written as code or as docs write
// it most likely means: "Array.prototype.findLast" is
// javascript.builtins.Array.findLast, "ResizeObserver.observe()"
// api.ResizeObserver.observe, "gap" css.properties.gap. A JavaScript-style
// name is three edits from nothing in BCD's tree, so the edit distance
// alone never found it (issue 28).
func keyGuesses(k string) []string {
	k = strings.TrimSuffix(strings.TrimSpace(k), "()")
	k = strings.ReplaceAll(k, ".prototype.", ".")
	k = strings.TrimPrefix(k, "window.")
	var out []string
	for _, p := range []string{"javascript.builtins.", "api.", "css.properties.", "html.elements.", "html.global_attributes.",
		"javascript.statements.", "javascript.operators.", "http.headers.", "svg.elements."} {
		if !strings.HasPrefix(k, p) {
			out = append(out, p+k)
		}
	}
	return out
}

// suggestKeys names the valid keys closest to k: first what keyGuesses
// finds, then the children of its longest existing prefix that are near it, and the keys at the least
// edit distance (case-insensitive), shorter keys first among equals. It
// compares against every key of k's top-level tree (20,968 keys in all,
// 9,600 under api): a few milliseconds, spent only on a 404.
func (d *dataset) suggestKeys(k string, max int) string {
	lk := strings.ToLower(k)
	top, _, _ := strings.Cut(k, ".")
	type cand struct {
		key  string
		dist int
	}
	var cands []cand
	for _, key := range d.bcd.keys {
		if _, ok := d.bcd.entries[top]; ok && !strings.HasPrefix(key, top+".") {
			continue
		}
		lkey := strings.ToLower(key)
		dist := closest.Distance(lk, lkey, len(lk)/2+2)
		switch {
		case strings.HasPrefix(lkey, lk):
			// What was asked, completed ("api.ResizeObs"): as good as a
			// near miss, one more per level deeper.
			dist = min(dist, 1+strings.Count(lkey[len(lk):], "."))
		case strings.HasPrefix(lk, lkey+"."):
			// An ancestor of what was asked ("api.ResizeObserver.nope").
			dist = min(dist, 1+strings.Count(lk[len(lkey):], "."))
		}
		if dist <= len(lk)/2+1 {
			cands = append(cands, cand{key, dist})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		if len(cands[i].key) != len(cands[j].key) {
			return len(cands[i].key) < len(cands[j].key)
		}
		return cands[i].key < cands[j].key
	})
	var out []string
	for _, g := range keyGuesses(k) {
		if canon := d.bcd.foldedKey(g); canon != "" && len(out) < max {
			out = append(out, canon)
		}
	}
	for _, c := range cands {
		if len(out) == max {
			break
		}
		if !slices.Contains(out, c.key) {
			out = append(out, c.key)
		}
	}
	if len(out) == 0 {
		return " (search for the feature by name to find its key)"
	}
	return "; closest valid keys: " + strings.Join(out, ", ")
}
