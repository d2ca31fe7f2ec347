package npmspec

import (
	"testing"

	"github.com/pkgscope/pkgscope/internal/nodesemver"
)

// FuzzCanonicalAgrees: the X.Y.Z fast path answers exactly what node-semver
// answers for every input it accepts.
func FuzzCanonicalAgrees(f *testing.F) {
	for _, s := range []string{"1.2.3", "0.0.0", "01.2.3", "1.2", "1.2.3.4", "999999999999999.0.0", "1.2.3-beta", "1..3", ".1.2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !canonical(s) {
			return
		}
		v, ok := nodesemver.Valid(s, nodesemver.Loose)
		if !ok || v != s {
			t.Fatalf("canonical(%q) but node-semver says %q, %v", s, v, ok)
		}
	})
}
