// Command indexmem measures what building one version's search index
// costs the mirror: peak RSS and the index size. It ingests a tarball into
// a fresh embedded store in one process, then builds the index from the
// store in a second one (as the mirror does after a cold fill) and prints
// that process's peak RSS (VmHWM) and the index size.
//
// With -grep it times the first grep of the version twice: in the ingest's
// process, as the mirror answers it — once the tarball is read and every
// body spooled, from a scan index of the spool while the store writes the
// bodies and commits (-spool=false: after the commit, reading the bodies
// back from the store) —, and in the second process, from the store (see
// search.Options.ScanFirst).
//
// Each phase prints its wall and CPU time (user + system), a measure the
// machine's load moves less than wall time; -cpuprofile writes a profile
// of each.
//
//	indexmem -tgz FILE [-work DIR] [-grep PATTERN] [-cpuprofile PREFIX]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/search"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "indexmem:", err)
		os.Exit(1)
	}
}

func run() error {
	tgz := flag.String("tgz", "", "npm tarball to ingest and index")
	work := flag.String("work", "", "directory for the store and index cache (default: a temp dir, removed)")
	phase := flag.String("phase", "", "internal: ingest or build")
	pattern := flag.String("grep", "", "time a first grep of this pattern before the full build")
	spool := flag.Bool("spool", true, "spool the bodies during ingest for the first grep's scan index (search.Options.SpoolBytes)")
	cpuprofile := flag.String("cpuprofile", "", "write CPU profiles of the ingest and the first grep to PREFIX.ingest and PREFIX.grep")
	flag.Parse()
	ctx := context.Background()
	switch *phase {
	case "ingest":
		data, err := os.ReadFile(*tgz)
		if err != nil {
			return err
		}
		st, err := sqlite.Open(ctx, *work, sqlite.Options{})
		if err != nil {
			return err
		}
		defer st.Close()
		// As the mirror does: the bodies go through the searcher's spool
		// on their way to the store.
		opt := search.DefaultOptions(filepath.Join(*work, "indexes-ingest"))
		if !*spool {
			opt.SpoolBytes = 0
		}
		s, err := search.New(st, opt)
		if err != nil {
			return err
		}
		defer s.Close()
		stop, err := profile(*cpuprofile, "ingest")
		if err != nil {
			return err
		}
		start, cpu0 := time.Now(), cpuTime()
		w, done := s.Spool(st, "pkg", "1.0.0")
		ingested := make(chan struct{})
		go func() {
			defer close(ingested)
			_, err = ingest.Ingest(ctx, w, "pkg", "1.0.0", "sha512-unchecked", data, ingest.DefaultLimits())
			done()
		}()
		if *pattern != "" && *spool {
			// The mirror's first grep of a cold version: once the ingest
			// has offered it (read whole, every body spooled), from a
			// scan index of the spool, while the store writes and commits.
			if _, ok := s.Verified(ctx, "pkg", "1.0.0", ingested); !ok {
				<-ingested
				return fmt.Errorf("the version was not offered before its commit: %v", err)
			}
			fmt.Printf("read and spooled %.2fs, %.2fs CPU\n", time.Since(start).Seconds(), (cpuTime() - cpu0).Seconds())
			start1, cpu1 := time.Now(), cpuTime()
			res, serr := s.Search(ctx, "pkg", "1.0.0", index.Query{Pattern: *pattern})
			if serr != nil {
				return serr
			}
			fmt.Printf("first grep from the verified spool %.2fs, %.2fs CPU (%d lines); from the ingest's start %.2fs, %.2fs CPU\n",
				time.Since(start1).Seconds(), (cpuTime() - cpu1).Seconds(), len(res.Matches),
				time.Since(start).Seconds(), (cpuTime() - cpu0).Seconds())
		}
		<-ingested
		stop()
		if err != nil {
			return err
		}
		fmt.Printf("ingest and commit %.2fs, %.2fs CPU\n", time.Since(start).Seconds(), (cpuTime() - cpu0).Seconds())
		if *pattern == "" || *spool {
			return nil
		}
		// -spool=false: the first grep in the process that ingested,
		// after the commit, from a scan index of the bodies read back
		// from the store. Closing the searcher then cancels the full
		// build it started, which the build phase does again.
		stop, err = profile(*cpuprofile, "firstgrep")
		if err != nil {
			return err
		}
		start, cpu0 = time.Now(), cpuTime()
		res, err := s.Search(ctx, "pkg", "1.0.0", index.Query{Pattern: *pattern})
		stop()
		if err != nil {
			return err
		}
		fmt.Printf("first grep after ingest %.2fs, %.2fs CPU (%d lines, spooled bodies: %v)\n", time.Since(start).Seconds(),
			(cpuTime() - cpu0).Seconds(), len(res.Matches), *spool)
		return nil
	case "build":
		st, err := sqlite.Open(ctx, *work, sqlite.Options{})
		if err != nil {
			return err
		}
		defer st.Close()
		s, err := search.New(st, search.DefaultOptions(filepath.Join(*work, "indexes")))
		if err != nil {
			return err
		}
		defer s.Close()
		start, cpu0 := time.Now(), cpuTime()
		if *pattern != "" {
			stop, err := profile(*cpuprofile, "grep")
			if err != nil {
				return err
			}
			// The first grep of a version without an index: a scan index
			// answers it while the full build goes on behind.
			res, err := s.Search(ctx, "pkg", "1.0.0", index.Query{Pattern: *pattern})
			stop()
			if err != nil {
				return err
			}
			// The CPU figure includes the full build's start behind it.
			fmt.Printf("first grep in a new process %.2fs, %.2fs CPU (%d lines, from a scan index of the store)\n", time.Since(start).Seconds(),
				(cpuTime() - cpu0).Seconds(), len(res.Matches))
			start = time.Now()
		}
		stats, err := s.Ensure(ctx, "pkg", "1.0.0")
		if err != nil {
			return err
		}
		fmt.Printf("build %.1fs, peak RSS %s, index %.1f MB, %d files, %.1f MB text\n", time.Since(start).Seconds(),
			peakRSS(), float64(stats.IndexBytes)/1e6, stats.Files, float64(stats.TextBytes)/1e6)
		return nil
	case "":
	default:
		return fmt.Errorf("unknown -phase %q", *phase)
	}
	if *tgz == "" {
		return errors.New("usage: indexmem -tgz FILE [-work DIR]")
	}
	if *work == "" {
		dir, err := os.MkdirTemp("", "indexmem-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*work = dir
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, ph := range []string{"ingest", "build"} {
		cmd := exec.Command(self, "-phase", ph, "-tgz", *tgz, "-work", *work, "-grep", *pattern, "-cpuprofile", *cpuprofile,
			fmt.Sprintf("-spool=%v", *spool))
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w", ph, err)
		}
	}
	return nil
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// profile starts a CPU profile written to prefix.phase when prefix is set;
// the returned function stops it.
func profile(prefix, phase string) (func(), error) {
	if prefix == "" {
		return func() {}, nil
	}
	f, err := os.Create(prefix + "." + phase)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// peakRSS returns this process's VmHWM from /proc.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
