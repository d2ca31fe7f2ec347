// Package auth checks bearer tokens: the mirror serves one organisation,
// and once tokens are configured every route but the health checks needs
// one.
//
// Tokens are kept only as SHA-256 hashes, in memory and optionally on
// disk: a token presented by a caller is hashed and compared with every
// known hash in constant time (crypto/subtle), so neither the comparison
// nor a memory dump gives a token away. A token string is never logged and
// never put in an error message; parse errors name the line or entry, not
// its text.
//
// One grammar serves the tokens file (one entry per line, # comments) and
// the PKGSCOPE_TOKENS variable (entries separated by commas):
//
//	TOKEN                       any package but private scopes
//	TOKEN:@myorg,@other         only packages in these npm scopes
//
// A private scope is one with a registry of its own in npm's configuration
// (@myorg:registry=…): its packages are served only to tokens that list the
// scope, never to an unrestricted token (see Identity.AllowsPackage).
//
//	sha256:HEX                  the same, stored hashed (see Hash)
//	sha256:HEX:@myorg
//
// A token is RFC 6750's b64token (letters, digits, - . _ ~ + / and
// trailing =), so it never contains ':', ',' or '@', and an element
// starting with '@' after a comma continues the previous entry's scopes:
// "a:@x,@y,b" is token a limited to @x and @y, then token b.
package auth

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/pkgscope/pkgscope/internal/npmspec"
)

// HashPrefix starts the stored (hashed) form of a token.
const HashPrefix = "sha256:"

// Token is one accepted token: the SHA-256 of its text and the npm scopes
// it is limited to.
type Token struct {
	// Sum is sha256(token).
	Sum [sha256.Size]byte
	// Scopes are npm scopes ("@myorg") the token may read; empty means
	// every package. Private scope registries will rely on it.
	Scopes []string
}

// ID names the token without revealing it: the first 8 bytes of its hash
// in hex. It is stable across restarts and replicas, for rate-limit keys
// and audit lines.
func (t Token) ID() string { return hex.EncodeToString(t.Sum[:8]) }

// Hash returns the stored form of token, "sha256:" and the hex SHA-256,
// for a tokens file that should not hold tokens in the clear.
func Hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return HashPrefix + hex.EncodeToString(sum[:])
}

// Identity is a verified caller.
type Identity struct {
	// ID is Token.ID of the token presented.
	ID string
	// Scopes are the token's scope limit; empty means unrestricted.
	Scopes []string
}

// Allows reports whether the identity may read package name: always for
// an unrestricted token, else when name's scope is one of its scopes.
func (id Identity) Allows(name string) bool {
	if len(id.Scopes) == 0 {
		return true
	}
	scope, _, ok := strings.Cut(name, "/")
	return ok && strings.HasPrefix(scope, "@") && id.hasScope(scope)
}

// hasScope reports whether scope is one of the token's, in any case: npm
// scopes are lower case, and a name spelt in another case must not match
// differently here than in .npmrc's registry lookup.
func (id Identity) hasScope(scope string) bool {
	return slices.ContainsFunc(id.Scopes, func(s string) bool { return strings.EqualFold(s, scope) })
}

// AllowsPackage is Allows with private scopes: a package of a scope that
// has its own registry (private) is readable only by a token that lists
// that scope explicitly.
func (id Identity) AllowsPackage(name string, private bool) bool {
	if !private {
		return id.Allows(name)
	}
	scope, _, ok := strings.Cut(name, "/")
	return ok && id.hasScope(scope)
}

// Set is an immutable set of accepted tokens, safe for concurrent use.
type Set struct {
	tokens []Token
}

// NewSet returns a Set of tokens; it fails when two entries are the same
// token (a copy-paste slip that would hide which scope list applies).
func NewSet(tokens []Token) (*Set, error) {
	seen := make(map[[sha256.Size]byte]int, len(tokens))
	for i, t := range tokens {
		if j, ok := seen[t.Sum]; ok {
			return nil, fmt.Errorf("token entries %d and %d are the same token", j+1, i+1)
		}
		seen[t.Sum] = i
	}
	return &Set{tokens: slices.Clone(tokens)}, nil
}

// Len is the number of tokens; 0 means authentication is off.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.tokens)
}

// Verify returns the identity of token, or false when it is not in the
// set. It hashes token and compares the hash with every known hash in
// constant time, without stopping at a match: the time taken depends only
// on the number of tokens configured.
func (s *Set) Verify(token string) (Identity, bool) {
	if s.Len() == 0 || token == "" {
		return Identity{}, false
	}
	sum := sha256.Sum256([]byte(token))
	match := -1
	for i := range s.tokens {
		eq := subtle.ConstantTimeCompare(sum[:], s.tokens[i].Sum[:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return Identity{}, false
	}
	t := s.tokens[match]
	return Identity{ID: t.ID(), Scopes: t.Scopes}, true
}

// ByID returns the identity of the token whose ID is id, or false when
// the set holds none: a web session records the token's ID, never the
// token, and acts with its identity only while the mirror accepts it.
func (s *Set) ByID(id string) (Identity, bool) {
	if s.Len() == 0 || id == "" {
		return Identity{}, false
	}
	for _, t := range s.tokens {
		if t.ID() == id {
			return Identity{ID: id, Scopes: t.Scopes}, true
		}
	}
	return Identity{}, false
}

// Load reads the tokens of file (may be "") and of list (the
// PKGSCOPE_TOKENS value, may be "") into one Set. Both empty gives an
// empty Set: authentication off.
func Load(file, list string) (*Set, error) {
	var tokens []Token
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("reading tokens-file: %w", err)
		}
		defer f.Close()
		ts, err := ParseFile(f)
		if err != nil {
			return nil, fmt.Errorf("tokens-file %s: %w", file, err)
		}
		tokens = ts
	}
	if list != "" {
		ts, err := ParseList(list)
		if err != nil {
			return nil, fmt.Errorf("PKGSCOPE_TOKENS: %w", err)
		}
		tokens = append(tokens, ts...)
	}
	return NewSet(tokens)
}

// ErrSyntax is wrapped by every parse error. Parse errors say where the
// fault is and what is wrong, never the entry's text.
var ErrSyntax = errors.New("invalid token entry")

// ParseFile reads a tokens file: one entry per line; blank lines and lines
// starting with # are ignored, as is space around an entry.
func ParseFile(r io.Reader) ([]Token, error) {
	var tokens []Token
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		t, err := parseEntry(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		tokens = append(tokens, t)
	}
	if err := sc.Err(); err != nil {
		// bufio.ErrTooLong names no content; other read errors are I/O.
		return nil, fmt.Errorf("reading: %w", err)
	}
	return tokens, nil
}

// ParseList reads the comma-separated form: "a,b:@x,@y,c". Space around
// elements is ignored; empty elements are skipped.
func ParseList(s string) ([]Token, error) {
	var entries []string
	for _, el := range strings.Split(s, ",") {
		el = strings.TrimSpace(el)
		switch {
		case el == "":
		case el[0] == '@':
			if len(entries) == 0 || !strings.Contains(entries[len(entries)-1], ":@") {
				return nil, fmt.Errorf("element %d: %w: a scope with no token before it", len(entries)+1, ErrSyntax)
			}
			entries[len(entries)-1] += "," + el
		default:
			entries = append(entries, el)
		}
	}
	tokens := make([]Token, 0, len(entries))
	for i, e := range entries {
		t, err := parseEntry(e)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		tokens = append(tokens, t)
	}
	return tokens, nil
}

// parseEntry parses TOKEN[:SCOPES] or sha256:HEX[:SCOPES].
func parseEntry(e string) (Token, error) {
	var t Token
	secret, scopes, hasScopes := strings.Cut(e, ":")
	if hasScopes && secret+":" == HashPrefix && !strings.HasPrefix(scopes, "@") {
		var hexSum string
		hexSum, scopes, hasScopes = strings.Cut(scopes, ":")
		b, err := hex.DecodeString(hexSum)
		if err != nil || len(b) != sha256.Size {
			return t, fmt.Errorf("%w: %s must be followed by 64 hex digits", ErrSyntax, HashPrefix)
		}
		copy(t.Sum[:], b)
	} else {
		if err := checkToken(secret); err != nil {
			return t, err
		}
		t.Sum = sha256.Sum256([]byte(secret))
	}
	if hasScopes {
		for s := range strings.SplitSeq(scopes, ",") {
			s = strings.TrimSpace(s)
			if !strings.HasPrefix(s, "@") || strings.Contains(s, "/") || npmspec.ValidateName(s+"/x") != nil {
				return t, fmt.Errorf("%w: after ':' come npm scopes like @myorg, separated by commas", ErrSyntax)
			}
			if !slices.Contains(t.Scopes, s) {
				t.Scopes = append(t.Scopes, s)
			}
		}
	}
	return t, nil
}

// checkToken enforces RFC 6750's b64token syntax, which is also what lets
// the entry grammar split on ':' and ','.
func checkToken(tok string) error {
	if tok == "" {
		return fmt.Errorf("%w: empty token", ErrSyntax)
	}
	body := strings.TrimRight(tok, "=")
	if body == "" {
		return fmt.Errorf("%w: a token cannot be only '='", ErrSyntax)
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
		if !ok {
			return fmt.Errorf("%w: byte %d of the token is not allowed (use letters, digits and - . _ ~ + /)", ErrSyntax, i+1)
		}
	}
	return nil
}
