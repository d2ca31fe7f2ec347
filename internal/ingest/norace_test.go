//go:build !race

package ingest

// raceEnabled reports a test binary built with -race (race_test.go).
const raceEnabled = false
