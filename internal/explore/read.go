package explore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/pkgpath"
)

// ReadResult is the answer to read. Content is numbered like cat -n.
type ReadResult struct {
	Answer
	Path       string `json:"path"`
	Content    string `json:"content"`
	StartLine  int    `json:"startLine"`
	EndLine    int    `json:"endLine"`
	TotalLines int    `json:"totalLines"`
	// LinesCut counts lines shown only up to the line width; each carries
	// a marker naming the column to continue from.
	LinesCut int   `json:"linesCut,omitempty"`
	Size     int64 `json:"size"`
	// Binary files are reported with their size, never dumped.
	Binary bool `json:"binary,omitempty"`
	// For a column window: the window's first column, the column the next
	// window starts at (0 at the end of the line) and the line's length.
	Column     int `json:"column,omitempty"`
	NextColumn int `json:"nextColumn,omitempty"`
	LineBytes  int `json:"lineBytes,omitempty"`
	// Folder is set when path is a folder: Entries then says what is in
	// it, one level down, as list does.
	Folder  bool    `json:"folder,omitempty"`
	Entries []Entry `json:"entries,omitempty"`
}

// Read returns lines Offset..Offset+Limit-1 of a file, as many as fit its
// budget; Next continues with the following lines (or the rest of a line
// read in column windows).
func (s *Service) Read(ctx context.Context, r Request) (*ReadResult, error) {
	r.Action = "read"
	if r.Path == "" {
		return nil, &InputError{Field: "path", Err: errors.New("give the path of a file, e.g. 'package.json' (list or glob to find one)")}
	}
	if _, err := cleanPath(r.Path); err != nil {
		return nil, err
	}
	if r.Offset < 0 || r.Limit < 0 || r.Column < 0 {
		return nil, &InputError{Field: "offset", Err: errors.New("offset, limit and column must not be negative")}
	}
	if r.Offset == 0 {
		r.Offset = 1
	}
	limit := r.Limit
	if limit == 0 {
		limit = s.lim.DefaultReadLimit
	}
	if limit > s.lim.MaxReadLimit {
		return nil, &LimitError{Setting: "max-read-limit", Msg: fmt.Sprintf("limit %d is above the most lines one read returns (%d); read in pages with offset", limit, s.lim.MaxReadLimit)}
	}
	b, o, a, err := s.start(ctx, &r, true)
	if err != nil {
		return nil, err
	}
	res := &ReadResult{Answer: a, StartLine: r.Offset}
	path, isFolder, err := s.resolvePath(o, &res.Answer, r.Path)
	if err != nil {
		return nil, err
	}
	if res.Browse != "" && !isFolder {
		res.Browse += pkgpath.Escape(path)
		if r.Offset > 1 {
			res.Browse += "?offset=" + strconv.Itoa(r.Offset)
		}
		res.Browse += "#L" + strconv.Itoa(r.Offset)
	}
	if isFolder {
		return s.readFolder(res, o, path, b, r), nil
	}
	f, body, o, err := s.FileOfStream(ctx, o, path) // streams.go: the store's stream, or the fallback's bytes
	if err != nil {
		return nil, err
	}
	defer body.Close()
	res.Source, res.Path, res.Size = o.Source, f.Path, f.Size
	b.ReserveHeader(res.Answer, r)
	if f.Binary {
		res.Binary = true
		res.StartLine = 0
		return res, nil
	}
	// Lines are found by walking the body as a stream, never by splitting
	// it: a file of newlines would otherwise cost a slice header per line
	// (a 256 MiB file, 6 GiB) for a read of one line, and a body over
	// WholeBodyBytes is never held whole (readstream.go).
	lines, err := newLineSource(body)
	if err != nil {
		return nil, fmt.Errorf("reading %s from %s@%s: %w", path, o.Name, o.Version, err)
	}
	total := lines.total
	res.TotalLines = total
	if r.Offset > total && !(r.Offset == 1 && total == 0) {
		return nil, &InputError{Field: "offset", Err: fmt.Errorf("offset %d is past the end of the file (%s)", r.Offset, english.Count(total, "line"))}
	}
	lines.skip(r.Offset - 1)
	if r.Column > 0 {
		// Enough of the line for window, whose runeStart looks up to
		// UTFMax bytes on; window sees the whole line when it is short.
		// With maxBytes, a window is as wide as the budget holds: 10
		// calls of 2,000 bytes for 20 KB of a bundle line was what a
		// model asking for 20,000 got (issue 28).
		width := s.lim.MaxLineWidth
		if r.MaxBytes > 0 {
			width = max(width, b.Left())
		}
		line, n := lines.next(r.Column - 1 + width + utf8.UTFMax)
		if total == 0 || r.Column > n {
			return nil, &InputError{Field: "column", Err: fmt.Errorf("column %d is past the end of line %d", r.Column, r.Offset)}
		}
		if width > s.lim.MaxLineWidth {
			// What fits as JSON: a bundle's quotes cost two bytes each.
			width = max(s.lim.MaxLineWidth, fitting(line[min(r.Column-1, len(line)):], b.Left()-16))
		}
		s.window(res, line, r.Offset, r.Column, width)
		res.LineBytes = n
		if res.NextColumn > 0 {
			next := r
			next.Path, next.Column = f.Path, res.NextColumn // the corrected path: its note is said once
			res.Next = continued(next, &res.Answer, "")
		}
		return res, nil
	}
	var out bytes.Buffer
	// Room for the lines asked for, numbered, at the file's mean line
	// length: grown by doubling, the page was copied several times.
	if shown := int64(min(total-(r.Offset-1), limit)); shown > 0 {
		out.Grow(max(0, int(min(f.Size*shown/int64(total)+8*shown, int64(min(s.lim.MaxReadBytes, b.Left()))))))
	}
	end := r.Offset - 1
	for i := r.Offset - 1; i < total && i < r.Offset-1+limit; i++ {
		line, whole := lines.next(s.lim.MaxLineWidth + utf8.UTFMax)
		cut := whole > s.lim.MaxLineWidth
		if cut {
			line = line[:runeStart(line, s.lim.MaxLineWidth)]
		}
		start := out.Len()
		writeNumbered(&out, i+1, line)
		if cut {
			out.WriteString(lineCut(i+1, len(line), whole))
		}
		out.WriteByte('\n')
		if out.Len() > s.lim.MaxReadBytes && i > r.Offset-1 {
			out.Truncate(start)
			res.TruncatedBy = "maxReadBytes"
			break
		}
		// The line's own bytes only: out.String() copied the whole page
		// so far for every line, a quadratic read (issue 27).
		if !b.Take(bytesCost(out.Bytes()[start:]) - 2) {
			out.Truncate(start)
			res.TruncatedBy = TruncMaxBytes
			break
		}
		if cut {
			res.LinesCut++
		}
		end = i + 1
	}
	if lines.err != nil {
		return nil, fmt.Errorf("reading %s from %s@%s: %w", path, o.Name, o.Version, lines.err)
	}
	res.Content = string(bytes.TrimSuffix(out.Bytes(), []byte("\n")))
	res.EndLine = end
	if end < total {
		if res.TruncatedBy == "" {
			res.TruncatedBy = "limit"
		}
		next := r
		next.Path, next.Offset, next.Column = f.Path, end+1, 0 // the corrected path: its note is said once
		res.Cut(res.TruncatedBy, continued(next, &res.Answer, ""))
		if shown := end - r.Offset + 1; r.Offset == 1 && r.Limit == 0 && shown > 0 && total-end > 2*shown {
			// Paging through a big file costs a read per page; a
			// grep of the file finds the lines worth reading. The
			// note fits the room ReserveHeader keeps for notes.
			include := fmt.Sprintf("include: [%q]", f.Path)
			if len(include) > 200 {
				include = "include set to this file's path"
			}
			res.Note("a large file: %d of %d lines (%d bytes) shown, about %s like this one to the end; to find something in it, grep with %s, then read from the line it names with offset",
				shown, total, f.Size, english.Count((total-end+shown-1)/shown, "more read"), include)
		}
	}
	return res, nil
}

// resolvePath finds the file (or folder) an agent meant by raw, applying
// the corrections of candidates; a miss names the closest paths.
func (s *Service) resolvePath(o *Opened, a *Answer, raw string) (string, bool, error) {
	path, err := cleanPath(raw)
	if err != nil {
		return "", false, err
	}
	for _, p := range candidates(o.Name, path) {
		_, file := lookup(o.Files, p)
		folder := !file && len(under(o.Files, p)) > 0
		if !file && !folder {
			continue
		}
		if p != path {
			a.Note("path %q was read as %q (paths are relative to the package root)", raw, p)
		}
		return p, folder, nil
	}
	return "", false, &NotFoundError{What: fmt.Sprintf("file %q in %s@%s", path, o.Name, o.Version), Hint: closestPaths(o.Name, o.Files, path, false)}
}

// readFolder answers a read of a folder with what it holds, one level
// down, as list with depth 1 would.
func (s *Service) readFolder(res *ReadResult, o *Opened, dir string, b *Budget, r Request) *ReadResult {
	res.Path, res.Folder, res.StartLine = dir, true, 0
	res.Source = o.Source
	res.Note("%q is a folder: its files and folders are listed; read one of them", dir)
	b.ReserveHeader(res.Answer, r)
	lr := &ListResult{Answer: res.Answer, Path: dir, Depth: 1}
	next := Request{Action: "list", PackageName: r.PackageName, Version: r.Version, Path: dir, Depth: 1, MaxBytes: r.MaxBytes}
	s.treeOf(o).below(dir).page(lr, 1, b, next)
	res.Answer, res.Entries = lr.Answer, lr.Entries
	return res
}

// bytesCost is StringCost of b, read where it is: a copy of each line
// as a string was a tenth of a read's allocations.
func bytesCost(b []byte) int { return StringCost(unsafe.String(unsafe.SliceData(b), len(b))) }

// fitting is how many bytes of b, from its start, cost at most budget
// as a JSON string (StringCost).
func fitting(b []byte, budget int) int {
	cost, i := 2, 0
	for i < len(b) {
		c, size := runeCost(string(b[i:min(i+utf8.UTFMax, len(b))]), 0)
		if cost+c > budget {
			break
		}
		cost += c
		i += size
	}
	return i
}

// window fills res with one window of line n from column, width bytes
// wide (MaxLineWidth, or what maxBytes holds).
func (s *Service) window(res *ReadResult, line []byte, n, column, width int) {
	res.StartLine, res.EndLine = n, n
	res.Column, res.LineBytes = column, len(line)
	from := runeStart(line, column-1)
	res.Column = from + 1 // a column inside a character: the window starts at the character
	to := from + width
	if to >= len(line) {
		to = len(line)
	} else {
		to = runeStart(line, to)
		res.NextColumn = to + 1
		res.Truncated, res.TruncatedBy = true, "lineWidth"
	}
	var out bytes.Buffer
	writeNumbered(&out, n, line[from:to])
	res.Content = out.String()
}

// lineCut is the marker after a line shown only up to its first shown
// bytes (of whole): where read goes on with it.
func lineCut(line, shown, whole int) string {
	return fmt.Sprintf(" [… line cut at %d of %d bytes; read the rest with offset=%d, column=%d]", shown, whole, line, shown+1)
}

func writeNumbered(out *bytes.Buffer, n int, line []byte) {
	num := strconv.Itoa(n)
	for i := len(num); i < 6; i++ {
		out.WriteByte(' ')
	}
	out.WriteString(num)
	out.WriteByte('\t')
	out.Write(line)
}

// runeStart moves i back to the start of the UTF-8 sequence it falls in,
// so a cut never splits a character (at most 3 bytes back).
func runeStart(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	for j := i; j >= 0 && j > i-utf8.UTFMax; j-- {
		if utf8.RuneStart(b[j]) {
			return j
		}
	}
	return i
}

// NotFoundError is a file (or other thing) that does not exist: 404.
// Hint, when set, says what exists instead.
type NotFoundError struct{ What, Hint string }

func (e *NotFoundError) Error() string {
	if e.Hint == "" {
		return "no such " + e.What
	}
	return "no such " + e.What + "; " + e.Hint
}

// LimitError is a request over a configured limit: 422, naming the setting.
type LimitError struct{ Setting, Msg string }

func (e *LimitError) Error() string { return e.Msg + " (setting " + e.Setting + ")" }
