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

// Tarball starts downloading v.Dist.Tarball (used exactly as the registry
// gave it) and returns its body as a *Download, which hashes the bytes as
// they are read and checks them against v.Dist.Integrity, or v.Dist.Shasum
// when there is no integrity, once they have all been read (Verify). So
// the bytes can be unpacked while they arrive, and nothing holds the whole
// tarball; the caller must not trust (commit, serve) what it made of them
// until Verify returns nil, and must Close the download. name is the
// package the version belongs to; it picks the registry the URL must be
// on.
//
// Errors, from Tarball or later from the Download: ErrTarballURL (wrapped)
// when the URL is not http(s) on the package's registry host or an
// AllowedTarballHosts entry; ErrTooLarge over MaxTarballBytes; ErrIntegrity
// (wrapped) on a mismatch or when neither integrity nor shasum is given
// (then before any request); ErrNotFound (wrapped) on a 404; the caller's
// ctx.Err() when ctx ends first; otherwise an *unavailable.Error (wrapping
// ErrCircuitOpen, without a request, while the tarball host's breaker is
// open). TarballTimeout runs from the request to Close, so it bounds the
// reader's pace too. The auth header is sent only when the URL is under
// the package's registry URL.
func (c *Client) Tarball(ctx context.Context, name string, v PackumentVersion) (_ *Download, err error) {
	what := "tarball " + name + "@" + v.Version
	if _, err := escapeName(name); err != nil {
		return nil, err
	}
	registry := c.npm.RegistryFor(name)
	u, err := c.checkTarballURL(v.Dist.Tarball, registry)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	sum, err := newChecker(v.Dist)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}

	dctx, cancel := context.WithTimeout(ctx, c.cfg.TarballTimeout)
	defer func() {
		if err != nil {
			cancel()
		}
	}()
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
	defer func() {
		if err != nil {
			done(err)
		}
	}()
	resp, err := c.send(ctx, req, what)
	if err != nil {
		return nil, err
	}
	tooLarge := fmt.Errorf("%s: over %d bytes (Config.MaxTarballBytes): %w", what, c.cfg.MaxTarballBytes, ErrTooLarge)
	if resp.ContentLength > c.cfg.MaxTarballBytes {
		drainClose(resp.Body)
		return nil, tooLarge
	}
	return &Download{
		what: what, caller: ctx, body: resp.Body, size: resp.ContentLength,
		lim: &limitedReader{r: resp.Body, n: c.cfg.MaxTarballBytes}, sum: sum, tooLarge: tooLarge,
		cancel: cancel, done: done,
	}, nil
}

// Download is a tarball's body as it arrives (Client.Tarball). Read hashes
// what it returns; Verify reads the rest and checks the whole against the
// version's integrity. A read failure is returned as its upstream kind
// (ErrTooLarge, the caller's context error, an *unavailable.Error for a
// cut or stalled download) and sticks: Read and Verify return it from then
// on. Not safe for concurrent use.
type Download struct {
	what     string
	caller   context.Context
	body     io.ReadCloser
	lim      *limitedReader
	sum      *checker
	size     int64
	tooLarge error
	err      error // sticky: the first failure
	eof      bool
	cancel   context.CancelFunc
	done     func(error) // the breaker's record
}

// Read reads the tarball's next bytes.
func (d *Download) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if d.eof {
		return 0, io.EOF
	}
	n, err := d.lim.Read(p)
	d.sum.Write(p[:n])
	switch {
	case err == io.EOF:
		d.eof = true
	case err != nil && d.lim.exceeded:
		d.err = d.tooLarge
		err = d.err
	case err != nil:
		d.err = transportError(d.caller, d.what, err)
		err = d.err
	}
	return n, err
}

// Verify reads what the caller left unread (an archive's padding after
// its end marker, the gzip trailer), so the digest covers every byte, and
// returns nil only when they match the version's integrity; otherwise the
// download's failure or ErrIntegrity (wrapped).
func (d *Download) Verify() error {
	if d.err != nil {
		return d.err
	}
	if !d.eof {
		if _, err := io.Copy(io.Discard, d); err != nil {
			return err
		}
	}
	if err := d.sum.check(); err != nil {
		d.err = fmt.Errorf("%s: %w", d.what, err)
		return d.err
	}
	return nil
}

// Size is the body's length as the response declares it, -1 when it does
// not.
func (d *Download) Size() int64 { return d.size }

// Close ends the download: it frees the connection and the timeout and
// records the outcome with the host's breaker (a cut or stalled body
// counts against the host; a mismatch does not). It is idempotent.
func (d *Download) Close() error {
	if d.body == nil {
		return nil
	}
	if d.eof {
		drainClose(d.body)
	} else {
		// Not read to the end (the reader failed, or gave up): draining
		// could wait on a stalled host until TarballTimeout.
		d.body.Close()
	}
	d.body = nil
	d.cancel()
	d.done(d.err)
	return nil
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
