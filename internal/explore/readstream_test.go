package explore

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
)

// TestReadStreamedSameAnswer reads files through streams from the store
// (every body, however small) and through whole bodies, over a grid of
// offsets, limits and columns: the answers, and the errors, are the same.
func TestReadStreamedSameAnswer(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	long := strings.Repeat("é€x", 900) // 5,400 bytes, multibyte at every cut
	bodies := map[string]string{
		"empty": "", "a": "a", "a-nl": "a\n", "two": "a\nb", "two-nl": "a\nb\n", "blank-lines": "\n\n\n",
		"long": long + "\n" + long + "\nshort\n" + long,
		"many": strings.Repeat("line of text\n", 3000),
		"crlf": "a\r\nb\r\n",
	}
	v := store.NewVersion{Name: "p", Version: "1.0.0"}
	var blobs []store.Blob
	for _, path := range []string{"a", "a-nl", "blank-lines", "crlf", "empty", "long", "many", "two", "two-nl"} {
		b := []byte(bodies[path])
		blobs = append(blobs, store.Blob{Hash: store.HashOf(b), Data: b})
		v.Files = append(v.Files, store.File{Path: path, Size: int64(len(b)), Hash: store.HashOf(b)})
	}
	if err := st.PutBlobs(ctx, blobs); err != nil {
		t.Fatal(err)
	}
	if err := st.CommitVersion(ctx, v); err != nil {
		t.Fatal(err)
	}
	lim := DefaultLimits()
	lim.MaxReadBytes = 20_000
	opt := Options{Store: st, Resolver: exactOnly{}, Filler: noFill{}, Limits: lim}
	whole := New(opt)
	opt.Streams, opt.WholeBodyBytes, opt.MaxBodyBytesInFlight = st, -1, 64<<20
	streamed := New(opt)
	answer := func(s *Service, r Request) string {
		res, err := s.Read(ctx, r)
		if err != nil {
			return "error: " + err.Error()
		}
		b, _ := json.Marshal(res)
		return string(b)
	}
	for path := range bodies {
		for _, off := range []int{0, 1, 2, 3, 4, 5, 3001} {
			for _, limit := range []int{0, 1, 2, 5000} {
				for _, col := range []int{0, 1, 2, 3, 2000, 5400, 5401} {
					if col > 0 && limit > 1 {
						continue
					}
					r := Request{PackageName: "p", Version: "1.0.0", Path: path, Offset: off, Limit: limit, Column: col}
					if w, s := answer(whole, r), answer(streamed, r); w != s {
						t.Errorf("%s offset %d limit %d column %d:\nwhole    %.300s\nstreamed %.300s", path, off, limit, col, w, s)
					}
				}
			}
		}
	}
}
