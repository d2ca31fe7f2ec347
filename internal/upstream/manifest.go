package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"golang.org/x/sync/singleflight"

	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// Version returns the entry of name@version, an exact version: from memory
// when a packument or manifest fetched earlier listed it; else from the
// registry's version endpoint (GET <registry>/<name>/<version>, npm's
// "getpackageversion"), whose answer is that one version's manifest, a
// few KB where an abbreviated packument can take tens of MB (next's is
// 21 MB, about 0.8 s to download and parse) before a cold version's
// tarball is even asked for; else, when the registry does not serve the
// endpoint or answers it with anything but this version, from the
// packument (PackumentListing), as before.
//
// Errors: as Packument's; ErrNotFound (wrapped) when the registry does
// not list the version. A manifest request that gets no answer (refused,
// timed out, a breaker open, 429) is returned as it is rather than
// followed by a packument request to the same host. Concurrent calls for
// one version share one request, detached from any caller's cancellation
// (with RequestTimeout).
func (c *Client) Version(ctx context.Context, name, version string) (PackumentVersion, error) {
	if !ValidVersion(version) {
		// Packuments drop such versions: the registry has none.
		return PackumentVersion{}, fmt.Errorf("%s has no version %.80q (not a semver version): %w", name, version, ErrNotFound)
	}
	if pv, ok := c.CachedVersion(name, version); ok {
		return pv, nil
	}
	escaped, err := escapeName(name)
	if err != nil {
		return PackumentVersion{}, err
	}
	detached := context.WithoutCancel(ctx)
	ch := c.manifests.DoChan(name+"@"+version, func() (any, error) {
		if pv, ok := c.CachedVersion(name, version); ok {
			return pv, nil
		}
		return c.fetchManifest(detached, name, escaped, version)
	})
	var res singleflight.Result
	select {
	case res = <-ch:
	case <-ctx.Done():
		return PackumentVersion{}, fmt.Errorf("manifest %s@%s: %w", name, version, ctx.Err())
	}
	if res.Err != nil {
		return PackumentVersion{}, res.Err
	}
	if pv, ok := res.Val.(PackumentVersion); ok {
		return pv, nil
	}
	// The endpoint did not answer this version: the packument decides.
	p, err := c.PackumentListing(ctx, name, version)
	if err != nil {
		return PackumentVersion{}, err
	}
	pv, ok := p.Versions[version]
	if !ok {
		return PackumentVersion{}, fmt.Errorf("%s has no version %s: %w", name, version, ErrNotFound)
	}
	return pv, nil
}

// noManifest is fetchManifest's answer when the packument has to decide.
type noManifest struct{}

// fetchManifest asks the registry's version endpoint for name@version. It
// returns the version's entry (and caches it), noManifest{} when the
// registry answered something else than that version's manifest (a 404
// for a version it has not got or an endpoint it does not serve, a 405, a
// 5xx, another version, a body without dist.tarball), or an error when
// there was no usable answer at all.
func (c *Client) fetchManifest(ctx context.Context, name, escaped, version string) (_ any, err error) {
	what := "manifest " + name + "@" + version
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	registry := c.npm.RegistryFor(name)
	u := registry + escaped + "/" + url.PathEscape(version)
	req, err := http.NewRequestWithContext(withOrigin(ctx, registry), http.MethodGet, u, nil)
	if err != nil {
		return noManifest{}, nil
	}
	done, err := c.breakers.allow(breakerKey(req.URL), what)
	if err != nil {
		return nil, err
	}
	defer func() { done(err) }()
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	if auth := c.npm.AuthHeader(u); auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.send(context.Background(), req, what)
	var ue *unavailable.Error
	switch {
	case errors.Is(err, ErrNotFound):
		return noManifest{}, nil
	case errors.As(err, &ue) && ue.Status != 0 && ue.Status != http.StatusTooManyRequests:
		return noManifest{}, nil
	case err != nil:
		return nil, err
	}
	defer drainClose(resp.Body)
	var m struct {
		Name string `json:"name"`
		PackumentVersion
	}
	body := &limitedReader{r: resp.Body, n: c.cfg.MaxPackumentBytes}
	if err := json.NewDecoder(body).Decode(&m); err != nil {
		if body.exceeded {
			return noManifest{}, nil
		}
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if errors.As(err, &syn) || errors.As(err, &typ) {
			return noManifest{}, nil // an answer, just not a manifest
		}
		return nil, transportError(context.Background(), what, err)
	}
	if (m.Name != "" && m.Name != name) || m.Version != version || m.Dist.Tarball == "" {
		return noManifest{}, nil
	}
	c.versions.Add(versionKey{name, version}, m.PackumentVersion, 1)
	return m.PackumentVersion, nil
}
