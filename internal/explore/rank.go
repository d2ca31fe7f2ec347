package explore

import (
	"path"
	"strings"
)

// Tiers order grep's files by what answers an API question: a model asking
// where useRouter is declared wants next's .d.ts, not the 100 matches in
// its minified dist/compiled chunks that sort first by path (next 16.4.6:
// 94 of the first 100 matches by path were in bundles). Within a tier,
// files keep path order.
const (
	tierDeclaration = iota // .d.ts, .d.mts, .d.cts
	tierSource             // readable .js/.ts sources
	tierOther              // package.json, styles, other text
	tierBundle             // minified or bundled files
	tierDoc                // README, CHANGELOG, LICENSE, .md, .txt
	tierGenerated          // source maps, build info, lockfiles, snapshots
	numTiers
)

// tierGroups are the tiers an agent reads, then the ones it rarely does;
// grep gives each group both its passes (the first matches of every
// file, then the rest) before the next group starts. With one pass over
// every tier, rxjs 7.8.2's grep for switchMap spent 7,949 of its first
// page's 31,057 bytes on ten source maps' 512-byte windows, while the
// sources' matches past the per-file cap waited for the second page.
var tierGroups = [][2]int{{tierDeclaration, tierBundle}, {tierBundle, numTiers}}

// bundleBytes is the size above which a script is taken for a bundle:
// hand-written modules rarely pass 256 KiB (typescript's lib files aside,
// which are .d.ts), while webpack and esbuild outputs routinely do.
const bundleBytes = 256 << 10

// fileTier ranks one file by its path and size.
func fileTier(p string, size int64) int {
	base := strings.ToLower(path.Base(p))
	lower := strings.ToLower(p)
	switch {
	case strings.HasSuffix(base, ".d.ts"), strings.HasSuffix(base, ".d.mts"), strings.HasSuffix(base, ".d.cts"):
		return tierDeclaration
	case isGenerated(base, lower):
		return tierGenerated
	case isDoc(base):
		return tierDoc
	}
	ext := path.Ext(base)
	switch ext {
	case ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".vue", ".svelte":
	default:
		return tierOther
	}
	for _, m := range []string{".min.", "-min.", ".bundle.", ".umd.", ".prod.", ".production.", ".browser."} {
		if strings.Contains(base, m) {
			return tierBundle
		}
	}
	for _, m := range []string{"compiled/", "bundles/", "bundle/", "umd/", "chunks/", "vendor/", "vendored/"} {
		if strings.HasPrefix(lower, m) || strings.Contains(lower, "/"+m) {
			return tierBundle
		}
	}
	if size > bundleBytes {
		return tierBundle
	}
	return tierSource
}

func isDoc(base string) bool {
	switch path.Ext(base) {
	case ".md", ".markdown", ".txt", ".rst", ".html", ".adoc":
		return true
	}
	for _, p := range []string{"license", "licence", "readme", "changelog", "history", "notice", "authors", "copying"} {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}

// isGenerated reports whether a file is written by a tool for tools, told
// by its name (base) or path (lower) alone: a source map (whose
// sourcesContent repeats the sources' lines on one long line), a
// TypeScript build info, a lockfile, a test snapshot or a coverage
// report.
func isGenerated(base, lower string) bool {
	switch base {
	case "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lock":
		return true
	}
	for _, ext := range []string{".map", ".tsbuildinfo", ".snap"} {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	return strings.Contains("/"+lower, "/__snapshots__/") || strings.HasPrefix(lower, "coverage/") || strings.HasPrefix(lower, ".nyc_output/")
}
