// Package resolve turns what a caller typed (an exact version, a range or a
// dist-tag) into the exact version npm would install.
package resolve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/semver"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// Packumenter fetches a package's packument (cached by the upstream client).
type Packumenter interface {
	Packument(ctx context.Context, name string) (*upstream.Packument, error)
}

// Resolver resolves specs against the registry, and answers exact versions
// that are already stored without asking it, so a warm exact-version
// request works while the registry is down.
type Resolver struct {
	reg   Packumenter
	store store.VersionReader
}

// New returns a Resolver.
func New(reg Packumenter, st store.VersionReader) *Resolver {
	return &Resolver{reg: reg, store: st}
}

// listing is the upstream client's PackumentListing.
type listing interface {
	PackumentListing(ctx context.Context, name, version string) (*upstream.Packument, error)
}

// versioner is the upstream client's Version: an exact version's entry
// from its manifest, without the packument when the registry serves it.
type versioner interface {
	Version(ctx context.Context, name, version string) (upstream.PackumentVersion, error)
}

// packument reads name's packument; for an exact version, one that lists
// it if the registry has it, so a version published a minute ago resolves.
func (r *Resolver) packument(ctx context.Context, name string, spec npmspec.Spec) (*upstream.Packument, error) {
	if l, ok := r.reg.(listing); ok && spec.Kind == npmspec.Version {
		return l.PackumentListing(ctx, name, spec.Raw)
	}
	return r.reg.Packument(ctx, name)
}

// Resolve returns the exact version for spec.
func (r *Resolver) Resolve(ctx context.Context, name string, spec npmspec.Spec) (string, error) {
	if spec.Kind == npmspec.Version {
		v, err := r.store.Version(ctx, name, spec.Raw)
		if err == nil && v.State == store.StateReady {
			return v.Version, nil
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return "", fmt.Errorf("looking up %s@%s in the store: %w", name, spec.Raw, err)
		}
	}
	if vr, ok := r.reg.(versioner); ok && spec.Kind == npmspec.Version {
		// A cold exact version need not wait for the packument (21 MB for
		// next): its manifest says it exists, and the fill then finds its
		// dist in the client's cache. Only "no such version" goes on to
		// the packument, which says whether the package exists at all.
		pv, err := vr.Version(ctx, name, spec.Raw)
		if err == nil {
			return pv.Version, nil
		}
		if !errors.Is(err, upstream.ErrNotFound) {
			return "", err
		}
	}
	p, err := r.packument(ctx, name, spec)
	if err != nil {
		return "", err
	}
	// Sorted, so that versions of equal rank (2.0.0 and 2.0.0+b) resolve
	// the same way every time.
	candidates := make([]semver.Candidate, 0, len(p.Versions))
	for _, v := range slices.Sorted(maps.Keys(p.Versions)) {
		pv := p.Versions[v]
		candidates = append(candidates, semver.Candidate{Version: v, Deprecated: pv.Deprecation() != ""})
	}
	return semver.Select(spec, candidates, p.DistTags)
}
