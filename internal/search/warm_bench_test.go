package search

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/index"
)

// BenchmarkWarmGrep times one grep of a real package four ways, side by
// side in one run (medians of the iterations, in ms, and their ratios): file, the full index file mapped from the local cache;
// stored, its stored form held in memory with the text cache hot; cold,
// the first grep after the stored form is opened (every text it reaches
// read from the store, SQLite here, and checked); rg, ripgrep over the
// unpacked tarball, the anchor. It checks that the three index ways give
// the same matches.
//
//	PKGSCOPE_BENCH_TGZ=/work/tgz go test -run '^$' -bench WarmGrep ./internal/search/
//
// PKGSCOPE_BENCH_TGZ is a directory holding lucide-react-1.81.0.tgz and
// next-16.4.6.tgz (npm pack); unset, the benchmark is skipped.
func BenchmarkWarmGrep(b *testing.B) {
	dir := os.Getenv("PKGSCOPE_BENCH_TGZ")
	if dir == "" {
		b.Skip("PKGSCOPE_BENCH_TGZ names no directory of tarballs")
	}
	if _, err := exec.LookPath("rg"); err != nil {
		b.Fatal("the anchor needs rg (ripgrep)")
	}
	for _, c := range []struct {
		name, version string
		patterns      []string
	}{
		{"lucide-react", "1.81.0", []string{"ArrowLeft", "createLucideIcon"}},
		{"next", "16.4.6", []string{"useRouter", `function\s+\w+Sync`}},
	} {
		files, unpacked := readTarball(b, filepath.Join(dir, c.name+"-"+c.version+".tgz"))
		st := newStore(b)
		publish(b, st, c.name, c.version, files)
		local := benchSearcher(b, st, 0) // keeps the file it builds
		if _, err := local.Ensure(b.Context(), c.name, c.version); err != nil {
			b.Fatal(err)
		}
		fromStore := benchSearcher(b, st, 1) // keeps no file: serves the stored form
		for _, p := range c.patterns {
			q := index.Query{Pattern: p, MaxMatches: 100000}
			want := benchGrep(b, local, c.name, c.version, q, false)
			if got := benchGrep(b, fromStore, c.name, c.version, q, true); !slices.Equal(got, want) {
				b.Fatalf("%s %q: the stored form answered %d matches, the file %d", c.name, p, len(got), len(want))
			}
			// The four ways alternate within each iteration (file and
			// stored swap places each time), so a change of load on a
			// shared machine weighs on all of them alike. Each is timed
			// by the wall clock and by the CPU it spent (this process's,
			// rg's own): on a loaded machine the wall clock mostly
			// measures the wait for a core, the CPU what the grep costs.
			// The medians are reported, in ms.
			b.Run(c.name+"/"+p, func(b *testing.B) {
				var file, stored, cold, rg timings
				coldTimeouts := 0
				for i := range b.N {
					if i%2 == 0 {
						file.self(func() { benchGrep(b, local, c.name, c.version, q, false) })
						stored.self(func() { benchGrep(b, fromStore, c.name, c.version, q, true) })
					} else {
						stored.self(func() { benchGrep(b, fromStore, c.name, c.version, q, true) })
						file.self(func() { benchGrep(b, local, c.name, c.version, q, false) })
					}
					s := benchSearcher(b, st, 1)
					if _, err := s.Ensure(b.Context(), c.name, c.version); err != nil {
						b.Fatal(err)
					}
					cold.self(func() {
						// A cold grep reaching most of a large version's
						// text (next's Sync regexp) can pass the grep
						// timeout on a loaded machine: it then says so,
						// and is counted, not failed.
						res := benchSearch(b, s, c.name, c.version, q, true)
						if got := matchLines(res); res.TruncatedBy == index.TruncTimeout {
							coldTimeouts++
						} else if !slices.Equal(got, want) {
							b.Fatalf("cold: %d matches, want %d", len(got), len(want))
						}
					})
					s.Close()
					runtime.GC() // the cold open's garbage is not billed to the next grep
					cmd := exec.Command("rg", "-n", "-uu", "--", p, unpacked)
					cmd.Stdout = io.Discard
					t0 := time.Now()
					if err := cmd.Run(); err != nil {
						b.Fatal(err)
					}
					rg.add(time.Since(t0), cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
				}
				f, sf, cf, r := file.medians(), stored.medians(), cold.medians(), rg.medians()
				for _, m := range []struct {
					name string
					v    [2]float64
				}{{"file", f}, {"stored", sf}, {"cold", cf}, {"rg", r}} {
					b.ReportMetric(m.v[0], m.name+"-ms")
					b.ReportMetric(m.v[1], m.name+"-cpu-ms")
				}
				b.ReportMetric(sf[0]/f[0], "stored/file")
				b.ReportMetric(sf[1]/f[1], "stored/file-cpu")
				b.ReportMetric(f[0]/r[0], "file/rg")
				b.ReportMetric(sf[0]/r[0], "stored/rg")
				b.ReportMetric(cf[0]/r[0], "cold/rg")
				b.ReportMetric(float64(coldTimeouts), "cold-timeouts")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// timings are the wall and CPU times of a benchmark's runs.
type timings struct{ wall, cpu []time.Duration }

func (t *timings) add(wall, cpu time.Duration) {
	t.wall, t.cpu = append(t.wall, wall), append(t.cpu, cpu)
}

// self times f, with the CPU this process spent meanwhile.
func (t *timings) self(f func()) {
	c0, t0 := processCPU(), time.Now()
	f()
	t.add(time.Since(t0), processCPU()-c0)
}

// medians returns the median wall and CPU times in ms.
func (t *timings) medians() [2]float64 {
	med := func(d []time.Duration) float64 {
		d = slices.Clone(d)
		slices.Sort(d)
		return float64(d[len(d)/2]) / 1e6
	}
	return [2]float64{med(t.wall), med(t.cpu)}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchSearcher(b *testing.B, st Store, cacheBytes int64) *Searcher {
	b.Helper()
	opt := DefaultOptions(b.TempDir())
	opt.ScanFirst, opt.CacheBytes = false, cacheBytes
	s, err := New(st, opt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// benchGrep greps and returns the matches, checking where the index was
// served from.
func benchGrep(b *testing.B, s *Searcher, name, version string, q index.Query, fromStore bool) []string {
	return matchLines(benchSearch(b, s, name, version, q, fromStore))
}

func benchSearch(b *testing.B, s *Searcher, name, version string, q index.Query, fromStore bool) index.Result {
	e, err := s.acquire(b.Context(), name, version)
	if err != nil {
		b.Fatal(err)
	}
	defer s.release(e)
	if e.fromStore != fromStore {
		b.Fatalf("%s@%s served from the stored form: %v, want %v", name, version, e.fromStore, fromStore)
	}
	res, err := e.ix.Search(b.Context(), q, s.opt.Search)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

func matchLines(res index.Result) []string {
	out := make([]string, len(res.Matches))
	for i, m := range res.Matches {
		out[i] = m.File + ":" + m.Text
	}
	return out
}

// readTarball returns the regular files of an npm tarball (paths without
// the leading package/) and the directory it unpacked them to.
func readTarball(b testing.TB, path string) (map[string]string, string) {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	files := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			b.Fatal(err)
		}
		p := h.Name[strings.Index(h.Name, "/")+1:]
		files[p] = string(data)
		out := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(out, data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return files, dir
}
