package explore_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/explore"
)

// BenchmarkDiffWarm times warm diffs of next 16.4.5 → 16.4.6 (every page,
// following next) as the API answers them: the name-only diff, which
// issue 27 wants at 100x npm diff's, and the full text diff, each as a
// pair's first diff (both versions stored and their listings read, but
// nothing of the pair held: ForgetDiffPairs before each) and as a later
// one; the full diff in pages of 1 MiB too, and one page deep in it
// alone. It reports the medians in ms; bench/diff/run.sh puts npm diff
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
	// full-1mib pages at max-answer-bytes, as the REST text route does:
	// 65 pages, the nearest to the whole diff at once.
	for _, c := range []struct {
		name            string
		nameOnly, first bool
		maxBytes        int
	}{{"name-only-first", true, true, 0}, {"name-only", true, false, 0}, {"full-first", false, true, 0}, {"full", false, false, 0}, {"full-1mib", false, false, 1 << 20}} {
		r := explore.Request{Action: "diff", PackageName: "next", From: "16.4.5", To: "16.4.6", NameOnly: c.nameOnly, MaxBytes: c.maxBytes}
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
	// full-page times one page deep in the full diff alone, as an agent
	// that kept a next request pays for it: page 1,000 of about 2,000
	// (PKGSCOPE_BENCH_DIFF_PAGE picks another).
	// The walk to the page is made once, on the first call (the testing
	// package calls a benchmark with b.N = 1 before the -benchtime run).
	var deepReq *explore.Request
	b.Run("full-page", func(b *testing.B) {
		if deepReq == nil {
			deep := 1000
			if v := os.Getenv("PKGSCOPE_BENCH_DIFF_PAGE"); v != "" {
				var err error
				if deep, err = strconv.Atoi(v); err != nil {
					b.Fatal(err)
				}
			}
			r := explore.Request{Action: "diff", PackageName: "next", From: "16.4.5", To: "16.4.6"}
			for page := 1; page < deep; page++ {
				res, err := a.Service.Diff(b.Context(), r)
				if err != nil {
					b.Fatal(err)
				}
				if res.Next == nil {
					b.Fatalf("the diff has %d pages, fewer than %d", page, deep)
				}
				r = *res.Next
			}
			deepReq = &r
		}
		r := *deepReq
		var ts []time.Duration
		for range b.N {
			t := time.Now()
			if _, err := a.Service.Diff(b.Context(), r); err != nil {
				b.Fatal(err)
			}
			ts = append(ts, time.Since(t))
		}
		b.ReportMetric(ms(median(ts)), "ms")
	})
}
