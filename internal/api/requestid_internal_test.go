package api

import (
	"strings"
	"testing"
)

// TestRequestIDShape: request ids are 32 letters, as Echo's generator
// wrote them, every letter appears, and none repeats in 10,000.
func TestRequestIDShape(t *testing.T) {
	seen := map[string]bool{}
	letters := map[rune]bool{}
	for range 10000 {
		id := requestID()
		if len(id) != 32 || strings.Trim(id, requestIDLetters) != "" {
			t.Fatalf("request id %q: want 32 letters", id)
		}
		if seen[id] {
			t.Fatalf("request id %q twice", id)
		}
		seen[id] = true
		for _, c := range id {
			letters[c] = true
		}
	}
	if len(letters) != len(requestIDLetters) {
		t.Errorf("%d of %d letters appear in 320,000", len(letters), len(requestIDLetters))
	}
}
