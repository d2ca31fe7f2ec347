// Package popular is the list of the most-used npm packages that
// `indexer popular --top N` warms: shipped with the project as
// data/popular.json, with where it came from, how and when, and
// refreshable from the registry's own search endpoint
// (`indexer popular refresh`).
//
// The file is JSON with one package per line, so that a refresh diffs by
// package:
//
//	{"source":"/-/v1/search?text=...&popularity=1.0&quality=0.0&maintenance=0.0",
//	 "method":"...", "date":"2026-11-30", "score":"...",
//	 "packages":[
//	  {"name":"typescript","score":534606482},
//	  ...]}
//
// Source never names a host: the registry is whatever npm is configured
// with where the list is refreshed.
package popular

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/pkgscope/pkgscope/data"
	"github.com/pkgscope/pkgscope/internal/npmspec"
)

// List is a ranked list of packages, most used first.
type List struct {
	// Source is where the ranking came from: a registry path and query
	// (no host), or a file name.
	Source string `json:"source"`
	// Method says how the ranking was made.
	Method string `json:"method"`
	// Date is when, as YYYY-MM-DD.
	Date string `json:"date"`
	// Score says what Package.Score measures.
	Score string `json:"score"`
	// Packages are ranked by Score, highest first.
	Packages []Package `json:"packages"`
}

// Package is one ranked package.
type Package struct {
	// Name is the package's name.
	Name string `json:"name"`
	// Score is what List.Score says, higher for more used.
	Score float64 `json:"score"`
}

// ErrInvalid is matched by every error Parse returns.
var ErrInvalid = errors.New("invalid popular-package list")

// Shipped returns the list shipped in the binary (data/popular.json).
func Shipped() (*List, error) {
	l, err := Parse(data.Popular)
	if err != nil {
		return nil, fmt.Errorf("the shipped data/popular.json: %w", err)
	}
	return l, nil
}

// Parse decodes and checks a list: every name valid, none twice, scores
// not increasing, provenance present.
func Parse(b []byte) (*List, error) {
	var l List
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if l.Packages == nil {
		l.Packages = []Package{} // as Encode writes an empty list
	}
	return &l, nil
}

// Validate checks what Parse checks.
func (l *List) Validate() error {
	if l.Source == "" || l.Method == "" || l.Date == "" || l.Score == "" {
		return fmt.Errorf("%w: source, method, date and score must all be set", ErrInvalid)
	}
	seen := make(map[string]bool, len(l.Packages))
	for i, p := range l.Packages {
		if err := npmspec.ValidateName(p.Name); err != nil {
			return fmt.Errorf("%w: package %d: %v", ErrInvalid, i, err)
		}
		if seen[p.Name] {
			return fmt.Errorf("%w: %s is listed twice", ErrInvalid, p.Name)
		}
		seen[p.Name] = true
		if i > 0 && p.Score > l.Packages[i-1].Score {
			return fmt.Errorf("%w: %s (score %g) ranks below %s (score %g)", ErrInvalid, p.Name, p.Score, l.Packages[i-1].Name, l.Packages[i-1].Score)
		}
	}
	return nil
}

// Top returns the names of the first n packages (all when n exceeds the
// list).
func (l *List) Top(n int) []string {
	n = max(0, min(n, len(l.Packages)))
	names := make([]string, n)
	for i := range names {
		names[i] = l.Packages[i].Name
	}
	return names
}

// Encode writes the list in the file's format: one package per line.
func (l *List) Encode() ([]byte, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	head, err := json.Marshal(struct {
		Source string `json:"source"`
		Method string `json:"method"`
		Date   string `json:"date"`
		Score  string `json:"score"`
	}{l.Source, l.Method, l.Date, l.Score})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(head[:len(head)-1])
	b.WriteString(`,"packages":[`)
	for i, p := range l.Packages {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(p.Name)
		fmt.Fprintf(&b, "\n {\"name\":%s,\"score\":%s}", name, strconv.FormatFloat(p.Score, 'f', -1, 64))
	}
	b.WriteString("\n]}\n")
	return b.Bytes(), nil
}
