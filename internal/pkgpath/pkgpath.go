// Package pkgpath is the one path rule of pkgscope: the same function
// cleans a tar entry name at ingest and a path an agent asks for, so a file
// is stored under exactly the name a query for it cleans to.
//
// A clean path is relative to the package root, slash-separated, with no
// leading or trailing slash, no empty, "." or ".." segment, no backslash, no
// NUL or other control character, at most MaxPathBytes bytes and MaxDepth
// segments. Tar entry names may hold bytes that are not valid UTF-8 (old
// tarballs were packed on Latin-1 systems; the store keeps paths as bytes);
// queries, which arrive in JSON, must be valid UTF-8.
//
// Nothing here touches a file system: a clean path is a key, never joined
// onto a directory. The rules are still as strict as an extractor's because
// the API hands these paths to agents that may write them to disk.
package pkgpath

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Defaults of Limits.
const (
	// DefaultMaxPathBytes bounds a clean path's length. Linux's PATH_MAX is
	// 4096 and npm's own tar (node-tar) has no limit, but no package we
	// have seen comes near 1024: the longest paths are deep dist/ trees of
	// about 250 bytes.
	DefaultMaxPathBytes = 1024
	// DefaultMaxDepth bounds a clean path's segment count; real packages
	// stay under 20 levels.
	DefaultMaxDepth = 64
)

// Errors, tested with errors.Is. Each returned error also says what is
// wrong and quotes (a prefix of) the path.
var (
	// ErrInvalid: the path is malformed (empty, absolute entry, "..",
	// backslash, control character, invalid UTF-8 in a query).
	ErrInvalid = errors.New("invalid path")
	// ErrTooLong: the clean path exceeds MaxPathBytes or MaxDepth.
	ErrTooLong = errors.New("path too long")
	// ErrAtRoot: a tar entry has no top folder to strip, such as a bare
	// "README.md" beside "package/". node-tar's strip:1, which npm uses,
	// drops such entries, so ingest drops them too.
	ErrAtRoot = errors.New("tar entry has no top folder")
)

// Limits are the configurable bounds of a clean path. The zero Limits
// refuse every path: start from DefaultLimits.
type Limits struct {
	// MaxPathBytes is the most bytes a clean path may have (default
	// DefaultMaxPathBytes).
	MaxPathBytes int
	// MaxDepth is the most segments a clean path may have (default
	// DefaultMaxDepth).
	MaxDepth int
}

// DefaultLimits returns the default bounds.
func DefaultLimits() Limits {
	return Limits{MaxPathBytes: DefaultMaxPathBytes, MaxDepth: DefaultMaxDepth}
}

// Clean cleans p with the default limits; see Limits.Clean.
func Clean(p string) (string, error) { return DefaultLimits().Clean(p) }

// CleanQuery cleans a user's path with the default limits; see
// Limits.CleanQuery.
func CleanQuery(p string) (string, error) { return DefaultLimits().CleanQuery(p) }

// CleanEntry cleans a tar entry name with the default limits; see
// Limits.CleanEntry.
func CleanEntry(name string) (string, error) { return DefaultLimits().CleanEntry(name) }

// Clean returns p in clean form: leading slashes, "//" and "." segments are
// removed; a ".." segment anywhere (even one that cleaning would cancel,
// like "a/../b"), a backslash, a NUL or control character, or an empty
// result is ErrInvalid; a result over the limits is ErrTooLong. Bytes that
// are not valid UTF-8 are kept. Clean is idempotent, and returns p itself,
// without allocating, when p is already clean.
func (l Limits) Clean(p string) (string, error) {
	return l.clean(p, false)
}

// CleanQuery is Clean for a path an agent sent: it must also be valid
// UTF-8. A leading "/" is accepted ("/index.js" is "index.js"), since agents
// often write package paths as absolute.
func (l Limits) CleanQuery(p string) (string, error) {
	if !utf8.ValidString(p) {
		return "", invalid(p, "is not valid UTF-8")
	}
	return l.clean(p, false)
}

// CleanEntry turns a tar entry name into a package path. Like node-tar's
// strip:1, with which npm extracts, it drops the first segment of the raw
// name, the top folder, whatever it is: "package" usually, the package's
// own name in @types/* tarballs, "." in old tarballs made with "tar czf x
// ." (so "./index.js" is "index.js"). The rest is cleaned like Clean. A
// name with nothing under its top folder is ErrAtRoot.
//
// It is stricter than node-tar on purpose: an absolute name (which
// node-tar would strip of its "/") and a ".." in any segment, the top one
// included, are ErrInvalid; an npm-packed tarball has neither, so they are
// signs of a hostile archive. The limits apply to the stripped path, the
// one that is stored and queried.
func (l Limits) CleanEntry(name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return "", invalid(name, "is absolute")
	}
	return l.clean(name, true)
}

// clean checks every byte once, then walks the segments, building the
// output only when a segment is dropped. Work is linear in len(p) and the
// output never grows past MaxPathBytes, so a 1 MiB PAX name costs
// nothing beyond its scan.
func (l Limits) clean(p string, stripTop bool) (string, error) {
	if p == "" {
		return "", invalid(p, "is empty")
	}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == 0:
			return "", invalid(p, "contains a NUL byte")
		case c == '\\':
			return "", invalid(p, `contains a backslash (a separator on Windows, so "..\" would escape)`)
		case c < 0x20 || c == 0x7f:
			return "", invalid(p, fmt.Sprintf("contains control character %#02x", c))
		case c < utf8.RuneSelf:
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(p[i:])
		// An invalid byte decodes as RuneError of size 1: kept (queries
		// were checked for UTF-8 before). A valid C1 control
		// (U+0080..U+009F) is refused like its C0 kin.
		if size > 1 && unicode.IsControl(r) {
			return "", invalid(p, fmt.Sprintf("contains control character %U", r))
		}
		i += size
	}

	// ".." first, so that a hostile name is always ErrInvalid, even when
	// it is also too long.
	for rest := p; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "/")
		if seg == ".." {
			return "", invalid(p, `contains a ".." segment`)
		}
	}

	var (
		b      []byte // the output, once it is no longer one slice of p
		start  = -1   // the output is p[start:end] while b is nil
		end    = 0
		depth  = 0
		topCut = !stripTop
	)
	for rest := p; ; {
		seg, tail, more := strings.Cut(rest, "/")
		off := len(p) - len(rest)
		switch {
		case !topCut:
			topCut = true // even "." : node-tar strips the raw first segment
		case seg == "" || seg == ".":
			// dropped
		default:
			depth++
			if depth > l.MaxDepth {
				return "", &TooLongError{Path: short(p), Limit: "MaxDepth", Max: l.MaxDepth}
			}
			cur := 0 // length of the output so far, with the separator
			if b != nil {
				cur = len(b) + 1
			} else if start >= 0 {
				cur = end - start + 1
			}
			if cur+len(seg) > l.MaxPathBytes {
				return "", &TooLongError{Path: short(p), Limit: "MaxPathBytes", Max: l.MaxPathBytes}
			}
			switch {
			case b != nil:
				b = append(append(b, '/'), seg...)
			case start < 0:
				start, end = off, off+len(seg)
			case end == off-1: // right after the output so far
				end = off + len(seg)
			default: // something was dropped in between: copy out
				b = make([]byte, 0, min(len(p), l.MaxPathBytes))
				b = append(append(append(b, p[start:end]...), '/'), seg...)
			}
		}
		if !more {
			break
		}
		rest = tail
	}
	switch {
	case b != nil:
		return string(b), nil
	case start >= 0:
		return p[start:end], nil
	case stripTop && topCut:
		return "", fmt.Errorf("%w: %q", ErrAtRoot, short(p))
	}
	return "", invalid(p, "is empty once cleaned")
}

func invalid(p, why string) error {
	return fmt.Errorf("%w: %q %s", ErrInvalid, short(p), why)
}

// TooLongError is the error for a path over a limit. errors.Is(err,
// ErrTooLong) holds for it; errors.As gives which limit, so a caller with
// its own setting names (ingest) can say which of its settings was hit.
type TooLongError struct {
	// Path is the path, shortened to a prefix when long.
	Path string
	// Limit is the Limits field that was exceeded: "MaxPathBytes" or
	// "MaxDepth".
	Limit string
	// Max is that field's value.
	Max int
}

func (e *TooLongError) Error() string {
	what := "bytes"
	if e.Limit == "MaxDepth" {
		what = "segments"
	}
	return fmt.Sprintf("%v: %q has more than %s = %d %s once cleaned", ErrTooLong, e.Path, e.Limit, e.Max, what)
}

// Unwrap makes the error match ErrTooLong.
func (e *TooLongError) Unwrap() error { return ErrTooLong }

// short bounds how much of a path an error message quotes: a hostile PAX
// name can be 1 MiB.
func short(p string) string {
	const max = 80
	if len(p) <= max {
		return p
	}
	return p[:max] + "..."
}

// Escape escapes each segment of a clean path for a URL's path, keeping
// its slashes: "dist/a b.js" is "dist/a%20b.js".
func Escape(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return strings.Join(segs, "/")
}
