package ingest

import (
	"context"
	"crypto/sha256"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/store"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// streamer is a recorder that is also a Streamer: it hashes each streamed
// body as it passes (holding none of it) and records its size and hash.
type streamer struct {
	*recorder
	decline bool
}

func (s *streamer) PutStream(ctx context.Context, n int64, r io.Reader, sum func() store.Hash) error {
	if s.decline {
		return ErrNotStreamed
	}
	h := sha256.New()
	got, err := io.Copy(h, r)
	if err != nil {
		return err
	}
	var mine store.Hash
	h.Sum(mine[:0])
	if got != n || sum() != mine {
		return io.ErrShortWrite
	}
	s.mu.Lock()
	s.streamed[mine] = n
	s.mu.Unlock()
	return nil
}

// TestBodyLargerThanABatchIsStreamed is issue 25 §1's hazard: a 300 KB
// tarball holding one line of hundreds of MiB. A body larger than a batch
// goes to the writer's PutStream as it is read, so the ingest never holds
// it whole (it was read into a buffer grown by copying: 264 MiB of
// allocations for a 200 MiB body); a writer that declines gets it whole
// through PutBlobs, as before.
func TestBodyLargerThanABatchIsStreamed(t *testing.T) {
	const size = 48 << 20
	tgz := tb.LongLine(t, "line.js", "/* hostile */", size)
	lim := DefaultLimits()
	lim.BatchBytes = 1 << 20

	s := &streamer{recorder: newRecorder()}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := Ingest(t.Context(), s, "longline", "1.0.0", "", tgz, lim)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Files[0].Size != size || res.Files[0].Binary {
		t.Fatalf("files %+v, want line.js of %d bytes, text", res.Files, size)
	}
	if n, ok := s.streamed[res.Files[0].Hash]; !ok || n != size {
		t.Errorf("the body was not streamed under its hash (streamed %v)", s.streamed)
	}
	if len(s.batches) != 0 {
		t.Errorf("%d PutBlobs calls, want none: the only body was streamed", len(s.batches))
	}
	// Allocations, not a timing: the ingest's gzip window, arenas and
	// copy buffers, never the body.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/4 {
		t.Errorf("streaming a %d MiB body allocated %d MiB", size>>20, alloc>>20)
	}

	s = &streamer{recorder: newRecorder(), decline: true}
	res, err = Ingest(t.Context(), s, "longline", "1.0.0", "", tgz, lim)
	if err != nil {
		t.Fatal(err)
	}
	body := s.blobs[res.Files[0].Hash]
	if int64(len(body)) != size || !strings.HasPrefix(string(body), "/* hostile */") {
		t.Errorf("a declined body was put as %d bytes, want the whole %d", len(body), size)
	}
}

// TestStreamedBodyUTF8 checks a body larger than a batch gets its UTF-8
// validity from the bytes that pass while it is streamed (or whole, when
// the writer declines), runes cut between reads included: a two-byte rune
// throughout, and the same with one byte that is not UTF-8 past the first
// 8000 (IsBinary's look).
func TestStreamedBodyUTF8(t *testing.T) {
	valid := strings.Repeat("x\u00e9", 1<<19)
	invalid := valid[:len(valid)-1] + "\xff"
	tgz := tb.TGZ(t, tb.File("package/valid.js", valid), tb.File("package/invalid.js", invalid))
	lim := DefaultLimits()
	lim.BatchBytes = 1 << 20
	for _, decline := range []bool{false, true} {
		s := &streamer{recorder: newRecorder(), decline: decline}
		res, err := Ingest(t.Context(), s, "utf8", "1.0.0", "", tgz, lim)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.streamed) != 2 && !decline {
			t.Fatalf("%d bodies streamed, want 2", len(s.streamed))
		}
		got := map[string]store.UTF8{}
		for _, f := range res.Files {
			got[f.Path] = f.UTF8
		}
		if got["valid.js"] != store.UTF8Valid || got["invalid.js"] != store.UTF8Invalid {
			t.Errorf("declined %v: UTF-8 validities %v, want valid.js valid (%d) and invalid.js invalid (%d)", decline, got, store.UTF8Valid, store.UTF8Invalid)
		}
	}
}
