// Command chunks measures how much text really changes between
// consecutive versions of a package when each text file is cut into
// content-defined, line-aligned chunks: the bound on what any index that
// shares text below the file between versions could save (issue 15).
//
//	go run ./bench/storage/chunks [-avg 2048,4096,8192] A.tgz B.tgz ...
//
// Tarballs are read in the order given (oldest first), e.g. from
// `npm pack PACKAGE@VERSION`. A chunk ends after a newline once a gear
// hash of the bytes before it has hit (probability 1/avg per byte, at
// least avg/4 bytes in), so an edit moves only the cuts near it; a line
// longer than 2*avg is cut inside at gear points (as the index cuts long
// lines into blocks). For each version it prints its text bytes and the
// bytes of chunks no earlier version had; then the distinct chunk text
// over all versions, raw and zstd-compressed chunk by chunk, as a
// multiple of the last version's text.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
)

func main() {
	avgs := flag.String("avg", "2048,4096,8192", "average chunk sizes to try, comma-separated powers of two")
	flag.Parse()
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: chunks [-avg 2048,4096,8192] OLDEST.tgz ... NEWEST.tgz")
		os.Exit(2)
	}
	versions := make([][][]byte, flag.NArg()) // text files per version
	for i, p := range flag.Args() {
		var err error
		if versions[i], err = textFiles(p); err != nil {
			fmt.Fprintln(os.Stderr, "chunks:", err)
			os.Exit(1)
		}
	}
	enc, _ := zstd.NewWriter(nil)
	for _, a := range strings.Split(*avgs, ",") {
		avg, err := strconv.Atoi(a)
		if err != nil || avg < 64 || avg&(avg-1) != 0 {
			fmt.Fprintf(os.Stderr, "chunks: -avg %q: want powers of two of at least 64\n", a)
			os.Exit(2)
		}
		seen := map[[32]byte]bool{}
		var distinct, compressed, last int64
		fmt.Printf("average chunk %d bytes\n", avg)
		for i, files := range versions {
			var total, fresh int64
			for _, f := range files {
				total += int64(len(f))
				for _, c := range chunk(f, avg) {
					h := sha256.Sum256(c)
					if seen[h] {
						continue
					}
					seen[h] = true
					fresh += int64(len(c))
					compressed += int64(len(enc.EncodeAll(c, nil)))
				}
			}
			distinct += fresh
			last = total
			fmt.Printf("  %-40s text %6.1f MB, in no earlier version %6.1f MB\n", flag.Arg(i), mb(total), mb(fresh))
		}
		fmt.Printf("  distinct chunk text over %d versions: %.1f MB = %.2fx the last version's text; zstd per chunk %.1f MB = %.2fx\n",
			len(versions), mb(distinct), float64(distinct)/float64(last), mb(compressed), float64(compressed)/float64(last))
	}
}

func mb(n int64) float64 { return float64(n) / 1e6 }

// textFiles returns the distinct text bodies of a tarball (binary ones,
// with a NUL in the first 8000 bytes, are not searched).
func textFiles(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tr := tar.NewReader(gz)
	seen := map[[32]byte]bool{}
	var out [][]byte
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			continue
		}
		if sum := sha256.Sum256(data); !seen[sum] {
			seen[sum] = true
			out = append(out, data)
		}
	}
}

var gear = func() (g [256]uint64) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range g {
		g[i] = r.Uint64()
	}
	return g
}()

// chunk cuts text into content-defined chunks of about avg bytes that end
// at a newline, except inside lines longer than 2*avg.
func chunk(text []byte, avg int) [][]byte {
	mask := uint64(avg - 1)
	var out [][]byte
	start, pending := 0, false
	var h uint64
	for i, c := range text {
		h = h<<1 + gear[c]
		n := i + 1 - start
		if n >= avg/4 && h&mask == 0 {
			pending = true
		}
		if (c == '\n' && pending) || (n >= 2*avg && h&(mask>>2) == 0) {
			out = append(out, text[start:i+1])
			start, pending = i+1, false
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
