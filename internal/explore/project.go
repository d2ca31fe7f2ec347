package explore

import (
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/pathglob"
)

// What a project's answers (internal/project) share with a package's, so
// both keep one contract (page.go): the same match shape and cost, and
// include/exclude read as ripgrep reads -g.

// MatchOf turns an index match into an answer's GrepMatch.
func MatchOf(mt index.Match) GrepMatch { return grepMatch(mt) }

// MatchCost is what a match costs a page: the larger of its JSON and its
// MCP text.
func MatchCost(m GrepMatch) int { return max(Cost(m), textCost(m)) }

// GrepFilter compiles include and exclude as grep reads them (a glob
// without a slash matches a name at any depth, one with a slash the path
// from the root); an error is an *InputError.
func GrepFilter(include, exclude []string, lim pathglob.Limits) (func(string) bool, error) {
	return grepFilter(include, exclude, lim)
}
