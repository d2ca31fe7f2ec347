package fill

import "context"

// OnWait makes s call f each time a fill starts waiting for a slot, so a
// test knows a fill waits without sleeping.
func OnWait(s *Slots, f func()) { s.onWait = f }

// Acquire is s's slot taking, for tests of the slots alone.
func (s *Slots) Acquire(ctx context.Context) (release func(), err error) { return s.acquire(ctx) }
