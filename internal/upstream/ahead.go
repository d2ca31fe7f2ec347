package upstream

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"
)

// A cold version's manifest takes a round trip (about 27 ms measured)
// before its tarball could be asked for, and a small package's whole
// download is not much more (lucide-react's 3.4 MB, 38 ms). So when
// Version asks the registry for a manifest, and Config.MaxAheadTarballs
// is above 0 (it is 0 by default), it asks at the same time for
// the tarball at the URL where npm's registry lays tarballs out,
// <registry><name>/-/<name without its scope>-<version>.tgz, and keeps
// the answer, its headers read and its body not, for Tarball: when the
// manifest's dist.tarball is exactly that URL, Tarball uses the answer
// instead of asking again. Nothing of the body is read before Tarball,
// which the fill calls only once the version's declared sizes passed
// (ingest.CheckDeclared), so a refused version costs an open connection
// and headers; the integrity check is Tarball's as ever.
//
// A guess is sent only while the registry host's breaker is closed and
// never as its probe (breakers.allowAhead); its failures (a 404, a 5xx,
// no answer) are never reported: Tarball asks dist.tarball as before. At
// most MaxAheadTarballs guesses are in flight or kept at once, each at
// most RequestTimeout after its manifest arrived (a version resolved and
// not filled at once: metadata routes, a fill waiting for its slot).

// ahead holds the guessed tarball requests, by version.
type ahead struct {
	mu  sync.Mutex
	max int // MaxAheadTarballs; < 1 sends none
	m   map[versionKey]*guess
}

// guess is one tarball request sent with its version's manifest.
type guess struct {
	url    string
	answer chan guessed // the request's outcome, sent once
	stop   context.CancelFunc
	expiry *time.Timer // set once kept
}

type guessed struct {
	o   *opened
	err error
}

// guess sends the request for name@version's tarball at the registry's
// conventional URL, in the background, and returns it; nil when it sends
// nothing: MaxAheadTarballs are out already, the version has a guess
// already, or the host's breaker would not let it go as an ordinary
// request.
func (c *Client) guess(ctx context.Context, name, version string) *guess {
	base := name // "@scope/name"'s file is "name-<version>.tgz"
	if strings.HasPrefix(name, "@") {
		_, base, _ = strings.Cut(name, "/")
	}
	registry := c.npm.RegistryFor(name)
	raw := registry + name + "/-/" + base + "-" + url.PathEscape(version) + ".tgz"
	u, err := c.checkTarballURL(raw, registry)
	if err != nil {
		return nil
	}
	key := versionKey{name, version}
	c.ahead.mu.Lock()
	defer c.ahead.mu.Unlock()
	if len(c.ahead.m) >= c.ahead.max || c.ahead.m[key] != nil {
		return nil
	}
	done, ok := c.breakers.allowAhead(breakerKey(u))
	if !ok {
		return nil
	}
	actx, stop := context.WithCancel(ctx)
	g := &guess{url: raw, answer: make(chan guessed, 1), stop: stop}
	c.ahead.m[key] = g
	what := "tarball " + name + "@" + version
	go func() {
		o, err := c.open(actx, what, registry, u, done)
		if o != nil {
			cancel := o.cancel
			o.cancel = func() { cancel(); stop() }
		}
		g.answer <- guessed{o, err}
	}()
	return g
}

// keep holds name@version's guess for Tarball when the manifest names its
// URL (tarball), for at most RequestTimeout; otherwise it closes it.
func (c *Client) keep(name, version string, g *guess, tarball string) {
	if tarball != g.url {
		c.dropGuess(versionKey{name, version}, g)
		return
	}
	c.ahead.mu.Lock()
	defer c.ahead.mu.Unlock()
	g.expiry = time.AfterFunc(c.cfg.RequestTimeout, func() { c.dropGuess(versionKey{name, version}, g) })
}

// takeGuess returns the kept answer of name@version's tarball at tarball,
// nil when there is none: no guess, another URL, or the guess failed.
// Nothing is reported of a failed guess.
func (c *Client) takeGuess(ctx context.Context, name, version, tarball string) *opened {
	key := versionKey{name, version}
	c.ahead.mu.Lock()
	g := c.ahead.m[key]
	if g == nil || g.url != tarball {
		c.ahead.mu.Unlock()
		return nil
	}
	delete(c.ahead.m, key)
	if g.expiry != nil {
		g.expiry.Stop()
	}
	c.ahead.mu.Unlock()
	select {
	case a := <-g.answer:
		if a.err != nil {
			g.stop()
			return nil
		}
		// The request was sent detached, with Version's flight; from now
		// on it is the caller's, as Tarball's own would be.
		o := a.o
		o.caller = ctx
		unlink := context.AfterFunc(ctx, g.stop)
		cancel := o.cancel
		o.cancel = func() { unlink(); cancel() }
		return o
	case <-ctx.Done():
		g.close()
		return nil
	}
}

// dropGuess closes g if it is still key's, which nobody took.
func (c *Client) dropGuess(key versionKey, g *guess) {
	c.ahead.mu.Lock()
	mine := c.ahead.m[key] == g // else Tarball or Close took it
	if mine {
		delete(c.ahead.m, key)
		if g.expiry != nil {
			g.expiry.Stop()
		}
	}
	c.ahead.mu.Unlock()
	if mine {
		g.close()
	}
}

// close ends g's request without reading its body and waits for it. Call
// it once, after g left the map.
func (g *guess) close() {
	g.stop()
	if a := <-g.answer; a.o != nil {
		a.o.discard()
	}
}

// Close ends the tarball requests sent ahead (Version) that no Tarball
// took, without reading their bodies. The client stays usable.
func (c *Client) Close() {
	c.ahead.mu.Lock()
	gs := make([]*guess, 0, len(c.ahead.m))
	for key, g := range c.ahead.m {
		if g.expiry == nil {
			continue // its manifest is still in flight, which keeps or drops it
		}
		g.expiry.Stop()
		delete(c.ahead.m, key)
		gs = append(gs, g)
	}
	c.ahead.mu.Unlock()
	for _, g := range gs {
		g.close()
	}
}
