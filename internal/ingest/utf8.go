package ingest

import "unicode/utf8"

// utf8Writer finds whether the bytes written to it, taken together, are
// valid UTF-8 (utf8.Valid), without holding them: stream hashes a body
// larger than a batch as it passes, and a rune may straddle two writes.
type utf8Writer struct {
	carry [utf8.UTFMax]byte // the start of a rune the last write cut
	n     int
	bad   bool
}

func (w *utf8Writer) Write(p []byte) (int, error) {
	written := len(p)
	// Complete the rune the last write cut, a byte at a time: FullRune
	// turns true once it is whole or once it cannot be.
	for w.n > 0 && len(p) > 0 && !w.bad {
		w.carry[w.n] = p[0]
		w.n++
		p = p[1:]
		if utf8.FullRune(w.carry[:w.n]) {
			r, size := utf8.DecodeRune(w.carry[:w.n])
			w.bad = r == utf8.RuneError && size <= 1 || size != w.n
			w.n = 0
		}
	}
	if w.bad || len(p) == 0 {
		return written, nil
	}
	// Hold back a rune cut at the end of p: its start is among the last
	// UTFMax-1 bytes. A start that can never be whole is left in, for
	// utf8.Valid to refuse.
	cut := len(p)
	for i := len(p) - 1; i >= 0 && i > len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				cut = i
			}
			break
		}
	}
	w.bad = !utf8.Valid(p[:cut])
	w.n = copy(w.carry[:], p[cut:])
	return written, nil
}

// valid says whether everything written was valid UTF-8.
func (w *utf8Writer) valid() bool { return !w.bad && w.n == 0 }
