package explore

import (
	"context"
	"sync"

	"github.com/pkgscope/pkgscope/internal/diff"
)

// diffPair is what a diff needs of two stored versions that depends only
// on them, made once and shared by every diff of the pair (Service.pairs):
// the changed files in npm diff's order, and, for each modified file whose
// bodies a diff read, whether npm diff prints nothing for it (its bytes
// differ only in bytes that are not UTF-8 and decode to the same text).
// A name-only diff needs nothing else. It reads no body of a file whose
// bodies ingest found valid UTF-8 (diff.NamePrintedUnread), and of any
// other once the pair has been read: next 16.4.5 → 16.4.6 read and
// decoded every changed file's two bodies on every call (180 ms of CPU)
// to print their names, then on a pair's first call only, and now on
// none when both versions were stored with their validity (ingest
// format 3).
type diffPair struct {
	changes []diff.Change // diff.Changes of the two listings, unfiltered
	mu      sync.Mutex
	silent  map[string]bool // modified path → npm prints nothing for it
}

// pairKey names the two listings.
type pairKey struct{ old, new listingKey }

type diffPairs = held[pairKey, *diffPair]

func newDiffPairs(maxFiles int) *diffPairs { return newHeld[pairKey, *diffPair](maxFiles) }

// pairOf returns the diffPair of two stored versions' listings.
func (s *Service) pairOf(oldV, newV *Opened) *diffPair {
	k := pairKey{oldV.listingKey(), newV.listingKey()}
	return s.pairs.get(k, len(oldV.Files)+len(newV.Files), func() *diffPair {
		return &diffPair{changes: diff.Changes(oldV.Files, newV.Files, nil), silent: map[string]bool{}}
	})
}

// selected returns the changes keep selects, in order: what diff.Changes
// with keep returns (it filters each listing's files in the same order).
func (p *diffPair) selected(keep func(string) bool) []diff.Change {
	out := make([]diff.Change, 0, len(p.changes))
	for _, c := range p.changes {
		if keep(c.Path) {
			out = append(out, c)
		}
	}
	return out
}

// render renders change c as Service.renderChange does, reading its
// bodies only when what a name-only diff prints for it is not known
// without them: diff.NamePrintedUnread, or as the pair learned when a
// diff (of either kind) read them.
func (p *diffPair) render(ctx context.Context, s *Service, pkgs Versions, oldV, newV *Opened, c diff.Change, o diff.Options) (diff.FileDiff, error) {
	if o.NameOnly {
		silent, known := false, diff.NamePrintedUnread(c)
		if !known {
			p.mu.Lock()
			silent, known = p.silent[c.Path]
			p.mu.Unlock()
		}
		if known {
			fd := diff.FileDiff{Change: c}
			if !silent {
				fd.Text = c.Path + "\n"
			}
			return fd, nil
		}
	}
	fd, err := s.renderChange(ctx, pkgs, oldV, newV, c, o)
	if err == nil && c.Old != nil && c.New != nil {
		p.mu.Lock()
		p.silent[c.Path] = fd.Text == ""
		p.mu.Unlock()
	}
	return fd, err
}
