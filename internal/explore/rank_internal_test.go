package explore

import "testing"

// TestTranslationsRankAfterTheirSources: message catalogs under a
// language or locales folder rank with the docs, after the bundle that
// holds the original text; scripts under such folders, and folders that
// only look like a language code, keep their tier.
func TestTranslationsRankAfterTheirSources(t *testing.T) {
	for _, c := range []struct {
		path string
		size int64
		want int
	}{
		{"lib/cs/diagnosticMessages.generated.json", 400_000, tierDoc},
		{"lib/pt-br/diagnosticMessages.generated.json", 400_000, tierDoc},
		{"lib/zh-tw/diagnosticMessages.generated.json", 400_000, tierDoc},
		{"locales/fr.json", 2_000, tierDoc},
		{"i18n/messages.po", 2_000, tierDoc},
		{"lib/typescript.js", 9_000_000, tierBundle},
		{"locale/af/_lib/localize.js", 2_000, tierSource},
		{"package.json", 900, tierOther},
		{"lib/js/schema.json", 900, tierOther},
		{"lib/fs/index.json", 900, tierOther},
	} {
		if got := fileTier(c.path, c.size); got != c.want {
			t.Errorf("fileTier(%s) = %d, want %d", c.path, got, c.want)
		}
	}
}
