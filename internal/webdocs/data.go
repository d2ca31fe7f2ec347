package webdocs

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pkgscope/pkgscope/internal/explore"
)

// The parsers of the four data packages. Each takes the bytes of the file
// the package publishes and keeps only what the actions need; the layouts
// were read off the published packages (@mdn/browser-compat-data 8.1.9,
// @ddbeck/mdn-content-inventory 0.2.20260206, @webref/idl 3.85.0,
// web-features 3.40.0).

// stringOrList is a front-matter or BCD field that is either one string or
// a list of them ("browser-compat", "spec-urls", "spec_url", "spec"): the
// same shape explore's request fields take.
type stringOrList = explore.StringList

// page is one MDN page of the content inventory.
type page struct {
	Slug       string // "Web/API/ResizeObserver"
	Title      string
	ShortTitle string
	PageType   string
	Compat     []string // BCD keys from the browser-compat front matter
	SpecURLs   []string // spec-urls front matter (most pages take theirs from BCD)
	Status     []string // experimental, deprecated, non-standard
}

// Path is the page's MDN path, "/en-US/docs/" + slug.
func (p *page) Path() string { return docsPrefix + p.Slug }

const docsPrefix = "/en-US/docs/"

// inventory is the parsed @ddbeck/mdn-content-inventory index.json:
// {"metadata":{...}, "inventory":[{"path", "frontmatter":{...}}],
// "redirects":{"/en-US/docs/old": "/en-US/docs/new" or an absolute URL}}.
type inventory struct {
	pages []page
	// bySlug maps the lower-cased slug to the page: MDN paths are
	// case-insensitive.
	bySlug map[string]int
	// redirects maps the lower-cased old path to its target.
	redirects map[string]string
}

func parseInventory(b []byte) (*inventory, error) {
	var raw struct {
		Inventory []struct {
			Path        string `json:"path"`
			Frontmatter struct {
				Title         string       `json:"title"`
				ShortTitle    string       `json:"short-title"`
				Slug          string       `json:"slug"`
				PageType      string       `json:"page-type"`
				BrowserCompat stringOrList `json:"browser-compat"`
				SpecURLs      stringOrList `json:"spec-urls"`
				Status        stringOrList `json:"status"`
			} `json:"frontmatter"`
		} `json:"inventory"`
		Redirects map[string]string `json:"redirects"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: content inventory index.json: %v", errBadData, err)
	}
	if len(raw.Inventory) == 0 {
		return nil, fmt.Errorf("%w: content inventory index.json lists no pages", errBadData)
	}
	inv := &inventory{bySlug: make(map[string]int, len(raw.Inventory)), redirects: make(map[string]string, len(raw.Redirects))}
	for _, e := range raw.Inventory {
		fm := e.Frontmatter
		slug := strings.Trim(fm.Slug, "/")
		if slug == "" {
			continue
		}
		if _, dup := inv.bySlug[strings.ToLower(slug)]; dup {
			continue
		}
		inv.bySlug[strings.ToLower(slug)] = len(inv.pages)
		inv.pages = append(inv.pages, page{
			Slug: slug, Title: fm.Title, ShortTitle: fm.ShortTitle, PageType: fm.PageType,
			Compat: fm.BrowserCompat, SpecURLs: fm.SpecURLs, Status: fm.Status,
		})
	}
	for from, to := range raw.Redirects {
		inv.redirects[strings.ToLower(from)] = to
	}
	return inv, nil
}

// compatEntry is one BCD feature: a node of the tree. Interior nodes
// ("api", "css.properties") have no __compat.
type compatEntry struct {
	raw      json.RawMessage // the __compat object as published
	desc     string          // description (HTML), set for sub-features
	mdnURL   string
	specURLs []string
	tags     []string
}

// bcd is the parsed @mdn/browser-compat-data data.json: a tree whose
// nodes are feature names and whose "__compat" members hold support data.
type bcd struct {
	entries  map[string]*compatEntry
	children map[string][]string // key → direct child keys, sorted
	keys     []string            // every key with __compat, sorted
}

func parseBCD(b []byte) (*bcd, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("%w: browser-compat-data data.json: %v", errBadData, err)
	}
	d := &bcd{entries: map[string]*compatEntry{}, children: map[string][]string{}}
	for name, raw := range top {
		if name == "__meta" || name == "browsers" {
			continue
		}
		if err := d.walk(name, raw, 1); err != nil {
			return nil, err
		}
	}
	if len(d.keys) == 0 {
		return nil, fmt.Errorf("%w: browser-compat-data data.json holds no features", errBadData)
	}
	sort.Strings(d.keys)
	for _, c := range d.children {
		sort.Strings(c)
	}
	return d, nil
}

// maxBCDDepth bounds the recursion; the deepest key of 8.1.9 has 8
// segments (javascript.builtins.Intl.DateTimeFormat.DateTimeFormat.
// options_parameter.options_timeZoneName_parameter.extended_values).
const maxBCDDepth = 16

func (d *bcd) walk(key string, raw json.RawMessage, depth int) error {
	if depth > maxBCDDepth {
		return fmt.Errorf("%w: browser-compat-data nests deeper than %d at %s", errBadData, maxBCDDepth, key)
	}
	var node map[string]json.RawMessage
	if err := json.Unmarshal(raw, &node); err != nil {
		return fmt.Errorf("%w: browser-compat-data %s: %v", errBadData, key, err)
	}
	e := &compatEntry{}
	if c, ok := node["__compat"]; ok {
		var meta struct {
			Description string       `json:"description"`
			MDNURL      string       `json:"mdn_url"`
			SpecURL     stringOrList `json:"spec_url"`
			Tags        []string     `json:"tags"`
		}
		if err := json.Unmarshal(c, &meta); err != nil {
			return fmt.Errorf("%w: browser-compat-data %s.__compat: %v", errBadData, key, err)
		}
		e.raw, e.desc, e.mdnURL, e.specURLs, e.tags = c, meta.Description, meta.MDNURL, meta.SpecURL, meta.Tags
		d.keys = append(d.keys, key)
	}
	d.entries[key] = e
	for name, child := range node {
		if name == "__compat" || len(child) == 0 || child[0] != '{' {
			continue
		}
		ck := key + "." + name
		d.children[key] = append(d.children[key], ck)
		if err := d.walk(ck, child, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// Baseline is a feature's Baseline status from web-features.
type Baseline struct {
	// Feature is the web-features id ("resize-observer") and Name its
	// human name.
	Feature string `json:"feature"`
	Name    string `json:"name"`
	// Status is "high" (widely available: in every core browser for 30
	// months), "low" (newly available: in every core browser) or "limited"
	// (not yet in all of them; web-features writes false).
	Status   string `json:"status"`
	LowDate  string `json:"lowDate,omitempty"`
	HighDate string `json:"highDate,omitempty"`
	// Support is the first version of each core browser that supports it.
	Support map[string]string `json:"support,omitempty"`
	// Scope says whether the status is the key's own ("key") or the whole
	// feature's ("feature"), when web-features has no per-key status.
	Scope       string `json:"scope"`
	Description string `json:"description,omitempty"`
	// FeatureStatus, FeatureLowDate and FeatureHighDate are the whole
	// feature's status when Scope is "key" and it differs from the key's
	// (popover: the key newly available 2024-04-16, the feature
	// 2025-01-27): a date shown alone could be either.
	FeatureStatus   string `json:"featureStatus,omitempty"`
	FeatureLowDate  string `json:"featureLowDate,omitempty"`
	FeatureHighDate string `json:"featureHighDate,omitempty"`
	// Discouraged is set when web-features advises against using it.
	Discouraged bool `json:"discouraged,omitempty"`
}

type wfStatus struct {
	Baseline         json.RawMessage     `json:"baseline"`
	BaselineLowDate  string              `json:"baseline_low_date"`
	BaselineHighDate string              `json:"baseline_high_date"`
	Support          map[string]string   `json:"support"`
	ByCompatKey      map[string]wfStatus `json:"by_compat_key"`
}

func (s wfStatus) level() string {
	switch strings.TrimSpace(string(s.Baseline)) {
	case `"high"`:
		return "high"
	case `"low"`:
		return "low"
	}
	return "limited"
}

type wfFeature struct {
	id, name, desc string
	discouraged    bool
	status         wfStatus
	compatKeys     []string
}

// features is the parsed web-features data.json:
// {"features": {id: {"kind":"feature", "name", "description",
// "compat_features":[...], "status":{"baseline", ..., "by_compat_key"}}}}.
// Features of kind "moved" and "split" are redirects and are skipped.
type features struct {
	byID  map[string]*wfFeature
	byKey map[string]*wfFeature // BCD key → the feature listing it
}

func parseFeatures(b []byte) (*features, error) {
	var raw struct {
		Features map[string]struct {
			Kind           string          `json:"kind"`
			Name           string          `json:"name"`
			Description    string          `json:"description"`
			CompatFeatures []string        `json:"compat_features"`
			Status         wfStatus        `json:"status"`
			Discouraged    json.RawMessage `json:"discouraged"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: web-features data.json: %v", errBadData, err)
	}
	if len(raw.Features) == 0 {
		return nil, fmt.Errorf("%w: web-features data.json holds no features", errBadData)
	}
	f := &features{byID: map[string]*wfFeature{}, byKey: map[string]*wfFeature{}}
	ids := make([]string, 0, len(raw.Features))
	for id := range raw.Features {
		ids = append(ids, id)
	}
	slices.Sort(ids) // a key listed by two features maps to the first id, every run
	for _, id := range ids {
		r := raw.Features[id]
		if r.Kind != "" && r.Kind != "feature" {
			continue
		}
		ft := &wfFeature{id: id, name: r.Name, desc: r.Description, status: r.Status, compatKeys: r.CompatFeatures,
			discouraged: len(r.Discouraged) > 0 && string(r.Discouraged) != "null"}
		f.byID[id] = ft
		for _, k := range r.CompatFeatures {
			if _, ok := f.byKey[k]; !ok {
				f.byKey[k] = ft
			}
		}
	}
	return f, nil
}

// baseline returns the Baseline status of a BCD key: the key's own from
// by_compat_key, else the feature's that lists or tags the key.
func (f *features) baseline(key string, tags []string) *Baseline {
	ft := f.byKey[key]
	if ft == nil {
		for _, t := range tags {
			if id, ok := strings.CutPrefix(t, "web-features:"); ok && f.byID[id] != nil {
				ft = f.byID[id]
				break
			}
		}
	}
	if ft == nil {
		return nil
	}
	b := &Baseline{Feature: ft.id, Name: ft.name, Description: ft.desc, Discouraged: ft.discouraged}
	st, scope := ft.status, "feature"
	if ks, ok := ft.status.ByCompatKey[key]; ok {
		st, scope = ks, "key"
	}
	b.Status, b.LowDate, b.HighDate, b.Support, b.Scope = st.level(), st.BaselineLowDate, st.BaselineHighDate, st.Support, scope
	if fs := ft.status; scope == "key" && (fs.level() != b.Status || fs.BaselineLowDate != b.LowDate || fs.BaselineHighDate != b.HighDate) {
		b.FeatureStatus, b.FeatureLowDate, b.FeatureHighDate = fs.level(), fs.BaselineLowDate, fs.BaselineHighDate
	}
	return b
}

// Phrase says a Baseline status in words: "widely available since
// 2020-07-27", "newly available since 2024-04-16", "limited availability
// (not in every core browser)".
func Phrase(status, low, high string) string {
	switch status {
	case "high":
		return "widely available since " + high
	case "low":
		return "newly available since " + low
	}
	return "limited availability (not in every core browser)"
}
