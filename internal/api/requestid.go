package api

import "math/rand/v2"

// requestIDLetters are the letters of a request id: 32 of them, as Echo's
// own generator writes them, so ids look as they always did.
const requestIDLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// requestIDBytes is how many byte values map onto the letters evenly: 4 × 52.
const requestIDBytes = 4 * 52

// requestID is a new request id: 32 letters drawn uniformly from the
// runtime's per-thread ChaCha8 generator. Echo's generator reads
// crypto/rand through a pooled bufio.Reader and allocates twice, 2% of a
// warm raw read's CPU (issue 27). An id only tells requests apart in the
// log and in error answers; it is no secret, and its 182 bits of entropy
// do not repeat.
func requestID() string {
	var b [32]byte
	i := 0
	for i < len(b) {
		// Eight bytes a draw; a byte of requestIDBytes or more is skipped so
		// every letter is equally likely, as Echo's generator does.
		x := rand.Uint64()
		for k := 0; k < 8 && i < len(b); k, x = k+1, x>>8 {
			if c := byte(x); c < requestIDBytes {
				b[i] = requestIDLetters[c%52]
				i++
			}
		}
	}
	return string(b[:])
}
