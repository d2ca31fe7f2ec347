package explore

import "github.com/pkgscope/pkgscope/internal/pathglob"

// DefaultLimits returns the read and glob limits the mirror starts with.
// 2000 lines is what an agent's own file-read tool shows by default; 512
// KiB of content is about 130k tokens, more than one answer should spend.
// MaxMatches and MaxContextLines are 0: the searcher's own caps apply.
func DefaultLimits() Limits {
	return Limits{
		DefaultReadLimit: 2000,
		MaxReadLimit:     20_000,
		MaxLineWidth:     2000,
		MaxReadBytes:     512 << 10,
		Glob:             pathglob.DefaultLimits(),
		// A diff page is an answer's usual 32 KiB; 4 MiB pages serve
		// scripts on the REST route. 2·10^8 steps of line diff take about
		// a second (two 100,000-line files 1,000 lines apart need 10^8).
		DiffAnswerBytes:    32 << 10,
		MaxDiffAnswerBytes: 4 << 20,
		DiffMaxWork:        200_000_000,
	}
}
