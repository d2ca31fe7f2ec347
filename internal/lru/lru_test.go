package lru

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDropsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	c := New[string, int](2, Options{})
	c.Add("a", 1, 1)
	c.Add("b", 2, 1)
	c.Get("a")
	c.Add("c", 3, 1)
	if _, ok := c.Get("b"); ok {
		t.Error("b survived; it was least recently used")
	}
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Errorf("a = %d, %v", v, ok)
	}
	c.Add("a", 10, 1)
	if v, _ := c.Get("a"); v != 10 || c.Len() != 2 || c.Cost() != 2 {
		t.Errorf("after update: a = %d, len %d, cost %d", v, c.Len(), c.Cost())
	}
	c.Add("big", 4, 3) // over the whole budget: not stored
	if _, ok := c.Get("big"); ok || c.Len() != 2 {
		t.Errorf("an entry over budget was stored (len %d)", c.Len())
	}
	c.Add("a", 11, 2) // a costlier value pushes out the rest
	if _, ok := c.Get("c"); ok || c.Len() != 1 || c.Cost() != 2 {
		t.Errorf("after costly update: len %d, cost %d", c.Len(), c.Cost())
	}
	c.Add("a", 12, 5) // too costly: the older value goes too
	if _, ok := c.Get("a"); ok || c.Len() != 0 || c.Cost() != 0 {
		t.Errorf("a value over budget left len %d, cost %d", c.Len(), c.Cost())
	}
}

func TestBoundsBytes(t *testing.T) {
	t.Parallel()
	c := New[string, any](1000, Options{MaxEntryCost: 250})
	for i := range 10 {
		c.Add(string(rune('a'+i)), i, 164)
	}
	if c.Cost() > 1000 {
		t.Fatalf("cost %d over the budget", c.Cost())
	}
	if _, ok := c.Get("a"); ok {
		t.Error("oldest entry survived eviction")
	}
	if v, ok := c.Get("j"); !ok || v != 9 {
		t.Errorf("newest entry = %v %v", v, ok)
	}
	c.Add("huge", "x", 251)
	if _, ok := c.Get("huge"); ok {
		t.Error("an entry over MaxEntryCost was kept")
	}
	c.Add("nil", nil, 1) // a cached "not found"
	if v, ok := c.Get("nil"); !ok || v != nil {
		t.Errorf("cached not-found = %v %v", v, ok)
	}
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	c := New[string, string](100, Options{Now: func() time.Time { return now }})
	c.AddExpiring("page", "body", 10, now.Add(time.Minute))
	c.Add("forever", "x", 10)
	if v, ok := c.Get("page"); !ok || v != "body" {
		t.Fatalf("fresh entry = %q %v", v, ok)
	}
	now = now.Add(time.Minute)
	if _, ok := c.Get("page"); ok {
		t.Error("an entry was returned at its expiry")
	}
	if c.Len() != 1 || c.Cost() != 10 {
		t.Errorf("the expired entry was not dropped: len %d, cost %d", c.Len(), c.Cost())
	}
	if _, ok := c.Get("forever"); !ok {
		t.Error("an entry without expiry expired")
	}
}
