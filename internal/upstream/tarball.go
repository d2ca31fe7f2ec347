package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Tarball downloads v.Dist.Tarball (used exactly as the registry gave it)
// and verifies it against v.Dist.Integrity, or v.Dist.Shasum when there is
// no integrity. name is the package the version belongs to; it picks the
// registry the URL must be on.
//
// Errors: ErrTarballURL (wrapped) when the URL is not http(s) on the
// package's registry host or an AllowedTarballHosts entry; ErrTooLarge
// over MaxTarballBytes; ErrIntegrity (wrapped) on a mismatch or when
// neither integrity nor shasum is given; ErrNotFound (wrapped) on a 404;
// the caller's ctx.Err() when ctx ends first; otherwise an
// *unavailable.Error (wrapping ErrCircuitOpen, without a request, while the
// tarball host's breaker is open). The auth header is sent only when the
// URL is under the package's registry URL.
func (c *Client) Tarball(ctx context.Context, name string, v PackumentVersion) (data []byte, err error) {
	what := "tarball " + name + "@" + v.Version
	if _, err := escapeName(name); err != nil {
		return nil, err
	}
	registry := c.npm.RegistryFor(name)
	u, err := c.checkTarballURL(v.Dist.Tarball, registry)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}

	dctx, cancel := context.WithTimeout(ctx, c.cfg.TarballTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(withOrigin(dctx, registry), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", what, ErrTarballURL, err)
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	if underRegistry(u, registry) {
		if auth := c.npm.AuthHeader(u.String()); auth != "" {
			req.Header.Set("Authorization", auth)
		}
	}
	done, err := c.breakers.allow(breakerKey(u), what)
	if err != nil {
		return nil, err
	}
	defer func() { done(err) }()
	resp, err := c.send(ctx, req, what)
	if err != nil {
		return nil, err
	}
	defer drainClose(resp.Body)
	tooLarge := fmt.Errorf("%s: over %d bytes (Config.MaxTarballBytes): %w", what, c.cfg.MaxTarballBytes, ErrTooLarge)
	if resp.ContentLength > c.cfg.MaxTarballBytes {
		return nil, tooLarge
	}
	body := &limitedReader{r: resp.Body, n: c.cfg.MaxTarballBytes}
	data, err = io.ReadAll(body)
	if body.exceeded {
		return nil, tooLarge
	}
	if err != nil {
		return nil, transportError(ctx, what, err)
	}
	if err := verify(data, v.Dist); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return data, nil
}

// checkTarballURL is the SSRF guard: dist.tarball comes from the registry
// (or whoever published a package to it) and must not make pkgscope fetch
// from anywhere else.
func (c *Client) checkTarballURL(raw, registry string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a URL", ErrTarballURL, truncate(raw))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: %q is not http(s)", ErrTarballURL, truncate(raw))
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: user info in the URL", ErrTarballURL)
	}
	if !c.hostAllowed(u, registry) {
		return nil, fmt.Errorf("%w: host %q is neither the registry's nor in AllowedTarballHosts", ErrTarballURL, u.Host)
	}
	return u, nil
}

// hostAllowed reports whether u is on the registry's host:port or on an
// AllowedTarballHosts entry.
func (c *Client) hostAllowed(u *url.URL, registry string) bool {
	hp, ok := hostPort(u)
	if !ok {
		return false
	}
	if reg, err := url.Parse(registry); err == nil {
		if rhp, ok := hostPort(reg); ok && rhp == hp {
			return true
		}
	}
	return c.hosts.allows(u, hp)
}

// underRegistry reports whether u is inside registry's URL (same scheme,
// host, port, and path prefix): only there does the registry's credential
// belong.
func underRegistry(u *url.URL, registry string) bool {
	reg, err := url.Parse(registry)
	if err != nil || u.Scheme != reg.Scheme {
		return false
	}
	hp, ok1 := hostPort(u)
	rhp, ok2 := hostPort(reg)
	return ok1 && ok2 && hp == rhp && strings.HasPrefix(u.EscapedPath(), reg.EscapedPath())
}

// hostPort is "host:port" in lower case with the scheme's default port
// filled in, so "h" and "h:443" compare equal under https.
func hostPort(u *url.URL) (string, bool) {
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", false
	}
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		default:
			return "", false
		}
	}
	return net.JoinHostPort(host, port), true
}

// hostSet is AllowedTarballHosts: entries with a port match host:port,
// entries without one match the host on the scheme's default port.
type hostSet struct {
	withPort    map[string]bool // "host:port"
	defaultPort map[string]bool // "host"
}

func newHostSet(entries []string) hostSet {
	s := hostSet{withPort: map[string]bool{}, defaultPort: map[string]bool{}}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if strings.Contains(e, "://") {
			u, err := url.Parse(e)
			if err != nil {
				continue
			}
			if hp, ok := hostPort(u); ok && u.Port() != "" {
				s.withPort[hp] = true
			} else if ok {
				s.defaultPort[strings.ToLower(u.Hostname())] = true
			}
			continue
		}
		if host, port, err := net.SplitHostPort(e); err == nil {
			s.withPort[net.JoinHostPort(strings.ToLower(host), port)] = true
		} else if e != "" {
			s.defaultPort[strings.ToLower(strings.Trim(e, "[]"))] = true
		}
	}
	return s
}

func (s hostSet) allows(u *url.URL, hp string) bool {
	if s.withPort[hp] {
		return true
	}
	if !s.defaultPort[strings.ToLower(u.Hostname())] {
		return false
	}
	port := u.Port()
	return port == "" || (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80")
}

// originKey carries, in a request's context, the registry the request is
// for, so checkRedirect can hold redirects to the same hosts.
type originKey struct{}

func withOrigin(ctx context.Context, registry string) context.Context {
	return context.WithValue(ctx, originKey{}, registry)
}

// maxRedirects matches net/http's default.
const maxRedirects = 10

// checkRedirect refuses redirects that leave the allowed hosts, which a
// hostile tarball URL on an allowed host could otherwise use to reach an
// internal address. Go itself drops the Authorization header when a
// redirect leaves the original domain.
func (c *Client) checkRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return errors.New("stopped after 10 redirects")
		}
		registry, _ := req.Context().Value(originKey{}).(string)
		if (req.URL.Scheme != "http" && req.URL.Scheme != "https") || !c.hostAllowed(req.URL, registry) {
			return fmt.Errorf("%w: redirect to host %q", ErrTarballURL, req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}
