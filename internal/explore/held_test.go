package explore

import (
	"slices"
	"strings"
	"testing"
)

// TestHeldPutKeepsItsBound: put replaces a key's value and its cost,
// drops the least recently used past max, and holds no value costing
// more than max (nor what it replaced).
func TestHeldPutKeepsItsBound(t *testing.T) {
	t.Parallel()
	h := newHeld[string, int](100)
	check := func(step string, want ...string) {
		t.Helper()
		if h.c.Cost() > 100 {
			t.Errorf("%s: holds %d, over 100", step, h.c.Cost())
		}
		got := h.c.Keys()
		slices.Reverse(got) // most recently used first
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: holds %q, want %q", step, got, want)
		}
	}
	h.put("a", 1, 40)
	h.put("b", 2, 40)
	check("a, b", "b", "a")
	h.put("c", 3, 40)
	check("c past the bound", "c", "b")
	if v, ok := h.lookup("b"); !ok || v != 2 {
		t.Errorf("lookup(b) = %d, %v", v, ok)
	}
	check("b used", "b", "c")
	h.put("c", 4, 70)
	check("c replaced, dearer", "c")
	if v, _ := h.lookup("c"); v != 4 || h.c.Cost() != 70 {
		t.Errorf("c = %d costing %d, want 4 costing 70", v, h.c.Cost())
	}
	h.put("d", 5, 101)
	check("d over max", "c")
	h.put("c", 6, 101)
	check("c replaced by one over max")
	if _, ok := h.lookup("c"); ok || h.c.Cost() != 0 {
		t.Errorf("c still held, %d bytes", h.c.Cost())
	}
	if v := h.get("e", 10, func() int { return 7 }); v != 7 {
		t.Errorf("get made %d", v)
	}
	if v := h.get("e", 10, func() int { return 8 }); v != 7 {
		t.Errorf("get of a held key made it again: %d", v)
	}
	check("e", "e")
}
