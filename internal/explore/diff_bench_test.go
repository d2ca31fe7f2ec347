package explore_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/explore"
)

// BenchmarkDiffWarm times warm diffs of next 16.4.5 → 16.4.6 (every page,
// following next) as the API answers them: the name-only diff, which
// issue 27 wants at 100x npm diff's, and the full text diff, each as a
// pair's first diff (both versions stored and their listings read, but
// nothing of the pair held: ForgetDiffPairs before each) and as a later
// one. It reports the medians in ms; bench/diff/run.sh puts npm diff
// beside them.
//
//	PKGSCOPE_BENCH_TGZ=/tmp/tgz go test -run '^$' -bench DiffWarm -benchtime 10x ./internal/explore/
//
// PKGSCOPE_BENCH_TGZ is a directory holding next-16.4.5.tgz and
// next-16.4.6.tgz (npm pack); unset, the benchmark is skipped.
func BenchmarkDiffWarm(b *testing.B) {
	dir, reg, a, _ := benchMirror(b)
	for _, v := range []string{"16.4.5", "16.4.6"} {
		tgz, err := os.ReadFile(filepath.Join(dir, "next-"+v+".tgz"))
		if err != nil {
			b.Fatal(err)
		}
		reg.Publish("next", v, tgz)
	}
	walk := func(b *testing.B, r explore.Request) (pages int) {
		for {
			res, err := a.Service.Diff(b.Context(), r)
			if err != nil {
				b.Fatal(err)
			}
			pages++
			if res.Next == nil {
				return pages
			}
			r = *res.Next
		}
	}
	for _, c := range []struct {
		name            string
		nameOnly, first bool
	}{{"name-only-first", true, true}, {"name-only", true, false}, {"full-first", false, true}, {"full", false, false}} {
		r := explore.Request{Action: "diff", PackageName: "next", From: "16.4.5", To: "16.4.6", NameOnly: c.nameOnly}
		b.Run(c.name, func(b *testing.B) {
			walk(b, r) // fills both versions, warms the caches
			var ts []time.Duration
			pages := 0
			for range b.N {
				if c.first {
					explore.ForgetDiffPairs(a.Service)
				}
				t := time.Now()
				pages = walk(b, r)
				ts = append(ts, time.Since(t))
			}
			b.ReportMetric(ms(median(ts)), "ms")
			b.ReportMetric(float64(pages), "pages")
		})
	}
}
