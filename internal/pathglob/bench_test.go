package pathglob

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// cpuSeconds is the process's user and system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// packagePaths returns n paths shaped like a large package's
// (lucide-react, @mui/icons-material): a few directories deep, names of
// 10-40 bytes.
func packagePaths(n int) []string {
	dirs := []string{"dist/esm/icons/", "dist/cjs/icons/", "src/components/very/deeply/nested/", "lib/", "types/"}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%sicon-%s-%d.%s", dirs[i%len(dirs)], strings.Repeat("ab", i%16), i, []string{"js", "d.ts", "mjs", "js.map"}[i%4])
	}
	return out
}

// hostileRequests are the most expensive requests the default limits
// accept that we know of: issue 11's bomb eight times, and ways to spend
// the MaxWildcards budget (64) that keep the most matcher positions alive
// or make the most automaton states.
func hostileRequests() map[string][]string {
	n := func(k int, f func(i int) string) []string {
		ps := make([]string, k)
		for i := range ps {
			ps[i] = f(i)
		}
		return ps
	}
	bomb := strings.Repeat("{*,*}", 8) + strings.Repeat("*", 400)
	return map[string][]string{
		"issue 11 bomb x8":      n(8, func(i int) string { return bomb }),
		"bomb variants x64":     n(64, func(i int) string { return bomb + fmt.Sprint(i) }),
		"stars between letters": {strings.Repeat("*i*c*o*n*-*a*b", 8) + "*"},
		"doublestar segments":   n(2, func(i int) string { return strings.Repeat("**/*a*/", 10) + fmt.Sprint(i) }),
		"distinct wildcard prefixes": n(32, func(i int) string {
			return strings.Repeat("?", i%2) + "*" + fmt.Sprint(i)
		}),
		"state explosion": {"**/" + strings.Repeat("*[a-i]"+strings.Repeat("?", 6), 7) + "*"},
		"state explosion x7": n(7, func(i int) string {
			return "**/*[a-i]" + strings.Repeat("?", 5) + "*" + fmt.Sprint(i%10)
		}),
		"classes and doublestars": n(3, func(i int) string {
			return strings.Repeat("**/[a-z0-9.-]*/", 7) + fmt.Sprint(i)
		}),
	}
}

// BenchmarkHostileGlob runs each hostile request over a 20,000-file
// package, compiling included: the figure of docs/RELIABILITY.md (issue 11
// §2). "benign" is the anchor: one everyday pattern. "doublestar 1k" is
// the matcher before, on the first 1,000 paths only (issue 11's bomb).
//
//	go test -run XXX -bench HostileGlob -benchtime 5x ./internal/pathglob/
func BenchmarkHostileGlob(b *testing.B) {
	paths := packagePaths(20_000)
	reqs := hostileRequests()
	reqs["benign"] = []string{"dist/**/*.d.ts"}
	for name, ps := range reqs {
		b.Run(name, func(b *testing.B) {
			cpu0 := cpuSeconds()
			for b.Loop() {
				m, err := Compile(ps, DefaultLimits())
				if err != nil {
					b.Fatalf("refused: %v", err)
				}
				if _, err := Select(context.Background(), m, paths, func(s string) string { return s }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
		})
	}
	b.Run("doublestar 1k", func(b *testing.B) {
		cpu0 := cpuSeconds()
		for b.Loop() {
			for _, p := range paths[:1000] {
				for _, g := range reqs["issue 11 bomb x8"] {
					doublestar.Match(g, p)
				}
			}
		}
		b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
	})
}
