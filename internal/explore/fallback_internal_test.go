package explore

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// The fallback answers for the registry only: jsDelivr's own failure
// (the same shape, another Source) is no reason to ask jsDelivr.
func TestRegistryDownIsTheRegistrysFailure(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	reg := fmt.Errorf("resolving p: %w", &unavailable.Error{Source: unavailable.Registry, Err: errors.New("timed out")})
	for _, tt := range []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"registry unavailable", context.Background(), reg, true},
		{"the fill's own deadline", context.Background(), fmt.Errorf("filling p: %w", context.DeadlineExceeded), true},
		{"jsDelivr unavailable", context.Background(), &unavailable.Error{Source: unavailable.JSDelivr, Err: errors.New("timed out")}, false},
		{"the caller gave up", cancelled, reg, false},
		{"not found", context.Background(), &NotFoundError{What: "file"}, false},
	} {
		if got := registryDown(tt.ctx, tt.err); got != tt.want {
			t.Errorf("%s: registryDown = %v, want %v", tt.name, got, tt.want)
		}
	}
}
