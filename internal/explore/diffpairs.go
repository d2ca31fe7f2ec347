package explore

import (
	"context"
	"strings"
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
	key     pairKey
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
		return &diffPair{key: k, changes: diff.Changes(oldV.Files, newV.Files, nil), silent: map[string]bool{}}
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
// diff (of either kind) read them. The file a page resumes inside
// (resume) comes from Service.renders when the page that was cut inside it
// kept it, with what that page kept (nil otherwise): only that file is
// looked up, not every file of every page.
func (p *diffPair) render(ctx context.Context, s *Service, pkgs Versions, oldV, newV *Opened, c diff.Change, o diff.Options, resume bool) (diff.FileDiff, *heldRender, error) {
	if resume {
		if h, ok := s.renders.lookup(renderKeyOf(p.key, c.Path, o)); ok {
			fd := h.fd
			fd.Change = c
			return fd, h, nil
		}
	}
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
			return fd, nil, nil
		}
	}
	fd, err := s.renderChange(ctx, pkgs, oldV, newV, c, o)
	if err == nil && c.Old != nil && c.New != nil {
		p.mu.Lock()
		p.silent[c.Path] = fd.Text == ""
		p.mu.Unlock()
	}
	return fd, nil, err
}

// diffRenders holds the rendered text of files that diff pages were cut
// inside (Service.renders), so that the page after one continues the
// file without rendering it again: before, every page of next 16.4.5 →
// 16.4.6's four 11 MB source-map diffs read and decoded the file's two
// bodies, diffed their lines and printed its 5.5 MB line again for 30 KB
// of it, and walking the 2,036 pages took minutes against seconds for the
// whole diff at once. Each value costs its bytes (keepRender).
type diffRenders = held[renderKey, *heldRender]

func newDiffRenders(maxBytes int) *diffRenders { return newHeld[renderKey, *heldRender](maxBytes) }

// renderKey names a file's text: the pair, the path and the options that
// shape it (the versions it names are the pair's).
type renderKey struct {
	pair pairKey
	path string
	opts diff.Options
}

// renderKeyOf is the key of path's text under o, with the prefixes o's
// text does not print left out (a name-only or no-prefix diff, and npm's
// own "a/" and "b/" spelled out): a caller varying them would otherwise
// hold a copy of the same text under each.
func renderKeyOf(pair pairKey, path string, o diff.Options) renderKey {
	if o.NameOnly || o.NoPrefix {
		o.SrcPrefix, o.DstPrefix = "", ""
	}
	if o.SrcPrefix == "a/" {
		o.SrcPrefix = ""
	}
	if o.DstPrefix == "b/" {
		o.DstPrefix = ""
	}
	return renderKey{pair, path, o}
}

// heldRender is a file a page was cut inside, as the next page needs it.
type heldRender struct {
	// fd is the file's diff without its Change, which points into the
	// listing it came from and would pin both listings.
	fd diff.FileDiff
	// line is the line longer than a page that the page was cut at or
	// inside, printed alone; nil when it was cut elsewhere.
	line *heldLine
}

// heldLine is a line of a file's text printed alone: fd.Text[at:end] is
// the line, printed is diff.Print of it with first and tail (with tail,
// of it and the blank rest of the diff after it).
type heldLine struct {
	at, end     int
	first, tail bool
	printed     string
}

// lineAt returns the held line starting at offset at of the file's text,
// if h holds it: its end is known without scanning a line that may be
// megabytes long (next's source maps are single lines of 5.5 MB, each
// scanned again by every one of its ~180 pages).
func (h *heldRender) lineAt(at int) *heldLine {
	if h == nil || h.line == nil || h.line.at != at {
		return nil
	}
	return h.line
}

// keepRender holds fd, and the line printed alone that the page was cut
// at or inside (nil: none), for the page that continues inside it. It
// costs the bytes of its two texts, its path and the key's prefixes (a
// caller chooses those, up to the request's size), plus 1 KiB for the key
// (184 bytes, in the map and in the list's entry), the value and the list
// element around them (about 600 bytes on amd64). The text is copied when
// first held: a strings.Builder's string keeps the builder's spare
// capacity, up to a quarter more than its length.
func (p *diffPair) keepRender(s *Service, fd diff.FileDiff, o diff.Options, line *heldLine, held bool) {
	k := renderKeyOf(p.key, fd.Path, o)
	fd.Change = diff.Change{}
	if !held {
		fd.Text = strings.Clone(fd.Text)
	}
	cost := len(fd.Text) + len(k.path) + len(k.opts.SrcPrefix) + len(k.opts.DstPrefix) + 1024
	if line != nil {
		cost += len(line.printed)
	}
	s.renders.put(k, &heldRender{fd: fd, line: line}, cost)
}
