package explore

import (
	"context"
	"errors"
	"fmt"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/pathglob"
)

// Searcher runs a grep over one stored version (internal/search).
type Searcher interface {
	Search(ctx context.Context, name, version string, q index.Query) (index.Result, error)
}

// GrepRequest searches the contents of every text file of a version.
type GrepRequest struct {
	Target
	// Pattern is an RE2 regular expression (a literal with FixedStrings).
	Pattern         string `json:"pattern"`
	CaseInsensitive bool   `json:"caseInsensitive,omitempty"`
	FixedStrings    bool   `json:"fixedStrings,omitempty"`
	WholeWord       bool   `json:"wholeWord,omitempty"`
	// Include and Exclude are globs over file paths (doublestar syntax).
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	// ContextLines shows this many lines around each match, like grep -C.
	ContextLines int `json:"contextLines,omitempty"`
	// MaxMatches caps matching lines overall; MaxMatchesPerFile per file.
	MaxMatches        int `json:"maxMatches,omitempty"`
	MaxMatchesPerFile int `json:"maxMatchesPerFile,omitempty"`
}

// GrepMatch is one matching line.
type GrepMatch struct {
	File string `json:"file"`
	Line int    `json:"line"`
	// Column is the 1-based byte column of the first match in the line.
	Column int `json:"column"`
	// Text is the line, or, for a long line, a window of it around the
	// match starting at byte TextOffset of the line (read the line in full
	// with read's column windows).
	Text       string   `json:"text"`
	TextOffset int      `json:"textOffset,omitempty"`
	LineBytes  int      `json:"lineBytes,omitempty"`
	Before     []string `json:"before,omitempty"`
	After      []string `json:"after,omitempty"`
}

// SkippedFile is a file grep did not search, and why (e.g. "binary").
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// GrepResult is the answer to grep. Matches are ordered by file path, then
// line. Truncated says a cap cut the result and TruncatedBy which one.
type GrepResult struct {
	PackageName   string        `json:"packageName"`
	Version       string        `json:"version"`
	Matches       []GrepMatch   `json:"matches"`
	FilesSearched int           `json:"filesSearched"`
	FilesSkipped  int           `json:"filesSkipped"`
	Skipped       []SkippedFile `json:"skipped,omitempty"`
	Truncated     bool          `json:"truncated"`
	TruncatedBy   string        `json:"truncatedBy,omitempty"`
	// Source is "jsdelivr" when the registry could not serve the version
	// and the grep ran over files fetched from jsDelivr's CDN; omitted when
	// the store answered (then every text file was searched).
	Source string `json:"source,omitempty"`
	// Complete is set on jsDelivr answers: false when files the query
	// selected were not searched (the fetch budget ran out or a fetch
	// failed), with IncompleteReason naming the setting and
	// FilesNotSearched counting them.
	Complete         *bool  `json:"complete,omitempty"`
	IncompleteReason string `json:"incompleteReason,omitempty"`
	FilesNotSearched int    `json:"filesNotSearched,omitempty"`
}

// ErrGrepUnavailable is answered by a Service built without a Searcher.
var ErrGrepUnavailable = errors.New("grep is not available on this mirror")

// Grep searches every text file of a version through its trigram index.
func (s *Service) Grep(ctx context.Context, r GrepRequest) (*GrepResult, error) {
	if s.searcher == nil {
		return nil, ErrGrepUnavailable
	}
	if r.Pattern == "" {
		return nil, &InputError{Field: "pattern", Err: errors.New("give a pattern (an RE2 regular expression, or a literal with fixedStrings)")}
	}
	if r.MaxMatches < 0 || r.MaxMatchesPerFile < 0 || r.ContextLines < 0 {
		return nil, &InputError{Field: "maxMatches", Err: errors.New("maxMatches, maxMatchesPerFile and contextLines must not be negative")}
	}
	if m := s.lim.MaxMatches; m > 0 && r.MaxMatches > m {
		return nil, &LimitError{Setting: "max-matches", Msg: fmt.Sprintf("maxMatches %d is above the most one grep returns (%d); narrow the pattern or include/exclude", r.MaxMatches, m)}
	}
	if m := s.lim.MaxContextLines; m > 0 && r.ContextLines > m {
		return nil, &LimitError{Setting: "max-context-lines", Msg: fmt.Sprintf("contextLines %d is above the most one grep shows (%d)", r.ContextLines, m)}
	}
	globs := append([]string(nil), r.Include...)
	for _, x := range r.Exclude {
		globs = append(globs, "!"+x)
	}
	m, err := pathglob.Compile(globs, s.lim.Glob)
	if err != nil {
		return nil, &InputError{Field: "include", Err: err}
	}
	o, err := s.Open(ctx, r.Target)
	if err != nil {
		return nil, err
	}
	q := index.Query{
		Pattern: r.Pattern, CaseInsensitive: r.CaseInsensitive, FixedStrings: r.FixedStrings, WholeWord: r.WholeWord,
		ContextLines: r.ContextLines, MaxMatches: r.MaxMatches, MaxMatchesPerFile: r.MaxMatchesPerFile,
	}
	if !m.Empty() {
		q.Filter = m.Match
	}
	sr, err := s.pkgs.Search(ctx, o, q)
	if err != nil {
		return nil, err
	}
	return grepAnswer(sr), nil // fallback.go
}

// grepResult turns an index result into the answer.
func grepResult(o *Opened, res index.Result) *GrepResult {
	out := &GrepResult{
		PackageName: o.Name, Version: o.Version, Matches: make([]GrepMatch, len(res.Matches)),
		FilesSearched: res.FilesSearched, FilesSkipped: res.FilesSkipped,
		Truncated: res.Truncated, TruncatedBy: res.TruncatedBy,
	}
	for i, mt := range res.Matches {
		gm := GrepMatch{File: mt.File, Line: mt.Line, Column: mt.Column, Text: mt.Text, Before: mt.Before, After: mt.After}
		if mt.TextOffset > 0 || len(mt.Text) < mt.LineBytes {
			gm.TextOffset, gm.LineBytes = mt.TextOffset, mt.LineBytes
		}
		out.Matches[i] = gm
	}
	for _, sk := range res.Skipped {
		out.Skipped = append(out.Skipped, SkippedFile{Path: sk.Path, Reason: sk.Reason})
	}
	return out
}
