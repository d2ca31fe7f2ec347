package explore

import "time"

// SetBesideAfter sets how long a first grep page runs before its count
// starts beside it (besideAfter), for a test that must take either path;
// it returns what undoes it. Tests that call it do not run in parallel.
func SetBesideAfter(d time.Duration) (undo func()) {
	old := besideAfter
	besideAfter = d
	return func() { besideAfter = old }
}

// BesideStarts is how many counts have started beside their pages.
func BesideStarts() int64 { return besideStarts.Load() }

// ForgetDiffPairs drops what s holds of the version pairs it diffed and
// of the files its pages were cut inside, so that its next diff of a pair
// is that pair's first (a benchmark's).
func ForgetDiffPairs(s *Service) {
	p, r := newDiffPairs(s.lim.DiffPairFiles), newDiffRenders(s.lim.DiffRenderBytes)
	s.pairs, s.stored.pairs = p, p
	s.renders, s.stored.renders = r, r
}
