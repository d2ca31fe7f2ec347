package explore

// Paging: the contract every answer keeps (list, glob, read, grep, and the
// actions still to come: diff, project-wide explore).
//
// The caller is usually a language model, whose context window is what an
// answer spends. So:
//
//  1. Every answer fits a byte budget: Limits.AnswerBytes (32 KiB) for
//     list, glob and grep, Limits.ReadAnswerBytes (100 KiB, about the
//     largest tool output the most used agent clients accept) for read;
//     a request raises it with maxBytes up to Limits.MaxAnswerBytes. The
//     budget bounds the JSON answer and the MCP text alike: an item is
//     charged the larger of its JSON and text sizes, and the header
//     (Answer, with the next request) is reserved before items are added.
//     The first item of a page is always taken, so paging always advances;
//     only an item larger than the whole budget (a grep match with 20
//     context lines under a tiny maxBytes) can overflow it. A long line's
//     windows are not such an item: those past the budget go to the
//     match's moreNext (grep.go). diff cuts a
//     line longer than a page inside it, at a rune boundary, so its pages
//     never overflow.
//  2. A cut answer says so (Answer.Truncated, TruncatedBy) and carries
//     Answer.Next: the complete Request that continues it, the version
//     pinned to the exact one answered. Next holds a Cursor, which only
//     the action that wrote it reads.
//  3. Following Next from the first answer visits every item (file,
//     entry, line, match) exactly once. Ranking (grep's declarations
//     first) and per-file caps reorder items across pages; they never
//     drop one. Each action defines a total order on its items and its
//     cursor names the last item given, so a page is "the items after the
//     cursor, in order, while the budget lasts".
//
// An action built on this: decides its order, calls Service.Budget, then
// for each item in order after the cursor calls Budget.Take with the
// item's cost (Cost), stopping at the first refusal and setting
// Answer.Cut with the Request that resumes after the last item taken.

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Answer heads every explore answer (a project's too): what was answered, why that version,
// what was corrected, and how to go on when the budget cut it.
type Answer struct {
	// PackageName and Version are what was answered; a project answer
	// (internal/project) names the Project instead.
	PackageName string `json:"packageName,omitempty"`
	Version     string `json:"version,omitempty"`
	Project     string `json:"project,omitempty"`
	// ResolvedFrom says why this version: "exact", "range ^18",
	// "dist-tag next", "latest: no version given", or the reason a
	// project-aware caller filled in (a lockfile).
	ResolvedFrom string `json:"resolvedFrom,omitempty"`
	// Source is "jsdelivr" when the registry could not serve the version
	// (or not within the cold budget) and jsDelivr answered; omitted when
	// the mirror's store answered.
	Source string `json:"source,omitempty"`
	// Browse is the web page of what was answered, when the mirror knows
	// its address (Options.BrowseURL): the version's folder page, to which
	// a file's path and "#L12" point at a line; for read, the file's page
	// at the first line read.
	Browse string `json:"browse,omitempty"`
	// Notes are the corrections applied to the request (a name@version
	// split, a node_modules/ prefix stripped) and hints, one line each.
	Notes []string `json:"notes,omitempty"`
	// Truncated says the answer stops before the end; TruncatedBy names
	// what stopped it (maxBytes, limit, maxMatches, lineWidth, timeout)
	// and Next continues it.
	Truncated   bool     `json:"truncated"`
	TruncatedBy string   `json:"truncatedBy,omitempty"`
	Next        *Request `json:"next,omitempty"`
}

// Values of Answer.TruncatedBy this file defines.
const (
	// TruncMaxBytes: the answer's byte budget (maxBytes) is spent.
	TruncMaxBytes = "maxBytes"
)

// Note adds one line to a.Notes.
func (a *Answer) Note(format string, args ...any) {
	a.Notes = append(a.Notes, fmt.Sprintf(format, args...))
}

// Cut marks a truncated by why, continued by next (nil: not continuable).
func (a *Answer) Cut(why string, next *Request) {
	a.Truncated, a.TruncatedBy, a.Next = true, why, next
}

// MinAnswerBytes is the smallest maxBytes a request may ask for: a page
// must hold its header, the next request and at least a few items.
const MinAnswerBytes = 4096

// Budget counts the bytes an answer spends against its limit.
type Budget struct {
	limit, used, items int
}

// Budget returns the budget of one answer: maxBytes when the request
// gives one (at least MinAnswerBytes, at most Limits.MaxAnswerBytes),
// else the default for read or for the other actions.
func (s *Service) Budget(maxBytes int, read bool) (*Budget, error) {
	switch {
	case maxBytes < 0:
		return nil, &InputError{Field: "maxBytes", Err: errors.New("must not be negative")}
	case maxBytes == 0 && read:
		maxBytes = s.lim.ReadAnswerBytes
	case maxBytes == 0:
		maxBytes = s.lim.AnswerBytes
	case maxBytes < MinAnswerBytes:
		return nil, &InputError{Field: "maxBytes", Err: fmt.Errorf("%d is below the smallest answer (%d bytes)", maxBytes, MinAnswerBytes)}
	case s.lim.MaxAnswerBytes > 0 && maxBytes > s.lim.MaxAnswerBytes:
		return nil, &LimitError{Setting: "max-answer-bytes", Msg: fmt.Sprintf("maxBytes %d is above the largest answer (%d bytes); follow next to page instead", maxBytes, s.lim.MaxAnswerBytes)}
	}
	if maxBytes <= 0 {
		maxBytes = 32 << 10 // a Service built without Limits (tests)
	}
	return &Budget{limit: maxBytes}, nil
}

// Limit is the budget's size in bytes.
func (b *Budget) Limit() int { return b.limit }

// Reserve sets aside n bytes (the header, the next request) before any
// item is taken.
func (b *Budget) Reserve(n int) { b.used += n }

// ReserveHeader reserves room for a and for a next request like req
// (whose cursor may name a path of up to 1 KiB), plus notes still to come.
func (b *Budget) ReserveHeader(a Answer, req Request) {
	b.Reserve(Cost(a) + 2*Cost(req) + 1024 + 512)
}

// Take charges n bytes for one item and reports whether it fits. The
// first item always fits, so a page always advances.
func (b *Budget) Take(n int) bool {
	if b.items > 0 && b.used+n > b.limit {
		return false
	}
	b.used += n
	b.items++
	return true
}

// Left is what the budget has left.
func (b *Budget) Left() int { return b.limit - b.used }

// Cost is the size of v encoded as JSON (the API's answer; the MCP text
// renders each item in no more bytes), plus the comma between items.
func Cost(v any) int {
	data, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(data) + 1
}

// StringCost is the size of s as a JSON string: encoding/json escapes
// <, >, & (6 bytes each), control bytes (2 bytes for \b, \f, \n, \r and
// \t, 6 for the others) and invalid UTF-8, so a .d.ts full of generics
// costs more than its length.
func StringCost(s string) int {
	n := 2
	for i := 0; i < len(s); {
		if c := asciiCost[s[i]]; c != 0 {
			n += int(c)
			i++
			continue
		}
		c, size := runeCost(s, i)
		n += c
		i += size
	}
	return n
}

// asciiCost is runeCost of each ASCII byte, looked up: 0 for the other
// bytes, which runeCost decodes. Branching on each byte's class made
// StringCost 4 ns a byte, a sixth of a warm read's CPU (issue 27).
var asciiCost = func() (t [256]uint8) {
	for c := range utf8.RuneSelf {
		cost, _ := runeCost(string(rune(c)), 0)
		t[c] = uint8(cost)
	}
	return t
}()

// runeCost is the JSON-string size of the rune (or invalid byte) at s[i],
// and its length in s.
func runeCost(s string, i int) (cost, size int) {
	c := s[i]
	if c < utf8.RuneSelf {
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
			return 2, 1
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			return 6, 1
		}
		return 1, 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == utf8.RuneError && size == 1:
		return 6, 1
	case r == '\u2028' || r == '\u2029':
		return 6, size
	}
	return size, size
}

// continued returns the request that continues req at cursor, pinned to
// the exact version answered.
func continued(req Request, a *Answer, cursor string) *Request {
	next := req
	next.PackageName, next.Version, next.Cursor = a.PackageName, a.Version, cursor
	return &next
}
