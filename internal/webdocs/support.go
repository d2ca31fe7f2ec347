package webdocs

import (
	"encoding/json"
	"sort"
	"strings"
)

// SupportRow is one line of a compat table: the key or one of its direct
// children, and when each browser first supported it.
type SupportRow struct {
	// Key is the BCD key of the row.
	Key string
	// Browsers are BCD's browser ids in byte order with what their first
	// (newest) support statement says: a version ("64"), "yes", "no" or
	// "?", with caveats in parentheses ("12 (partial, prefix -webkit-)").
	Browsers []BrowserSupport
	// Experimental and Deprecated are BCD's status flags.
	Experimental, Deprecated bool
}

// BrowserSupport is one browser's cell of a SupportRow.
type BrowserSupport struct {
	Browser, Since string
}

// Rows reads c.Data as a table: the key's own row first (when it has a
// __compat), then each child's in byte order. It is the one reading of
// BCD support statements; the MCP text and the web page both print it.
func (c *Compat) Rows() []SupportRow {
	var tree map[string]json.RawMessage
	if err := json.Unmarshal(c.Data, &tree); err != nil {
		return nil
	}
	var rows []SupportRow
	if own, ok := tree["__compat"]; ok {
		if r, ok := supportRow(c.Key, own); ok {
			rows = append(rows, r)
		}
	}
	names := make([]string, 0, len(tree))
	for k := range tree {
		if k != "__compat" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		var sub struct {
			Compat json.RawMessage `json:"__compat"`
		}
		if json.Unmarshal(tree[n], &sub) == nil && sub.Compat != nil {
			if r, ok := supportRow(c.Key+"."+n, sub.Compat); ok {
				rows = append(rows, r)
			}
		}
	}
	return rows
}

func supportRow(key string, raw json.RawMessage) (SupportRow, bool) {
	var c struct {
		Support map[string]json.RawMessage `json:"support"`
		Status  struct {
			Experimental bool `json:"experimental"`
			Deprecated   bool `json:"deprecated"`
		} `json:"status"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return SupportRow{}, false
	}
	r := SupportRow{Key: key, Experimental: c.Status.Experimental, Deprecated: c.Status.Deprecated}
	for br, st := range c.Support {
		r.Browsers = append(r.Browsers, BrowserSupport{Browser: br, Since: firstSupport(st)})
	}
	sort.Slice(r.Browsers, func(i, j int) bool { return r.Browsers[i].Browser < r.Browsers[j].Browser })
	return r, true
}

// firstSupport reads a support statement (one object or a list, newest
// first): its version_added, "no", or with its caveats.
func firstSupport(raw json.RawMessage) string {
	type statement struct {
		VersionAdded   any    `json:"version_added"`
		VersionRemoved any    `json:"version_removed"`
		Partial        bool   `json:"partial_implementation"`
		Prefix         string `json:"prefix"`
		AltName        string `json:"alternative_name"`
		Flags          []any  `json:"flags"`
	}
	var list []statement
	if err := json.Unmarshal(raw, &list); err != nil {
		var one statement
		if json.Unmarshal(raw, &one) != nil {
			return "?"
		}
		list = []statement{one}
	}
	if len(list) == 0 {
		return "?"
	}
	s := list[0]
	var v string
	switch a := s.VersionAdded.(type) {
	case string:
		v = a
	case bool:
		if !a {
			return "no"
		}
		v = "yes"
	default:
		return "?"
	}
	var notes []string
	if r, ok := s.VersionRemoved.(string); ok {
		notes = append(notes, "removed in "+r)
	}
	if s.Partial {
		notes = append(notes, "partial")
	}
	if s.Prefix != "" {
		notes = append(notes, "prefix "+s.Prefix)
	}
	if s.AltName != "" {
		notes = append(notes, "as "+s.AltName)
	}
	if len(s.Flags) > 0 {
		notes = append(notes, "behind a flag")
	}
	if len(notes) > 0 {
		v += " (" + strings.Join(notes, ", ") + ")"
	}
	return v
}
