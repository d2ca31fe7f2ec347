package explore

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pkgscope/pkgscope/internal/store"
)

// TestScopesAreMadeOncePerListing: a version's grep tables are made once
// and shared by the pages asking with the same include/exclude and sort;
// another listing, filter or sort gets its own; the least recently used
// go once the files they hold pass the bound.
func TestScopesAreMadeOncePerListing(t *testing.T) {
	listing := func(h byte) *Opened {
		return &Opened{Name: "p", Version: fmt.Sprintf("1.0.%d", h), Files: []store.File{
			{Path: "a/index.d.ts", Hash: store.Hash{h}},
			{Path: "b/index.d.ts", Hash: store.Hash{h}}, // the same bytes
			{Path: "lib/x.js", Hash: store.Hash{h + 1}},
			{Path: "logo.png", Hash: store.Hash{h + 2}, Binary: true},
		}}
	}
	all := func(string) bool { return true }
	c := &Service{scopes: newScopes(8)} // two listings of four files
	v1, v2, v3 := listing(1), listing(10), listing(20)
	sc := c.scopeOf(v1, nil, nil, all, false)
	if c.scopeOf(v1, nil, nil, all, false) != sc {
		t.Error("the same listing asked again made a new scope")
	}
	// The store's cache may hand out another slice of the same listing
	// (a Redis hit decodes one): the version is what names it.
	if c.scopeOf(&Opened{Name: v1.Name, Version: v1.Version, Files: slices.Clone(v1.Files)}, nil, nil, all, false) != sc {
		t.Error("the same version's listing in another slice made a new scope")
	}
	if c.scopeOf(&Opened{Name: v1.Name, Version: v1.Version, Files: v1.Files, Source: SourceJSDelivr}, nil, nil, all, false) == sc {
		t.Error("a fallback's listing of the version shared the stored one's scope")
	}
	if c.scopeOf(v1, []string{"*.js"}, nil, all, false) == sc || c.scopeOf(v1, nil, nil, all, true) == sc {
		t.Error("another filter or sort shared the scope")
	}
	if sc.searched != 3 || sc.skipped != 1 || sc.files["b/index.d.ts"].sameAs != "a/index.d.ts" || sc.copies != 1 ||
		sc.inTier[tierDeclaration] != 2 || len(sc.skippedListed) != 1 {
		t.Errorf("scope = %+v", sc)
	}
	c.scopeOf(v2, nil, nil, all, false)
	c.scopeOf(v3, nil, nil, all, false) // v1's entries are the least recently used
	if n := c.scopes.c.Cost(); n > 8 {
		t.Errorf("holds %d files, over the bound of 8", n)
	}
	if c.scopeOf(v1, nil, nil, all, false) == sc {
		t.Error("a scope past the bound was kept")
	}
	if off := (&Service{scopes: newScopes(0)}); off.scopeOf(v1, nil, nil, all, false) == off.scopeOf(v1, nil, nil, all, false) {
		t.Error("with a bound of 0 a scope was kept")
	}
}
