package app

import (
	"context"
	"fmt"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// checkedWarm asks the read chain's access check (explore.Access) about
// every package of a warm request before anything is queued: warming
// fetches with the mirror's registry tokens, so a request naming a package
// the caller may not read is refused whole (403 naming it). Reading a
// request's progress (GET /v1/warm/{id}, the web page /warm/{id}) makes
// the same check, so a request's packages are shown only to a caller that
// could have submitted it. Skipped items (git, file:, remote tarballs) are
// checked too though they are never fetched: their names are what a
// request shows (before, a request whose items were all skipped was read
// by any token that knew its id).
type checkedWarm struct {
	warm.Requests
	allow explore.Access
}

// Submit checks wants, then submits them.
func (c checkedWarm) Submit(ctx context.Context, source string, wants []warm.Want) (string, error) {
	for _, w := range wants {
		if err := c.allow(ctx, w.Name); err != nil {
			return "", err
		}
	}
	return c.Requests.Submit(ctx, source, wants)
}

// Progress returns request id's state if the caller may read every
// package it names, skipped items included, the first refusal otherwise.
func (c checkedWarm) Progress(ctx context.Context, id string) (warm.Progress, error) {
	p, err := c.Requests.Progress(ctx, id)
	if err != nil {
		return warm.Progress{}, err
	}
	checked := map[string]bool{}
	for _, it := range p.Items {
		if checked[it.Name] {
			continue
		}
		checked[it.Name] = true
		if err := c.allow(ctx, it.Name); err != nil {
			return warm.Progress{}, fmt.Errorf("warm request %s includes %s: %w", id, it.Name, err)
		}
	}
	return p, nil
}
