//go:build race

// Package race reports whether the binary was built with the race
// detector (go test -race), for tests whose bounds hold only without it.
//
// Under -race the standard library's pools do not pool: sync.Pool drops
// one Put in four at random, so what a normal build reuses is allocated
// again (io.Discard's 8 KiB buffer in every archive/tar entry read,
// regexp's matching machines in every search), and code runs 5-20 times
// slower, so a production deadline cuts work it finishes in a normal
// build. Allocation bounds and searches that must finish within the
// default timeout are checked without -race; the rest of such a test
// still runs.
package race

// Enabled is true in a -race build.
const Enabled = true
