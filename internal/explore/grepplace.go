package explore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// GrepPlace is where a content grep's page sits among all its matching
// lines: "lines 164–330 of 427 in 12 files". A paged grep that gave only
// "163 matching lines on this page" left an agent guessing how many pages
// were left (issue 28: typescript's checkGrammar\w+ took 3 pages, 427
// lines, and no page said so).
type GrepPlace struct {
	// First and Last number this page's matching lines among all (1-based).
	First int `json:"first"`
	Last  int `json:"last"`
	// Lines and Files are the grep's matching lines and files in all;
	// AtLeast says the count stopped at a limit (the count's own page,
	// max-answer-bytes of files) and there are more.
	Lines   int  `json:"lines"`
	Files   int  `json:"files"`
	AtLeast bool `json:"atLeast,omitempty"`
}

// placeCursor carries a page's place into the next request's cursor,
// before the grep's own: "p<last>.<lines>.<files>.<atLeast>|<cursor>", so
// a later page says where it sits without counting again.
const placeCursor = 'p'

// withPlace answers a content grep with its place: the first page of a
// cut grep counts every matching line (one count-mode search of the
// version, run only when the page was cut: an uncut page is its own
// total), later pages read theirs from the cursor. A count that fails
// leaves the place out; the page is answered as it was.
func (s *Service) withPlace(ctx context.Context, r Request) (*GrepResult, error) {
	prev, cursor, err := cutPlace(r.Cursor)
	if err != nil {
		return nil, err
	}
	r.Cursor = cursor
	res, err := s.grep(ctx, r, true)
	if err != nil || res.OutputMode != OutputContent || strings.HasPrefix(r.Cursor, "gl") {
		return res, err
	}
	n := pageLines(res.Matches)
	place := prev
	switch {
	case prev == nil && !res.Truncated:
		return res, nil // the page is the whole grep: its header is the total
	case prev == nil:
		place = s.countAll(ctx, r)
		if place == nil {
			return res, nil
		}
	}
	place.First, place.Last = place.Last+1, place.Last+n
	// The version's files are fixed: never say less than was shown (a
	// count stopped by grep-count-time may have counted fewer).
	place.Lines = max(place.Lines, place.Last)
	if place.AtLeast {
		place.Files = max(place.Files, pageFiles(res.Matches))
	}
	res.Place = place
	if res.Next != nil && res.Next.Cursor != "" && !strings.HasPrefix(res.Next.Cursor, "gl") {
		res.Next.Cursor = fmt.Sprintf("%c%d.%d.%d.%d|%s", placeCursor, place.Last, place.Lines, place.Files, b2i(place.AtLeast), res.Next.Cursor)
	}
	return res, nil
}

// pageLines counts a page's matching lines: one a match, a same-bytes
// file's own.
func pageLines(ms []GrepMatch) int {
	n := 0
	for _, m := range ms {
		if m.SameBytesAs != "" {
			n += m.MatchingLines
		} else {
			n++
		}
	}
	return n
}

// pageFiles counts the files a page's matches are in.
func pageFiles(ms []GrepMatch) int {
	seen := map[string]bool{}
	for _, m := range ms {
		seen[m.File] = true
	}
	return len(seen)
}

// countAll counts r's matching lines and files with one count-mode grep
// of up to max-answer-bytes and grep-count-time (the search stops with
// what it counted: AtLeast); nil when it fails.
func (s *Service) countAll(ctx context.Context, r Request) *GrepPlace {
	if s.lim.GrepCountTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.lim.GrepCountTime)
		defer cancel()
	}
	c := r
	c.OutputMode, c.Cursor, c.MaxBytes, c.MaxMatches, c.MaxMatchesPerFile, c.ContextLines = OutputCount, "", s.lim.MaxAnswerBytes, 0, 0, nil
	res, err := s.grep(ctx, c, false)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return &GrepPlace{AtLeast: true} // out of time before counting: the page's own lines and files
		}
		return nil
	}
	p := &GrepPlace{Files: len(res.Files), AtLeast: res.Truncated}
	for _, f := range res.Files {
		p.Lines += f.Count
	}
	return p
}

// cutPlace splits a cursor withPlace wrote into the place so far (with
// Last the last line given) and the grep's own cursor.
func cutPlace(cursor string) (*GrepPlace, string, error) {
	if cursor == "" || cursor[0] != placeCursor {
		return nil, cursor, nil
	}
	head, rest, ok := strings.Cut(cursor[1:], "|")
	f := strings.Split(head, ".")
	bad := &InputError{Field: "cursor", Err: errors.New("not a grep cursor: send the next request of a grep answer as it was given")}
	if !ok || len(f) != 4 {
		return nil, "", bad
	}
	var n [4]int
	for i, x := range f {
		v, err := strconv.Atoi(x)
		if err != nil || v < 0 {
			return nil, "", bad
		}
		n[i] = v
	}
	return &GrepPlace{Last: n[0], Lines: n[1], Files: n[2], AtLeast: n[3] == 1}, rest, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
