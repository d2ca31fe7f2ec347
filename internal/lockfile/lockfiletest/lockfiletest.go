// Package lockfiletest builds hostile lockfiles in code for the tests of
// the packages that parse them (internal/lockfile, test/reliability).
package lockfiletest

import (
	"fmt"
	"strings"
)

// NestingPnpm is a pnpm lockfile whose layout grows as n²: n packages, the
// root holding each at 1.1.0, each one's 1.0.0 depending on the 1.0.0 of
// the next k-1 (and 1.1.0 on the next one's 1.0.0). No 1.0.0 can hoist to
// the root, where 1.1.0 sits, so every folder nests copies of the next
// packages: n·(n+1) folders for about 1 KB of lockfile per package when
// k is 40 (280 packages: 280 KB, 78,680 folders).
func NestingPnpm(n, k int) string {
	var b strings.Builder
	name := func(i int) string { return fmt.Sprintf("p%04d", i%n) }
	b.WriteString("lockfileVersion: '9.0'\n\nimporters:\n  .:\n    dependencies:\n")
	for i := range n {
		fmt.Fprintf(&b, "      %s:\n        specifier: 1.1.0\n        version: 1.1.0\n", name(i))
	}
	b.WriteString("\npackages:\n\n")
	for i := range n {
		for _, v := range []string{"1.0.0", "1.1.0"} {
			fmt.Fprintf(&b, "  %s@%s:\n    resolution: {integrity: sha512-x}\n\n", name(i), v)
		}
	}
	b.WriteString("snapshots:\n\n")
	for i := range n {
		fmt.Fprintf(&b, "  %s@1.1.0:\n    dependencies:\n      %s: 1.0.0\n\n", name(i), name(i+1))
		fmt.Fprintf(&b, "  %s@1.0.0:\n    dependencies:\n", name(i))
		for j := 1; j < k; j++ {
			fmt.Fprintf(&b, "      %s: 1.0.0\n", name(i+j))
		}
		b.WriteString("\n")
	}
	return b.String()
}
