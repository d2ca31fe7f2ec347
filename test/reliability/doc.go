// Package reliability is pkgscope's fault, hostile-input and crash suite:
// it injects faults for real (a TCP fault proxy between the mirror and
// Postgres, a fake registry that fails, stalls or lies, SIGKILL of the
// built binary mid-ingest, a full disk under the index cache) and sends
// hostile requests to a running mirror, checking that every answer is
// right or a clear error, within a client deadline and bounded memory,
// and that no partial version ever becomes visible.
//
// `go test ./test/reliability/...` is the short form CI runs: every
// hazard and every fault once. The long forms are bench/fuzz/run.sh and
// bench/soak/run.sh. docs/RELIABILITY.md holds the table of what was
// tried and what happened.
//
// The tests need Postgres (internal/pgtest) and fail, never skip, without
// it.
package reliability
