package ingest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/store"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// source is a Source over a tarball's bytes that stands for a download:
// cut after `cut` bytes with readErr (when set), and whose Verify returns
// verifyErr. It records what had happened when Verify was called.
type source struct {
	r         *bytes.Reader
	cut       int
	readErr   error
	verifyErr error

	rec      *recorder
	verified bool
	// commitsAtVerify is how many commits the recorder held when Verify
	// was called.
	commitsAtVerify int
}

func newSource(tgz []byte, rec *recorder) *source {
	return &source{r: bytes.NewReader(tgz), cut: len(tgz), rec: rec}
}

func (s *source) Read(p []byte) (int, error) {
	done := int(s.r.Size()) - s.r.Len()
	if done >= s.cut {
		if s.readErr != nil {
			return 0, s.readErr
		}
		return 0, io.EOF
	}
	return s.r.Read(p[:min(len(p), s.cut-done)])
}

func (s *source) Verify() error {
	s.verified = true
	s.rec.mu.Lock()
	s.commitsAtVerify = len(s.rec.commits)
	s.rec.mu.Unlock()
	if s.readErr != nil {
		return s.readErr
	}
	return s.verifyErr
}

var errMismatch = errors.New("integrity mismatch (test)")

// TestStreamCommitsOnlyAfterVerify: a streamed tarball whose bytes fail
// the integrity check commits nothing, though its bodies were written as
// they came (content-addressed, reachable from no version); one that
// passes is committed after the check, never before.
func TestStreamCommitsOnlyAfterVerify(t *testing.T) {
	t.Parallel()
	tgz := tb.Package(t, map[string]string{"index.js": "module.exports = 1;\n", "lib/a.js": "a"})

	rec := newRecorder()
	src := newSource(tgz, rec)
	src.verifyErr = errMismatch
	_, err := Stream(context.Background(), rec, "p", "1.0.0", "sha512-x", src, DefaultLimits())
	if !errors.Is(err, errMismatch) {
		t.Fatalf("Stream = %v, want the mismatch", err)
	}
	if len(rec.commits) != 0 {
		t.Errorf("committed %+v after a mismatch", rec.commits)
	}
	if len(rec.blobs) == 0 {
		t.Error("no bodies written while the tarball streamed: want them written before the check")
	}
	for h, b := range rec.blobs {
		if store.HashOf(b) != h {
			t.Errorf("body stored under a key that is not its sha256")
		}
	}

	rec = newRecorder()
	src = newSource(tgz, rec)
	if _, err := Stream(context.Background(), rec, "p", "1.0.0", "sha512-x", src, DefaultLimits()); err != nil {
		t.Fatal(err)
	}
	if !src.verified || src.commitsAtVerify != 0 || len(rec.commits) != 1 {
		t.Errorf("verified %v with %d commits before it, %d after; want verified before the one commit",
			src.verified, src.commitsAtVerify, len(rec.commits))
	}
}

// TestStreamDownloadFailureWinsOverTheArchive: a download cut short makes
// a corrupt archive, but what the caller learns is the download's failure
// (retried later), never ErrBadArchive (remembered as the version's).
func TestStreamDownloadFailureWinsOverTheArchive(t *testing.T) {
	t.Parallel()
	tgz := tb.Package(t, map[string]string{"index.js": strings.Repeat("x", 100_000), "b.js": strings.Repeat("y", 100_000)})
	cutErr := errors.New("the connection closed before the answer was complete (test)")
	rec := newRecorder()
	src := newSource(tgz, rec)
	src.cut, src.readErr = len(tgz)/2, cutErr
	_, err := Stream(context.Background(), rec, "p", "1.0.0", "sha512-x", src, DefaultLimits())
	if !errors.Is(err, cutErr) || errors.Is(err, ErrBadArchive) {
		t.Fatalf("Stream = %v, want the download's failure and not ErrBadArchive", err)
	}
	if len(rec.commits) != 0 {
		t.Errorf("committed %+v from a cut download", rec.commits)
	}
}

// TestStreamMismatchWinsOverTheArchive: what tampered bytes cause (a cap
// hit, a corrupt archive) is reported as the mismatch; with bytes the
// registry vouches for, as itself.
func TestStreamMismatchWinsOverTheArchive(t *testing.T) {
	t.Parallel()
	overCap := tb.Package(t, map[string]string{"a.js": "a", "b.js": "b", "c.js": "c"})
	corrupt := tb.Package(t, map[string]string{"a.js": strings.Repeat("a", 50_000)})
	corrupt = corrupt[:len(corrupt)/2]
	lim := DefaultLimits()
	lim.MaxFiles = 2
	for _, tc := range []struct {
		name string
		tgz  []byte
		want error
	}{{"over MaxFiles", overCap, ErrLimit}, {"corrupt", corrupt, ErrBadArchive}} {
		for _, verifyErr := range []error{nil, errMismatch} {
			rec := newRecorder()
			src := newSource(tc.tgz, rec)
			src.verifyErr = verifyErr
			_, err := Stream(context.Background(), rec, "p", "1.0.0", "sha512-x", src, lim)
			want := tc.want
			if verifyErr != nil {
				want = verifyErr
			}
			if !errors.Is(err, want) {
				t.Errorf("%s, Verify %v: Stream = %v, want %v", tc.name, verifyErr, err, want)
			}
			if len(rec.commits) != 0 {
				t.Errorf("%s: committed", tc.name)
			}
		}
	}
}
