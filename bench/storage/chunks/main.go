// Command chunks measures how much text really changes between
// consecutive versions of a package when each text file is cut into
// content-defined, line-aligned chunks: the bound on what any index that
// shares text below the file between versions could save (issue 15).
//
//	go run ./bench/storage/chunks [-avg 2048,4096,8192] [-grep lit,...] A.tgz B.tgz ...
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
//
// It also estimates the trigram postings such a shared index would keep:
// one posting list per trigram over the distinct chunks, each list its
// chunk numbers delta- and varint-coded (as codesearch codes them), next
// to the same estimate for today's design, one index per version over
// blocks of about 8 KiB. Postings are what a warm grep needs locally
// besides the text, so text and postings together bound what a design
// that shares chunks could keep warm.
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
	"time"

	"github.com/klauspost/compress/zstd"
)

func main() {
	avgs := flag.String("avg", "2048,4096,8192", "average chunk sizes to try, comma-separated powers of two")
	greps := flag.String("grep", "", "comma-separated literals: count the last version's chunks a trigram index would hand a grep for each, and time decompressing them")
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
	var perVersion int64
	for _, files := range versions {
		var blocks [][]byte
		for _, f := range files {
			blocks = append(blocks, cutEvery(f, 8<<10)...)
		}
		perVersion += newPostings().addAll(blocks)
	}
	fmt.Printf("postings, one index per version over 8 KiB blocks (today's design), summed over %d versions: %.1f MB\n",
		len(versions), mb(perVersion))
	for _, a := range strings.Split(*avgs, ",") {
		avg, err := strconv.Atoi(a)
		if err != nil || avg < 64 || avg&(avg-1) != 0 {
			fmt.Fprintf(os.Stderr, "chunks: -avg %q: want powers of two of at least 64\n", a)
			os.Exit(2)
		}
		seen := map[[32]byte]bool{}
		var distinct, compressed, last int64
		shared := newPostings()
		var frames [][]byte // the compressed chunks, to time decompressing them
		frameOf := map[[32]byte]int{}
		var lastChunks [][32]byte // the last version's chunks, in file order
		fmt.Printf("average chunk %d bytes\n", avg)
		for i, files := range versions {
			var total, fresh int64
			for _, f := range files {
				total += int64(len(f))
				for _, c := range chunk(f, avg) {
					h := sha256.Sum256(c)
					if i == len(versions)-1 {
						lastChunks = append(lastChunks, h)
					}
					if seen[h] {
						continue
					}
					frameOf[h] = len(frames)
					seen[h] = true
					fresh += int64(len(c))
					z := enc.EncodeAll(c, nil)
					compressed += int64(len(z))
					frames = append(frames, z)
					shared.add(c)
				}
			}
			distinct += fresh
			last = total
			fmt.Printf("  %-40s text %6.1f MB, in no earlier version %6.1f MB\n", flag.Arg(i), mb(total), mb(fresh))
		}
		fmt.Printf("  distinct chunk text over %d versions: %.1f MB = %.2fx the last version's text; zstd per chunk %.1f MB = %.2fx\n",
			len(versions), mb(distinct), float64(distinct)/float64(last), mb(compressed), float64(compressed)/float64(last))
		fmt.Printf("  postings over the distinct chunks: %.1f MB = %.2fx; with the zstd chunks %.1f MB = %.2fx\n",
			mb(shared.bytes), float64(shared.bytes)/float64(last),
			mb(shared.bytes+compressed), float64(shared.bytes+compressed)/float64(last))
		// What a grep would pay per candidate chunk to read it back.
		dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		var buf []byte
		t0 := time.Now()
		for _, z := range frames {
			if buf, err = dec.DecodeAll(z, buf[:0]); err != nil {
				fmt.Fprintln(os.Stderr, "chunks: decoding a chunk:", err)
				os.Exit(1)
			}
		}
		el := time.Since(t0)
		dec.Close()
		fmt.Printf("  decompressing every distinct chunk, one core: %.0f MB/s, %.1f µs a chunk\n",
			mb(distinct)/el.Seconds(), float64(el.Microseconds())/float64(len(frames)))
		if *greps != "" {
			candidates(strings.Split(*greps, ","), versions[len(versions)-1], lastChunks, frames, frameOf)
		}
	}
}

// candidates prints, for each literal, what a grep of the last version
// would read with text compressed at rest: the chunks holding every
// trigram of the literal (what postings over chunks hand the scanner),
// how many of them hold the literal itself, the time to decompress the
// candidates on one core, and today's 8 KiB blocks holding every trigram
// (read from the mapping, nothing to decompress).
func candidates(lits []string, files [][]byte, chunks [][32]byte, frames [][]byte, frameOf map[[32]byte]int) {
	dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	defer dec.Close()
	for _, lit := range lits {
		var cand, hits []int
		var buf []byte
		var err error
		for _, h := range chunks {
			fi := frameOf[h]
			if buf, err = dec.DecodeAll(frames[fi], buf[:0]); err != nil {
				fmt.Fprintln(os.Stderr, "chunks: decoding a chunk:", err)
				os.Exit(1)
			}
			if hasTrigrams(buf, lit) {
				cand = append(cand, fi)
				if bytes.Contains(buf, []byte(lit)) {
					hits = append(hits, fi)
				}
			}
		}
		t0 := time.Now()
		for _, fi := range cand {
			if buf, err = dec.DecodeAll(frames[fi], buf[:0]); err != nil {
				fmt.Fprintln(os.Stderr, "chunks: decoding a chunk:", err)
				os.Exit(1)
			}
		}
		el := time.Since(t0)
		var blocks int
		for _, f := range files {
			for _, b := range cutEvery(f, 8<<10) {
				if hasTrigrams(b, lit) {
					blocks++
				}
			}
		}
		fmt.Printf("  grep %q: %d candidate chunks (%d hold it), decompressed in %.2f ms on one core; today %d candidate 8 KiB blocks, read mapped\n",
			lit, len(cand), len(hits), float64(el.Microseconds())/1000, blocks)
	}
}

// hasTrigrams reports whether b holds every trigram of lit.
func hasTrigrams(b []byte, lit string) bool {
	for i := 0; i+3 <= len(lit); i++ {
		if !bytes.Contains(b, []byte(lit[i:i+3])) {
			return false
		}
	}
	return true
}

// postings sizes trigram posting lists without keeping them: documents
// (chunks or blocks) are numbered in the order added, so each list is
// coded as it grows, by the gap since its previous entry.
type postings struct {
	last  []uint32 // per trigram: the number of its last document, +1
	stamp []uint32 // per trigram: the document that last counted it, +1
	docs  uint32
	bytes int64
}

func newPostings() *postings {
	return &postings{last: make([]uint32, 1<<24), stamp: make([]uint32, 1<<24)}
}

func (p *postings) addAll(docs [][]byte) int64 {
	for _, d := range docs {
		p.add(d)
	}
	return p.bytes
}

func (p *postings) add(doc []byte) {
	p.docs++
	id := p.docs
	for i := 0; i+3 <= len(doc); i++ {
		t := uint32(doc[i])<<16 | uint32(doc[i+1])<<8 | uint32(doc[i+2])
		if p.stamp[t] == id {
			continue
		}
		p.stamp[t] = id
		p.bytes += int64(varintLen(uint64(id - p.last[t])))
		p.last[t] = id
	}
}

func varintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// cutEvery cuts text into blocks of about size bytes, each ending at a
// newline where one comes within the block.
func cutEvery(text []byte, size int) [][]byte {
	var out [][]byte
	for len(text) > size {
		n := bytes.LastIndexByte(text[:size], '\n') + 1
		if n == 0 {
			n = size
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	if len(text) > 0 {
		out = append(out, text)
	}
	return out
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
