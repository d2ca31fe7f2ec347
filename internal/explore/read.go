package explore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/pkgscope/pkgscope/internal/pkgpath"
	"github.com/pkgscope/pkgscope/internal/store"
)

// ReadRequest asks for lines of one file.
type ReadRequest struct {
	Target
	Path string `json:"path"`
	// Offset is the first line, 1-based (default 1).
	Offset int `json:"offset,omitempty"`
	// Limit is the number of lines (default Limits.DefaultReadLimit).
	Limit int `json:"limit,omitempty"`
	// Column, when set, reads one window of line Offset starting at this
	// 1-based byte column: the way to page through a line too wide to show
	// whole (a minified bundle is one multi-megabyte line).
	Column int `json:"column,omitempty"`
}

// ReadResult is the answer to read. Content is numbered like cat -n.
type ReadResult struct {
	PackageName string `json:"packageName"`
	Version     string `json:"version"`
	Path        string `json:"path"`
	Content     string `json:"content"`
	StartLine   int    `json:"startLine"`
	EndLine     int    `json:"endLine"`
	TotalLines  int    `json:"totalLines"`
	// Truncated is true when lines remain after EndLine; TruncatedBy says
	// whether the line limit or the byte cap (maxReadBytes) stopped it.
	Truncated   bool   `json:"truncated"`
	TruncatedBy string `json:"truncatedBy,omitempty"`
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
	// Source is "jsdelivr" when jsDelivr's CDN answered (see
	// ListResult.Source); omitted when the store did.
	Source string `json:"source,omitempty"`
}

// Read returns lines Offset..Offset+Limit-1 of a file.
func (s *Service) Read(ctx context.Context, r ReadRequest) (*ReadResult, error) {
	path, err := pkgpath.CleanQuery(r.Path)
	if err != nil {
		return nil, &InputError{Field: "path", Err: err}
	}
	if r.Offset < 0 || r.Limit < 0 || r.Column < 0 {
		return nil, &InputError{Field: "offset", Err: errors.New("offset, limit and column must not be negative")}
	}
	if r.Offset == 0 {
		r.Offset = 1
	}
	if r.Limit == 0 {
		r.Limit = s.lim.DefaultReadLimit
	}
	if r.Limit > s.lim.MaxReadLimit {
		return nil, &LimitError{Setting: "max-read-limit", Msg: fmt.Sprintf("limit %d is above the most lines one read returns (%d); read in pages with offset", r.Limit, s.lim.MaxReadLimit)}
	}
	f, body, o, err := s.file(ctx, r.Target, path)
	if err != nil {
		return nil, err
	}
	res := &ReadResult{Source: o.Source, PackageName: o.Name, Version: o.Version, Path: f.Path, Size: f.Size, StartLine: r.Offset}
	if f.Binary {
		res.Binary = true
		res.StartLine = 0
		return res, nil
	}
	// Lines are found by walking the body, never by splitting it: a file of
	// newlines would otherwise cost a slice header per line (a 256 MiB file,
	// 6 GiB) for a read of one line.
	total := countLines(body)
	res.TotalLines = total
	if r.Offset > total && !(r.Offset == 1 && total == 0) {
		return nil, &InputError{Field: "offset", Err: fmt.Errorf("offset %d is past the end of the file (%d lines)", r.Offset, total)}
	}
	rest := skipLines(body, r.Offset-1)
	if r.Column > 0 {
		line, _ := nextLine(rest)
		if total == 0 || r.Column > len(line) {
			return nil, &InputError{Field: "column", Err: fmt.Errorf("column %d is past the end of line %d", r.Column, r.Offset)}
		}
		s.window(res, line, r.Offset, r.Column)
		return res, nil
	}
	var out bytes.Buffer
	end := r.Offset - 1
	for i := r.Offset - 1; i < total && i < r.Offset-1+r.Limit; i++ {
		whole, next := nextLine(rest)
		line := whole
		cut := len(line) > s.lim.MaxLineWidth
		if cut {
			line = line[:runeStart(line, s.lim.MaxLineWidth)]
		}
		entry := len(line) + 8
		if out.Len()+entry > s.lim.MaxReadBytes && i > r.Offset-1 {
			res.TruncatedBy = "maxReadBytes"
			break
		}
		writeNumbered(&out, i+1, line)
		if cut {
			res.LinesCut++
			fmt.Fprintf(&out, " [… line cut at %d of %d bytes; read the rest with offset=%d, column=%d]", len(line), len(whole), i+1, len(line)+1)
		}
		out.WriteByte('\n')
		end = i + 1
		rest = next
	}
	res.Content = string(bytes.TrimSuffix(out.Bytes(), []byte("\n")))
	res.EndLine = end
	if end < total {
		res.Truncated = true
		if res.TruncatedBy == "" {
			res.TruncatedBy = "limit"
		}
	}
	return res, nil
}

// window fills res with one MaxLineWidth window of line n from column.
func (s *Service) window(res *ReadResult, line []byte, n, column int) {
	res.StartLine, res.EndLine = n, n
	res.Column, res.LineBytes = column, len(line)
	from := runeStart(line, column-1)
	to := from + s.lim.MaxLineWidth
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
	for j := i; j > 0 && j > i-utf8.UTFMax; j-- {
		if utf8.RuneStart(b[j]) {
			return j
		}
	}
	return i
}

// countLines counts lines like cat: split on \n, no empty last line for a
// trailing newline, none at all for an empty file.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// skipLines returns b after its first n lines.
func skipLines(b []byte, n int) []byte {
	for ; n > 0 && len(b) > 0; n-- {
		_, b = nextLine(b)
	}
	return b
}

// nextLine splits b into its first line (without the \n) and the rest.
func nextLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// File returns one file's entry and body.
func (s *Service) File(ctx context.Context, t Target, rawPath string) (store.File, []byte, *Opened, error) {
	path, err := pkgpath.CleanQuery(rawPath)
	if err != nil {
		return store.File{}, nil, nil, &InputError{Field: "path", Err: err}
	}
	return s.file(ctx, t, path)
}

func (s *Service) file(ctx context.Context, t Target, path string) (store.File, []byte, *Opened, error) {
	o, err := s.Open(ctx, t)
	if err != nil {
		return store.File{}, nil, nil, err
	}
	return s.fileOf(ctx, o, path) // fallback.go: reads the store or the fallback
}

// NotFoundError is a file (or other thing) that does not exist: 404.
type NotFoundError struct{ What string }

func (e *NotFoundError) Error() string { return "no such " + e.What }

// LimitError is a request over a configured limit: 422, naming the setting.
type LimitError struct{ Setting, Msg string }

func (e *LimitError) Error() string { return e.Msg + " (setting " + e.Setting + ")" }
