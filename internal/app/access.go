package app

import (
	"context"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// checkedWarm asks the read chain's access check (explore.Access) about
// every package of a warm request before anything is queued: warming
// fetches with the mirror's registry tokens, so a request naming a package
// the caller may not read is refused whole (403 naming it).
type checkedWarm struct {
	warm.Requests
	allow explore.Access
}

// Submit checks wants, then submits them.
func (c checkedWarm) Submit(ctx context.Context, source string, wants []warm.Want) (string, error) {
	for _, w := range wants {
		if w.Skip != "" {
			continue // recorded as skipped, never fetched
		}
		if err := c.allow(ctx, w.Name); err != nil {
			return "", err
		}
	}
	return c.Requests.Submit(ctx, source, wants)
}
