// Command ahead measures what asking for a cold version's tarball with its
// manifest (upstream.Config.MaxAheadTarballs) saves on the registry's side
// of a fill: the time from asking for the version's entry to the last
// byte of its tarball verified, with a fresh client and connection each
// time (a cold mirror's first request), the sequential path and the guess
// alternating. It prints, per package, the median of each and their ratio.
// It talks to the registry in npm's config, as the mirror does.
//
//	go run ./bench/ahead [-runs 6] [name@version ...]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

func main() {
	runs := flag.Int("runs", 6, "measurements of each path per package")
	flag.Parse()
	specs := flag.Args()
	if len(specs) == 0 {
		specs = []string{"lucide-react@1.81.0", "next@16.4.6"}
	}
	wd, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	npm, err := npmrc.Load(wd, os.Getenv)
	if err != nil {
		fail(err)
	}
	for _, spec := range specs {
		i := strings.LastIndexByte(spec, '@')
		if i <= 0 {
			fail(fmt.Errorf("%q is not name@version", spec))
		}
		name, version := spec[:i], spec[i+1:]
		var seq, ahead []time.Duration
		for range *runs {
			seq = append(seq, fetch(npm, name, version, 0))
			ahead = append(ahead, fetch(npm, name, version, 16))
		}
		s, a := median(seq), median(ahead)
		fmt.Printf("%s: asked at once %.2fx of sequential (medians of %d: %v / %v)\n",
			spec, float64(a)/float64(s), *runs, a.Round(time.Millisecond), s.Round(time.Millisecond))
	}
}

// fetch times one cold entry-and-tarball with a fresh client and connection.
func fetch(npm *npmrc.Config, name, version string, ahead int) time.Duration {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	c := upstream.New(npm, upstream.Config{MaxAheadTarballs: ahead}, &http.Client{Transport: tr})
	defer c.Close()
	ctx := context.Background()
	start := time.Now()
	v, err := c.Version(ctx, name, version)
	if err != nil {
		fail(err)
	}
	d, err := c.Tarball(ctx, name, v)
	if err != nil {
		fail(err)
	}
	defer d.Close()
	if _, err := io.Copy(io.Discard, d); err != nil {
		fail(err)
	}
	if err := d.Verify(); err != nil {
		fail(err)
	}
	return time.Since(start)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ahead:", err)
	os.Exit(1)
}
