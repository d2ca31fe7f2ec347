package search

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pkgscope/pkgscope/internal/index"
)

// heldBytes is a Budget that records what builds take and give back.
type heldBytes struct {
	mu       sync.Mutex
	taken    []int64
	released int
}

func (h *heldBytes) Hold(_ context.Context, n int64) (func(), error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.taken = append(h.taken, n)
	return func() { h.mu.Lock(); h.released++; h.mu.Unlock() }, nil
}

// TestBuildsTakeTheirBodies is issue 25 §1: a build after a fill takes
// from the fills' budget (Options.Budget, fill.Budget) the bytes of the
// distinct bodies it reads, and gives them back; the scan build and the
// full build each take them. Four 200 MiB bodies were otherwise held by
// two builds and two fills at once.
func TestBuildsTakeTheirBodies(t *testing.T) {
	st := newStore(t)
	large := strings.Repeat("export const large = 1;\n", 1000)
	publish(t, st, "two", "1.0.0", map[string]string{"small.js": "x\n", "large.js": large, "copy.js": large})
	budget := &heldBytes{}
	opt := DefaultOptions(t.TempDir())
	opt.Budget = budget
	s, err := New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Search(t.Context(), "two", "1.0.0", index.Query{Pattern: "large"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ensure(t.Context(), "two", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	budget.mu.Lock()
	defer budget.mu.Unlock()
	want := int64(len(large) + 2) // large.js and copy.js share one body
	if len(budget.taken) != 2 || slices.ContainsFunc(budget.taken, func(n int64) bool { return n != want }) {
		t.Errorf("builds took %v bytes, want the distinct bodies' %d, once for the scan build and once for the full one", budget.taken, want)
	}
	if budget.released != len(budget.taken) {
		t.Errorf("%d of %d charges given back", budget.released, len(budget.taken))
	}
}
