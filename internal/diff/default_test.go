package diff_test

import (
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/diff"
	"github.com/pkgscope/pkgscope/internal/explore"
)

// TestMirrorRunsWithTheDefaultBudget: the mirror's setting max-diff-work
// defaults to the budget this package measured, not a figure of its own.
func TestMirrorRunsWithTheDefaultBudget(t *testing.T) {
	if got := explore.DefaultLimits().DiffMaxWork; got != diff.DefaultMaxWork {
		t.Errorf("explore's default max-diff-work is %d, want diff.DefaultMaxWork %d", got, diff.DefaultMaxWork)
	}
	if got := config.Default().MaxDiffWork; got != diff.DefaultMaxWork {
		t.Errorf("the mirror's default max-diff-work is %d, want %d", got, diff.DefaultMaxWork)
	}
}
