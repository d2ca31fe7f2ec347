package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/mcp"
)

// panicky is an Explorer whose list has a bug.
type panicky struct{ explore.Explorer }

func (panicky) List(context.Context, explore.Request) (*explore.ListResult, error) {
	var s []int
	_ = s[3] // index out of range
	return nil, nil
}

// TestPanicIsAnInternalToolError: a handler that panics answers its call
// with an internal tool error, hiding the panic, and the server goes on
// answering (the SDK runs handlers where nothing else recovers, so the
// panic used to end the process).
func TestPanicIsAnInternalToolError(t *testing.T) {
	cs := inMemory(t, panicky{}, mcp.Options{})
	for range 2 {
		res := call(t, cs, `{"action":"list","packageName":"lib"}`)
		got := text(res)
		if !res.IsError || !strings.Contains(got, "error internal: internal error") || strings.Contains(got, "index out of range") {
			t.Errorf("a panicking call answered %v %q, want an internal tool error that hides the panic", res.IsError, got)
		}
	}
}
