package index

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// findPaths runs f with the AVX2 pair search, then with the portable one
// (the only one off amd64).
func findPaths(t testing.TB, f func(path string)) {
	t.Helper()
	was := haveAVX2
	defer func() { haveAVX2 = was }()
	if was {
		f("avx2")
	}
	haveAVX2 = false
	f("portable")
}

// TestIndexPairFindsTheFirstPair: indexPair is the first i with b[i] == x
// and b[i+d] == y, on both paths, with the pair at every place of a text
// around the 32-byte blocks (first start, a block's last start, the last
// start, past it) and distances up to past the text.
func TestIndexPairFindsTheFirstPair(t *testing.T) {
	naive := func(b []byte, x, y byte, d int) int {
		for i := 0; i+d < len(b); i++ {
			if b[i] == x && b[i+d] == y {
				return i
			}
		}
		return -1
	}
	findPaths(t, func(path string) {
		for _, n := range []int{0, 1, 31, 32, 33, 63, 64, 65, 100, 257} {
			for _, d := range []int{1, 2, 7, 31, 32, 33, 70} {
				for at := -1; at < n; at++ {
					b := bytes.Repeat([]byte{'a'}, n)
					if at >= 0 {
						b[at] = 'x'
						if at+d < n {
							b[at+d] = 'y'
						}
					}
					// A lone x and a lone y elsewhere must not count.
					if n > 3*d+2 && at != 0 {
						b[0] = 'x'
					}
					if got, want := indexPair(b, 'x', 'y', d), naive(b, 'x', 'y', d); got != want {
						t.Fatalf("%s: n=%d d=%d pair at %d: got %d, want %d", path, n, d, at, got, want)
					}
				}
			}
		}
	})
}

// TestFinderFindsWhatBytesIndexFinds: the finder's first occurrence of a
// literal is bytes.Index's, on both paths, in random texts over small
// alphabets (many near misses of the pair) and for literals whose rarest
// bytes come in either order, repeat, or are one byte.
func TestFinderFindsWhatBytesIndexFinds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	findPaths(t, func(path string) {
		for range 3000 {
			alpha := "abcSyncR"[:2+rng.IntN(7)]
			text := make([]byte, rng.IntN(300))
			for i := range text {
				text[i] = alpha[rng.IntN(len(alpha))]
			}
			lit := make([]byte, 1+rng.IntN(6))
			for i := range lit {
				lit[i] = alpha[rng.IntN(len(alpha))]
			}
			var freq [256]uint64
			for _, c := range text {
				freq[c]++
			}
			f := newFinder(lit, &freq)
			if got, want := f.index(text), bytes.Index(text, lit); got != want {
				t.Fatalf("%s: %q in %q: got %d, want %d", path, lit, text, got, want)
			}
		}
	})
}

// FuzzFinder: the finder agrees with bytes.Index on any text and literal,
// on both paths.
func FuzzFinder(f *testing.F) {
	f.Add([]byte("export function useRouter() { return useRouterContext() }"), []byte("useRouter"))
	f.Add(bytes.Repeat([]byte("SyncS"), 40), []byte("Sync("))
	f.Fuzz(func(t *testing.T, text, lit []byte) {
		if len(lit) == 0 {
			return
		}
		var freq [256]uint64
		for _, c := range text {
			freq[c]++
		}
		findPaths(t, func(path string) {
			fd := newFinder(lit, &freq)
			if got, want := fd.index(text), bytes.Index(text, lit); got != want {
				t.Fatalf("%s: %q in %q: got %d, want %d", path, lit, text, got, want)
			}
		})
	})
}
