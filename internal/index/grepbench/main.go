// Command grepbench measures the grep engine against ripgrep on one
// unpacked package: it builds the index of a directory, then for each
// pattern times Search (index already open, as on a warm serving node) and
// `rg -n -uu` over the same directory, checks that both report the same
// matching lines, and prints the ratio. bench/grep/run.sh drives it.
//
//	grepbench -dir DIR [-runs 7] [-rg=true] [-i] [-w] [-F] PATTERN...
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pkgscope/pkgscope/internal/index"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "grepbench:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", "", "unpacked package directory")
	runs := flag.Int("runs", 7, "timed runs per pattern (the median is printed)")
	useRg := flag.Bool("rg", true, "time ripgrep and compare its lines")
	ci := flag.Bool("i", false, "case-insensitive")
	ww := flag.Bool("w", false, "whole word")
	fixed := flag.Bool("F", false, "fixed strings")
	blockSize := flag.Int("block", index.DefaultBuildLimits().BlockSize, "BuildLimits.BlockSize")
	keep := flag.String("o", "", "write the index here (default: a temp file, removed)")
	name := flag.String("name", "", "package name to print (default: the directory name)")
	reuse := flag.Bool("reuse", false, "search the existing index at -o instead of building one")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed searches")
	memprofile := flag.String("memprofile", "", "write an allocation profile at exit")
	storm := flag.Int("storm", 0, "after timing, run this many concurrent searchers (20 searches each) and report peak memory")
	flag.Parse()
	if *memprofile != "" {
		runtime.MemProfileRate = 4096
		defer func() {
			if f, err := os.Create(*memprofile); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	if *dir == "" || flag.NArg() == 0 {
		return errors.New("usage: grepbench -dir DIR PATTERN...")
	}

	if *reuse {
		if err := searchAll(*dir, *keep, *runs, *useRg, *ci, *ww, *fixed, *cpuprofile); err != nil {
			return err
		}
		return runStorm(*keep, *storm)
	}
	var docs []index.Doc
	var srcBytes int64
	err := filepath.WalkDir(*dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(*dir, p)
		docs = append(docs, index.Doc{Path: filepath.ToSlash(rel), Data: b})
		srcBytes += int64(len(b))
		return nil
	})
	if err != nil {
		return err
	}
	out := *keep
	if out == "" {
		f, err := os.CreateTemp("", "grepbench-*.idx")
		if err != nil {
			return err
		}
		f.Close()
		out = f.Name()
		defer os.Remove(out)
	}
	lim := index.DefaultBuildLimits()
	lim.BlockSize = *blockSize
	runtime.GC()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	t0 := time.Now()
	st, err := index.BuildFile(out, docs, lim)
	if err != nil {
		return err
	}
	buildTime := time.Since(t0)
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	docs = nil
	mb := float64(srcBytes) / (1 << 20)
	if *name == "" {
		*name = filepath.Base(*dir)
	}
	fmt.Printf("package %s: %d files (%d text, %d binary), %.1f MB\n", *name, st.Files, st.TextFiles, st.BinaryFiles, mb)
	fmt.Printf("  index %.1f MB (%.2fx source, text included; postings+tables %.1f MB = %.2fx), %d blocks, %d trigrams\n",
		float64(st.IndexBytes)/(1<<20), float64(st.IndexBytes)/float64(srcBytes),
		float64(st.IndexBytes-st.TextBytes)/(1<<20), float64(st.IndexBytes-st.TextBytes)/float64(srcBytes), st.Blocks, st.Trigrams)
	fmt.Printf("  build %v (%.1f ms/MB, %.0f MB allocated), coverage %.4f%% of %d text bytes, not indexed: %d files\n",
		buildTime.Round(time.Millisecond), float64(buildTime.Milliseconds())/mb, float64(ms1.TotalAlloc-ms0.TotalAlloc)/(1<<20),
		100*st.Coverage, st.TextBytes, len(st.NotIndexed))

	if err := searchAll(*dir, out, *runs, *useRg, *ci, *ww, *fixed, *cpuprofile); err != nil {
		return err
	}
	return runStorm(out, *storm)
}

// runStorm runs n goroutines that each search every pattern 20 times,
// with the default limits, and reports the peak Go heap and the peak
// resident set (which also counts the mapped index pages, shared with the
// page cache).
func runStorm(path string, n int) error {
	if n <= 0 {
		return nil
	}
	ix, err := index.Open(path)
	if err != nil {
		return err
	}
	defer ix.Close()
	runtime.GC()
	var peak, peakAnon uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
				peakAnon = max(peakAnon, rssAnon())
			}
		}
	}()
	patterns := append(flag.Args(), `\w+Sync\(`, `ArrowLeft|ArrowRight`)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := time.Now()
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				q := index.Query{Pattern: patterns[(g+i)%len(patterns)], MaxMatches: 1000}
				if _, err := ix.Search(context.Background(), q, index.DefaultSearchLimits()); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	close(errs)
	for err := range errs {
		return err
	}
	fmt.Printf("  storm: %d searchers x 20 searches in %v; peak Go heap in use %.1f MB, peak anonymous RSS %.1f MB (the mapped index is page cache, not counted)\n",
		n, time.Since(start).Round(time.Millisecond), float64(peak)/(1<<20), float64(peakAnon)/(1<<20))
	return nil
}

// rssAnon returns the process's anonymous resident memory in bytes (0 if
// /proc is not there).
func rssAnon() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, ln := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(ln, "RssAnon:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func searchAll(dir, out string, runs int, useRg, ci, ww, fixed bool, cpuprofile string) error {
	t0 := time.Now()
	ix, err := index.Open(out)
	if err != nil {
		return err
	}
	defer ix.Close()
	fmt.Printf("  open (mmap, checksum, table checks) %v\n", time.Since(t0).Round(100*time.Microsecond))
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	slim := index.DefaultSearchLimits()
	slim.MaxOutputBytes = 1 << 30
	for _, pat := range flag.Args() {
		q := index.Query{Pattern: pat, CaseInsensitive: ci, WholeWord: ww, FixedStrings: fixed, MaxMatches: slim.MaxMatches}
		var times []time.Duration
		var res index.Result
		for i := 0; i < runs; i++ {
			t := time.Now()
			res, err = ix.Search(context.Background(), q, slim)
			times = append(times, time.Since(t))
			if err != nil {
				return fmt.Errorf("search %q: %w", pat, err)
			}
		}
		ours := median(times)
		fmt.Printf("  %-28q index %8.3f ms  %5d lines  truncated=%v", pat, float64(ours.Microseconds())/1000, len(res.Matches), res.Truncated)
		if !useRg {
			fmt.Println()
			continue
		}
		args := []string{"-n", "-uu", "--null", "--no-messages"}
		if ci {
			args = append(args, "-i")
		}
		if ww {
			args = append(args, "-w")
		}
		if fixed {
			args = append(args, "-F")
		}
		args = append(args, "--", pat, ".")
		var rgTimes []time.Duration
		var rgOut []byte
		for i := 0; i < runs; i++ {
			cmd := exec.Command("rg", args...)
			cmd.Dir = dir
			t := time.Now()
			rgOut, err = cmd.Output()
			rgTimes = append(rgTimes, time.Since(t))
			if err != nil && !(isExit1(err) && len(rgOut) == 0) {
				return fmt.Errorf("rg %q: %w", pat, err)
			}
		}
		rgT := median(rgTimes)
		fmt.Printf("  rg %8.3f ms  ratio %6.1fx", float64(rgT.Microseconds())/1000, float64(rgT)/float64(ours))
		fmt.Println(compare(res, rgOut))
	}
	return nil
}

func isExit1(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == 1
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// compare reports whether the index and rg found the same (file, line)
// pairs, listing a few differences when not.
func compare(res index.Result, rgOut []byte) string {
	ours := map[string]bool{}
	for _, m := range res.Matches {
		ours[m.File+":"+strconv.Itoa(m.Line)] = true
	}
	theirs := map[string]bool{}
	for _, ln := range bytes.Split(rgOut, []byte("\n")) {
		path, rest, ok := bytes.Cut(ln, []byte{0})
		if !ok {
			continue
		}
		num, _, _ := bytes.Cut(rest, []byte(":"))
		theirs[strings.TrimPrefix(string(path), "./")+":"+string(num)] = true
	}
	var onlyOurs, onlyRg []string
	for k := range ours {
		if !theirs[k] {
			onlyOurs = append(onlyOurs, k)
		}
	}
	for k := range theirs {
		if !ours[k] {
			onlyRg = append(onlyRg, k)
		}
	}
	if len(onlyOurs) == 0 && len(onlyRg) == 0 {
		return "  same lines as rg"
	}
	slices.Sort(onlyOurs)
	slices.Sort(onlyRg)
	return fmt.Sprintf("  DIFFERS: %d only in index %v, %d only in rg %v", len(onlyOurs), head(onlyOurs), len(onlyRg), head(onlyRg))
}

func head(s []string) []string {
	if len(s) > 3 {
		return s[:3]
	}
	return s
}
