package upstream

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
)

// sriAlgos are the Subresource Integrity algorithms accepted in
// dist.integrity, strongest first. npm writes sha512 since npm 5 (2017);
// older versions carry only a sha1 shasum, which some registries also copy
// into integrity as "sha1-...".
var sriAlgos = []struct {
	name string
	new  func() hash.Hash
	size int
}{
	{"sha512", sha512.New, sha512.Size},
	{"sha384", sha512.New384, sha512.Size384},
	{"sha256", sha256.New, sha256.Size},
	{"sha1", sha1.New, sha1.Size},
}

// checker hashes a tarball as it streams and then checks the digest as
// npm (ssri) does: when dist.integrity holds any usable entry, the
// strongest algorithm present decides, and the bytes pass if they match
// any entry of that algorithm. Without a usable integrity, dist.shasum
// (sha1, hex) decides. With neither, newChecker refuses before a byte is
// fetched: bytes nobody vouched for are never stored.
type checker struct {
	h     hash.Hash
	algo  string   // sriAlgos name, or "" for dist.shasum
	wants [][]byte // digests that pass
	dist  Dist
}

// newChecker picks the digest that decides for dist; ErrIntegrity (wrapped)
// when there is none.
func newChecker(dist Dist) (*checker, error) {
	digests := parseSRI(dist.Integrity)
	for i, a := range sriAlgos {
		if len(digests[i]) > 0 {
			return &checker{h: a.new(), algo: a.name, wants: digests[i], dist: dist}, nil
		}
	}
	if dist.Shasum != "" {
		want, err := hex.DecodeString(strings.TrimSpace(dist.Shasum))
		if err != nil || len(want) != sha1.Size {
			return nil, fmt.Errorf("%w: dist.shasum %q is not a sha1 hex digest", ErrIntegrity, truncate(dist.Shasum))
		}
		return &checker{h: sha1.New(), wants: [][]byte{want}, dist: dist}, nil
	}
	if dist.Integrity != "" {
		return nil, fmt.Errorf("%w: dist.integrity %q has no sha512/384/256/1 digest and there is no dist.shasum", ErrIntegrity, truncate(dist.Integrity))
	}
	return nil, fmt.Errorf("%w: the registry gives neither dist.integrity nor dist.shasum", ErrIntegrity)
}

// Write hashes p; it never fails.
func (c *checker) Write(p []byte) (int, error) { return c.h.Write(p) }

// check reports whether the bytes written match; ErrIntegrity (wrapped)
// when they do not.
func (c *checker) check() error {
	got := c.h.Sum(nil)
	for _, want := range c.wants {
		if subtle.ConstantTimeCompare(got, want) == 1 {
			return nil
		}
	}
	if c.algo == "" {
		return fmt.Errorf("%w: sha1 is %x, dist.shasum says %s", ErrIntegrity, got, c.dist.Shasum)
	}
	return fmt.Errorf("%w: %s is %s-%s, dist.integrity says %s",
		ErrIntegrity, c.algo, c.algo, base64.StdEncoding.EncodeToString(got), truncate(c.dist.Integrity))
}

// parseSRI returns, per sriAlgos index, the digests of an SRI string:
// whitespace-separated "algo-base64[?options]" entries. Entries with an
// unknown algorithm or a digest of the wrong length are ignored, as ssri
// ignores them.
func parseSRI(sri string) [][][]byte {
	out := make([][][]byte, len(sriAlgos))
	for _, field := range strings.Fields(sri) {
		algo, rest, ok := strings.Cut(field, "-")
		if !ok {
			continue
		}
		digest, _, _ := strings.Cut(rest, "?")
		for i, a := range sriAlgos {
			if a.name != algo {
				continue
			}
			b, err := base64.StdEncoding.DecodeString(digest)
			if err != nil {
				b, err = base64.RawStdEncoding.DecodeString(digest)
			}
			if err == nil && len(b) == a.size {
				out[i] = append(out[i], b)
			}
		}
	}
	return out
}
