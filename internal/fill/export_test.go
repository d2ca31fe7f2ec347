package fill

import "context"

// OnWait makes s call f each time a fill starts waiting for a slot, so a
// test knows a fill waits without sleeping.
func OnWait(s *Slots, f func()) { s.onWait = f }

// Acquire is s's slot taking, for tests of the slots alone.
func (s *Slots) Acquire(ctx context.Context) (release func(), err error) { return s.acquire(ctx) }

// OnBudgetWait makes b call f each time a charge starts waiting.
func OnBudgetWait(b *Budget, f func()) { b.onWait = f }

// CountFrees replaces b's return of memory to the system with a count.
func CountFrees(b *Budget) *int {
	n := new(int)
	b.free = func() { *n++ }
	return n
}
