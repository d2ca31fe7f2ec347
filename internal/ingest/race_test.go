//go:build race

package ingest

// raceEnabled reports a test binary built with -race. Allocation bounds
// do not hold there: sync.Pool drops one Put in four at random under the
// race detector, so pooled buffers the standard library reuses in a normal
// build are allocated again (see TestMillionEntryArchiveStopsAtMaxEntries).
const raceEnabled = true
