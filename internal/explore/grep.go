package explore

import (
	"context"
	"errors"
)

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
	// Text is the line, or a window around the match for a long line.
	Text   string   `json:"text"`
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
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
}

// Grep searches a version's files. (Wired to the trigram index in the
// grep issue; until then it answers ErrGrepUnavailable.)
func (s *Service) Grep(ctx context.Context, r GrepRequest) (*GrepResult, error) {
	return nil, ErrGrepUnavailable
}

// ErrGrepUnavailable is answered while no search engine is wired.
var ErrGrepUnavailable = errors.New("grep is not available on this mirror yet")
