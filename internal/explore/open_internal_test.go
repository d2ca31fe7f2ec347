package explore

import (
	"context"
	"errors"
	"testing"

	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/store"
)

// countingResolver resolves an exact version to itself and any other
// spec to "1.0.0", counting what it was asked.
type countingResolver struct{ asked []string }

func (r *countingResolver) Resolve(_ context.Context, _ string, spec npmspec.Spec) (string, error) {
	r.asked = append(r.asked, spec.Raw)
	if spec.Kind == npmspec.Version {
		return spec.Raw, nil
	}
	return "1.0.0", nil
}

// failingFiles is a store whose file lists fail.
type failingFiles struct{ store.Reader }

var errStoreDown = errors.New("the store is down")

func (failingFiles) Files(context.Context, string, string) ([]store.File, error) {
	return nil, errStoreDown
}

// TestOpenExactFromTheStore: an exact version the store lists opens from
// its file list, without the resolver, however the URL spells it; one it
// does not list and a range go to the resolver as before; a store that
// fails is the answer, not asked twice through the resolver.
func TestOpenExactFromTheStore(t *testing.T) {
	st := storeOf(t, "p", map[string]map[string]string{"1.0.0": {"a.js": "a\n"}})
	for _, c := range []struct {
		spec  string
		asked []string
		err   bool
	}{
		{"1.0.0", nil, false},
		{"v1.0.0", nil, false},
		{"=1.0.0", nil, false},
		{"2.0.0", []string{"2.0.0"}, true}, // not stored: resolved, then the fill (noFill) fails
		{"^1.0.0", []string{"^1.0.0"}, false},
	} {
		r := &countingResolver{}
		s := New(Options{Store: st, Resolver: r, Filler: noFill{}, Limits: DefaultLimits()})
		o, err := s.Open(t.Context(), Target{PackageName: "p", Version: c.spec})
		if (err != nil) != c.err || len(r.asked) != len(c.asked) || (len(c.asked) > 0 && r.asked[0] != c.asked[0]) {
			t.Errorf("Open p@%s: %v; the resolver was asked %q, want %q", c.spec, err, r.asked, c.asked)
		}
		if err == nil && (o.Version != "1.0.0" || len(o.Files) != 1 || o.Files[0].Path != "a.js") {
			t.Errorf("Open p@%s: version %s, files %v", c.spec, o.Version, o.Files)
		}
	}
	r := &countingResolver{}
	s := New(Options{Store: failingFiles{st}, Resolver: r, Filler: noFill{}, Limits: DefaultLimits()})
	if _, err := s.Open(t.Context(), Target{PackageName: "p", Version: "1.0.0"}); !errors.Is(err, errStoreDown) || len(r.asked) != 0 {
		t.Errorf("Open with the store down: %v, the resolver asked %q; want the store's error and no resolution", err, r.asked)
	}
}
