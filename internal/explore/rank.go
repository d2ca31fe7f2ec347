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
	tierSourceMap          // .map
	tierDoc                // README, CHANGELOG, LICENSE, .md, .txt
	numTiers
)

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
	case strings.HasSuffix(base, ".map"):
		return tierSourceMap
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
