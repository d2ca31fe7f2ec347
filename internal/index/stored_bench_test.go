package index

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkSearchStoredVsFile times Search on an index opened from its
// file (Open, mapped) next to the same index opened from its stored form
// (OpenStored over the bodies already decompressed in a map): what serving
// the stored form costs a search beyond the file, before any cache or
// decompression. PKGSCOPE_BENCH_TARBALL names a real .tgz (docs/BENCHMARKS.md
// uses lucide-react@1.81.0); without it a generated 2,000-file package is
// used.
func BenchmarkSearchStoredVsFile(b *testing.B) {
	docs := benchDocs(b)
	path := filepath.Join(b.TempDir(), "x.idx")
	if _, err := BuildFile(path, docs, DefaultBuildLimits()); err != nil {
		b.Fatal(err)
	}
	file, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer file.Close()
	full, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	stored, err := OpenStored(storedOf(b, full), newMapSource(docs))
	if err != nil {
		b.Fatal(err)
	}
	defer stored.Close()
	lim := DefaultSearchLimits()
	for _, q := range []struct{ name, pattern string }{
		{"literal", "ArrowLeft"},
		{"regexp", `name: "arrow-[a-z-]*left"`},
	} {
		query := Query{Pattern: q.pattern, MaxMatches: lim.MaxMatches}
		want, err := file.Search(context.Background(), query, lim)
		if err != nil {
			b.Fatal(err)
		}
		for _, ix := range []struct {
			name string
			ix   *Index
		}{{"file", file}, {"stored", stored}} {
			b.Run(q.name+"/"+ix.name, func(b *testing.B) {
				for b.Loop() {
					res, err := ix.ix.Search(context.Background(), query, lim)
					if err != nil || len(res.Matches) != len(want.Matches) {
						b.Fatalf("%d matches (%v), want %d", len(res.Matches), err, len(want.Matches))
					}
				}
				b.ReportMetric(float64(len(want.Matches)), "matches")
			})
		}
	}
}

// benchDocs reads the files of the tarball PKGSCOPE_BENCH_TARBALL names,
// or generates a package of lucide-react's shape: many small icon modules
// and a few large bundles.
func benchDocs(b *testing.B) []Doc {
	p := os.Getenv("PKGSCOPE_BENCH_TARBALL")
	if p == "" {
		var docs []Doc
		var bundle strings.Builder
		for i := range 2000 {
			name := fmt.Sprintf("icon-%d", i)
			if i%97 == 0 {
				name = fmt.Sprintf("arrow-%c-left", 'a'+i%26)
			}
			icon := fmt.Sprintf("const __iconData = { name: %q, node: [[\"path\", { d: \"M%d 0h%d\" }]] };\nconst Icon%d = createLucideIcon(__iconData);\nexport { Icon%d as default };\n",
				name, i, i*3, i, i)
			docs = append(docs, Doc{Path: fmt.Sprintf("dist/esm/icons/icon-%d.js", i), Data: []byte(icon)})
			bundle.WriteString(strings.ReplaceAll(icon, "\n", " "))
			if i%97 == 0 {
				bundle.WriteString("/* ArrowLeft */ ")
			}
		}
		return append(docs, Doc{Path: "dist/umd/lucide.min.js", Data: []byte(bundle.String())})
	}
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	var docs []Doc
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return docs
		}
		if err != nil {
			b.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		var buf bytes.Buffer
		if _, err := io.Copy(&buf, tr); err != nil {
			b.Fatal(err)
		}
		docs = append(docs, Doc{Path: h.Name, Data: buf.Bytes()})
	}
}
