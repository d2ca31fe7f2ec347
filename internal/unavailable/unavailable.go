// Package unavailable is the one shape of "an upstream could not answer":
// the npm registry (internal/upstream) and jsDelivr (internal/jsdelivr)
// both return an *Error for a timeout, a 5xx, a 429, a refused connection,
// a garbled answer or an open circuit breaker, and never for a genuine
// "not found". explore.Classify maps it, once, to 503 with Retry-After.
//
// Err says what failed in words; it never names a URL, a credential or an
// address (upstream.InWords), since its text reaches callers.
package unavailable

import (
	"fmt"
	"time"
)

// The upstreams, as Error.Source names them in messages.
const (
	Registry = "registry"
	JSDelivr = "jsDelivr"
)

// Error is an upstream failure that is not a genuine "not found". The API
// maps it to 503 with Retry-After.
type Error struct {
	// Source is the upstream that failed: Registry or JSDelivr.
	Source string
	// Status is the HTTP status the upstream answered, 0 when none.
	Status int
	// RetryAfter is the upstream's Retry-After, or its client's default;
	// 0 when it sent none and the client has no default.
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s unavailable (HTTP %d): %v", e.Source, e.Status, e.Err)
	}
	return fmt.Sprintf("%s unavailable: %v", e.Source, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
