package explore

import (
	"strings"
	"testing"
)

// FuzzStringCost holds StringCost's table of ASCII costs to runeCost,
// byte by byte.
func FuzzStringCost(f *testing.F) {
	for _, s := range []string{"", "plain", "a<b>&c\"d\\e\n\t\x01\b\f\x7f", "ünï\u2028\u2029\xff\xe2\x80", strings.Repeat("é€x", 9)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := 2
		for i := 0; i < len(s); {
			c, size := runeCost(s, i)
			want += c
			i += size
		}
		if got := StringCost(s); got != want {
			t.Errorf("StringCost(%q) = %d, by runeCost %d", s, got, want)
		}
	})
}

// BenchmarkStringCost weighs a page of source code, as read does line by
// line.
func BenchmarkStringCost(b *testing.B) {
	line := "export function useRouter<T extends Record<string, unknown>>(options?: RouterOptions<T>): Router<T> { return ctx && ctx.router; } // é\n"
	page := strings.Repeat(line, 200)
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		StringCost(page)
	}
}
