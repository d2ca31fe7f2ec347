// Package release checks what users install: its test builds this
// machine's release artefacts with scripts/release.sh --local, installs
// the npm packages from their tarballs into an empty folder with no
// registry reachable, and runs the installed bin as a user and an MCP
// client would (`npx --no-install pkgscope --version`, then `initialize`
// and `tools/list` over stdio through the same bin).
//
// It needs git (the build stamps the commit), GNU tar, node and npm, and
// fails, never skips, without them. The first run compiles both binaries
// with -trimpath (about 2.5 CPU-minutes); later runs reuse
// Go's build cache.
package release
