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
