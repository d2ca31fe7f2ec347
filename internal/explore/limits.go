package explore

import (
	"runtime"
	"time"

	"github.com/pkgscope/pkgscope/internal/diff"
	"github.com/pkgscope/pkgscope/internal/pathglob"
)

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
		// 32 KiB is ~8k tokens; 100 KiB is about the largest tool output
		// the most used agent clients accept whole (page.go).
		AnswerBytes:     32 << 10,
		ReadAnswerBytes: 100 << 10,
		MaxAnswerBytes:  1 << 20,
		// Ten lines of one file show how it uses a name; the eleventh
		// rarely adds to that, while it delays every other file.
		MatchesPerFile: 10,
		// A listing's tables take about 80 bytes a file: 16 MB holds
		// twenty-three versions the size of next 16.4.6 (8,711 files).
		GrepScopeFiles: 200_000,
		// A tree takes about 60 bytes a file (56 an entry, with its depth
		// and cost, per file and folder; next 16.4.6 has a folder per 12
		// files; the paths are the listing's): 12 MB holds twenty-three
		// versions the size of next 16.4.6.
		FileTreeFiles: 200_000,
		// Counting every matching line of a cut grep searches the version
		// once more, each file counted by the index: about as long as the
		// page itself (next 16.4.6's useRouter, 278 lines in 114 files:
		// under a millisecond). 50 ms bounds a pattern that matches
		// throughout a large package; past it "at least N" tells an agent
		// there are more pages, which is what it decides on.
		GrepCountTime: 50 * time.Millisecond,
		// The count is about as long as the page (next 16.4.6's useRouter:
		// ~0.7 ms of a 1.9 ms first page); beside it on a second core, a
		// page waits for the longer of the two. One core stays for the
		// pages themselves.
		GrepCountsBeside: max(runtime.GOMAXPROCS(0)-1, 0),
		// A pair's changes and what was learned of them take well under
		// 100 bytes a file: 200,000 files (eleven pairs of next's size)
		// stay under 20 MB.
		DiffPairFiles: 200_000,
		// next 16.4.5 → 16.4.6's largest file diffs are four source maps
		// of 11 MB, each a 5.5 MB line removed and one added, which a page
		// holds with its printed 5.5 MB line: 16.5 MB. 64 MiB keeps three
		// agents paging through different ones at once.
		DiffRenderBytes: 64 << 20,
		// Most messages are one line ("request has been deprecated, see
		// <issue URL>" is 79 bytes); a few paste a whole migration guide.
		// 300 bytes keep the line and the link that says what to use.
		DeprecationNoteBytes: 300,
		Glob:                 pathglob.DefaultLimits(),
		// About a second of line diff (diff.DefaultMaxWork says why).
		DiffMaxWork: diff.DefaultMaxWork,
		// Two files' worth: a page ends after about two seconds of line
		// diffing however many changed files fit its bytes.
		DiffPageWork: 2 * diff.DefaultMaxWork,
	}
}
