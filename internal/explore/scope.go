package explore

import (
	"strings"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/store"
)

// grepScope is what a grep page needs of a version's listing that
// depends only on the listing and the request's include, exclude and
// sort: the files they select with each one's tier, the files each tier
// holds, the counts and binary files the answer reports, and which files
// have the bytes of one before them. Made per request it cost more than
// the index search itself: a warm grep of next 16.4.6 (8,711 files)
// spent 38% of its time ranking and folding every file of the package,
// whatever the pattern matched. Made once per listing (scopes), a page
// touches only the files its index calls return.
//
// A grepScope is shared by every page that asks for it: read only.
type grepScope struct {
	// files maps each selected text file to its tier and, when another
	// selected file comes before it with the same bytes (sameBytes), that
	// file.
	files    map[string]scoped
	inTier   [numTiers]int
	searched int
	skipped  int
	// skippedListed are the first maxSkippedListed binary files selected.
	skippedListed []SkippedFile
	copies        int // files with a sameAs
	// classes gives each file of the version's index its class (tier and
	// copy, fileClass) for the index's searches (index.Classes): a page's
	// searches select a tier's files by a table made once per index, not
	// by a path and a lookup in files for each candidate file in each.
	classes *index.Classes
}

type scoped struct {
	tier   int8
	sameAs string
}

// newGrepScope ranks the files of a stored version that sel selects (in
// path order with sortPath: one tier) and folds those with the same bytes.
func newGrepScope(files []store.File, sel func(string) bool, sortPath bool) *grepScope {
	sc := &grepScope{files: make(map[string]scoped, len(files))}
	for _, f := range files {
		if !sel(f.Path) {
			continue
		}
		if f.Binary {
			sc.skipped++
			if len(sc.skippedListed) < maxSkippedListed {
				sc.skippedListed = append(sc.skippedListed, SkippedFile{Path: f.Path, Reason: index.SkipBinary})
			}
			continue
		}
		sc.searched++
		t := tierDeclaration
		if !sortPath {
			t = fileTier(f.Path, f.Size)
		}
		sc.files[f.Path] = scoped{tier: int8(t)}
		sc.inTier[t]++
	}
	same := sameBytes(files, func(p string) (int, bool) { s, ok := sc.files[p]; return int(s.tier), ok })
	for p, first := range same {
		s := sc.files[p]
		s.sameAs = first
		sc.files[p] = s
	}
	sc.copies = len(same)
	sc.classes = index.NewClasses(func(p string) int {
		s, ok := sc.files[p]
		if !ok {
			return -1
		}
		return fileClass(int(s.tier), s.sameAs != "")
	})
	return sc
}

// fileClass is a selected file's class in grepScope.classes: two a tier,
// the second for the files with a sameAs.
func fileClass(tier int, copied bool) int {
	return 2*tier + b2i(copied)
}

// classMask is the index.Query.ClassMask selecting the files of the tiers
// in set: with their copies (sameAs), or without.
func classMask(set tierSet, copies bool) uint64 {
	var m uint64
	for t, in := range set {
		if in {
			m |= 1 << fileClass(t, false)
			if copies {
				m |= 1 << fileClass(t, true)
			}
		}
	}
	return m
}

// listingKey names a version's listing: a stored version's never
// changes, and a fallback's is its own (Source). Not the listing's slice:
// the store's cache decodes a new one on a Redis hit and for a listing
// over its size bounds, the largest packages', which the tables are for.
type listingKey struct{ name, version, source string }

func (o *Opened) listingKey() listingKey {
	k := listingKey{name: o.Name, version: o.Version}
	if o.fromElsewhere() {
		k.source = o.Source
	}
	return k
}

// scopeKey names one listing and the request fields a scope depends on.
type scopeKey struct {
	listing  listingKey
	sortPath bool
	filter   string // include and exclude, each glob ended by \x00, \x01 between the lists
}

// scopes holds grepScopes, costed by their listing's files (a scope of
// next 16.4.6 holds 8,711 and takes about 0.7 MB).
type scopes = held[scopeKey, *grepScope]

func newScopes(maxFiles int) *scopes { return newHeld[scopeKey, *grepScope](maxFiles) }

// scopeOf returns the scope of o's files for include/exclude (sel
// compiled from them) and sortPath, made once and kept while the bound
// allows.
func (s *Service) scopeOf(o *Opened, include, exclude []string, sel func(string) bool, sortPath bool) *grepScope {
	var b strings.Builder
	for _, g := range include {
		b.WriteString(g)
		b.WriteByte(0)
	}
	b.WriteByte(1)
	for _, g := range exclude {
		b.WriteString(g)
		b.WriteByte(0)
	}
	k := scopeKey{listing: o.listingKey(), sortPath: sortPath, filter: b.String()}
	return s.scopes.get(k, len(o.Files), func() *grepScope { return newGrepScope(o.Files, sel, sortPath) })
}
