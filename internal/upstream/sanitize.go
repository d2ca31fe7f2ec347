package upstream

import (
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/pkgscope/pkgscope/internal/nodesemver"
)

// A registry's metadata is not trusted as it comes: a hostile or
// compromised registry listed versions "../../etc", "<b>1</b>" and
// "1.0.0\r\nSet-Cookie: pwn=1", and dist-tags pointing at them, and the
// mirror stored and served them, the CR/LF splitting the MCP answer's
// header line so forged lines read like the mirror's own (issue 25 §3).
// npm installs only versions node-semver parses, so a packument is
// sanitized as it is read: what npm would ignore is dropped, and counted.

// ValidVersion reports whether v may be a version the registry lists: a
// version in node-semver's strict grammar, written as such (starting with
// a digit, no spaces, no "v" or "="), which limits it to ASCII digits,
// letters, '.', '-' and '+'.
func ValidVersion(v string) bool {
	if v == "" || v[0] < '0' || v[0] > '9' || strings.TrimSpace(v) != v {
		return false
	}
	_, ok := nodesemver.Valid(v, nodesemver.Strict)
	return ok
}

// validTag reports whether t may be a dist-tag's name: npm's tags are
// short words ("latest", "next", "v3-lts"); one that holds a control
// character or invalid UTF-8 could only forge lines of a text answer.
func validTag(t string) bool {
	return t != "" && len(t) <= maxTagBytes && utf8.ValidString(t) && Printable(t) == t
}

// maxTagBytes is the longest dist-tag name kept: the largest packuments'
// tags are under 40 bytes.
const maxTagBytes = 256

// Dropped counts what sanitizing registry answers dropped since the
// client was made: versions that are not semver, dist-tags with a bad
// name or pointing at such a version, and search results whose name
// cannot be a package's.
type Dropped struct {
	Versions, Tags, Names int64
}

type dropCounter struct{ versions, tags, names atomic.Int64 }

// Dropped returns how many versions and dist-tags the client's
// packuments dropped as invalid (metric pkgscope_upstream_dropped_total).
func (c *Client) Dropped() Dropped {
	return Dropped{Versions: c.dropped.versions.Load(), Tags: c.dropped.tags.Load(), Names: c.dropped.names.Load()}
}

// sanitize drops from p the versions that are not ValidVersion and the
// dist-tags that are not validTag or point at a version that is not
// ValidVersion, counting both in d.
func (d *dropCounter) sanitize(p *Packument) {
	for v := range p.Versions {
		if !ValidVersion(v) {
			delete(p.Versions, v)
			d.versions.Add(1)
		}
	}
	for t, v := range p.DistTags {
		if !ValidVersion(v) || !validTag(t) {
			delete(p.DistTags, t)
			d.tags.Add(1)
		}
	}
}

// Printable returns s with every control character (C0, DEL, C1, and the
// line and paragraph separators) and every invalid UTF-8 byte replaced by
// a space, so that text from a registry (a deprecation message, a tag)
// stays on the line of the answer it is quoted in.
func Printable(s string) string {
	if !strings.ContainsFunc(s, unprintable) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unprintable(r) {
			b.WriteByte(' ')
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unprintable reports whether r may not appear in a line of text quoted
// from a registry: a control character, a line or paragraph separator, or
// an invalid byte (decoded as utf8.RuneError).
func unprintable(r rune) bool {
	return r == utf8.RuneError || unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}
