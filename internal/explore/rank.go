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
	case isDoc(base), isTranslation(base, lower):
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

// isTranslation reports whether a file is a translated copy of data a
// source holds in one language: a message catalog (.json, .po, .xlf,
// ...) under a language folder ("lib/cs/", "pt-br/") or a locales folder.
// They rank with the docs, after the sources and bundles that hold the
// original: typescript 5.9's grep for TS2307's message listed 13
// translated lib/*/diagnosticMessages.generated.json before the English
// lib/typescript.js. Scripts under such folders (date-fns' locale/af/*.js)
// are sources in their own right and keep their tier.
func isTranslation(base, lower string) bool {
	switch path.Ext(base) {
	case ".json", ".po", ".pot", ".mo", ".xlf", ".xliff", ".resx", ".strings", ".properties", ".ftl", ".arb":
	default:
		return false
	}
	dirs := strings.Split(path.Dir(lower), "/")
	for _, d := range dirs {
		switch d {
		case "locale", "locales", "i18n", "l10n", "lang", "langs", "translations":
			return true
		}
		lang, region, _ := strings.Cut(strings.ReplaceAll(d, "_", "-"), "-")
		if len(lang) == 2 && strings.Contains(languages, " "+lang+" ") && (region == "" || len(region) >= 2 && len(region) <= 4) {
			return true
		}
	}
	return false
}

// languages are the ISO 639-1 codes, space-separated.
const languages = " aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu "
