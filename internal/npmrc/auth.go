package npmrc

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
)

// Credentials are keyed by a "nerf dart": a URL without its scheme, such as
// "//host:8080/path/". These are the suffixes npm reads (npm-registry-fetch
// lib/auth.js), in the order it prefers them.
const (
	keyToken    = ":_authToken"
	keyAuth     = ":_auth"
	keyUsername = ":username"
	keyPassword = ":_password"
)

// AuthHeader returns the Authorization header value npm would send to
// rawURL, or "" when no credential applies. Like npm, it tries the URL's
// "//host[:port]/path" and walks up one path segment (or one trailing
// slash) at a time down to "//host", so the longest configured prefix
// wins. Within one prefix an _authToken ("Bearer ...") beats _auth
// ("Basic ...") which beats username + base64 _password ("Basic ...").
//
// Unlike npm, it does not fall back to the default registry's credentials
// for other URLs on the same host: a caller that wants that passes the
// registry URL itself.
func (c *Config) AuthHeader(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return ""
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/" // WHATWG URL's pathname of "http://h" is "/"
	}
	key := "//" + canonicalHost(u) + path
	for len(key) > len("//") {
		if h := c.authFor(key); h != "" {
			return h
		}
		// "//h/a/b/" → "//h/a/b" → "//h/a/" → "//h/a" → ...
		if strings.HasSuffix(key, "/") {
			key = key[:len(key)-1]
		} else {
			key = key[:strings.LastIndexByte(key, '/')+1]
		}
	}
	return ""
}

// authFor returns the header for credentials configured exactly at key.
func (c *Config) authFor(key string) string {
	if tok := c.kv[key+keyToken]; tok != "" {
		return "Bearer " + tok
	}
	if auth := c.kv[key+keyAuth]; auth != "" {
		return "Basic " + auth
	}
	user, pass := c.kv[key+keyUsername], c.kv[key+keyPassword]
	if user == "" || pass == "" {
		return ""
	}
	// npm stores _password base64-encoded and decodes it leniently; a
	// value that is not base64 at all gives no credential here rather than
	// sending garbage.
	plain, ok := decodeBase64(pass)
	if !ok {
		return ""
	}
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+plain))
}

// authPrefixes lists the nerf darts that carry a credential, for String.
func (c *Config) authPrefixes() []string {
	var out []string
	for k := range c.kv {
		for _, suffix := range []string{keyToken, keyAuth, keyUsername} {
			if p, ok := strings.CutSuffix(k, suffix); ok && strings.HasPrefix(p, "//") && c.authFor(p) != "" && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// canonicalHost is the URL's host as WHATWG URL parsing gives it, which is
// how npm builds nerf darts: lower case, without the scheme's default port.
func canonicalHost(u *url.URL) string {
	host := strings.ToLower(u.Host)
	switch {
	case u.Scheme == "https" && strings.HasSuffix(host, ":443"):
		host = strings.TrimSuffix(host, ":443")
	case u.Scheme == "http" && strings.HasSuffix(host, ":80"):
		host = strings.TrimSuffix(host, ":80")
	}
	return host
}

func decodeBase64(s string) (string, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b), true
		}
	}
	return "", false
}
