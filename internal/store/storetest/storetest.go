// Package storetest is the conformance suite every store.Store passes. Each
// implementation's tests call Run with a function that opens a fresh, empty
// store; the benchmarks here are shared the same way so the two stores'
// figures compare like for like.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/blobcodec"
)

// BlobCounter is implemented by stores that can count their distinct
// bodies. The suite uses it to check that a body shared by versions, or
// put twice, is stored once; both stores implement it.
type BlobCounter interface {
	// BlobCount returns how many distinct bodies are stored.
	BlobCount(ctx context.Context) (int64, error)
}

// Run runs the conformance suite. open must return a fresh, empty store
// each call; Run closes it when the subtest ends. Subtests run in
// parallel, so open must be safe to call concurrently.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"NotFound", testNotFound},
		{"BlobStream", testBlobStream},
		{"Blobs", testBlobs},
		{"PutCommitReadBack", testPutCommitReadBack},
		{"FilesInByteOrder", testFilesInByteOrder},
		{"EmptyVersion", testEmptyVersion},
		{"SharedBodyStoredOnce", testSharedBodyStoredOnce},
		{"PutBlobsIdempotent", testPutBlobsIdempotent},
		{"SecondCommitErrExists", testSecondCommitErrExists},
		{"ConcurrentCommitsOneWins", testConcurrentCommitsOneWins},
		{"CommitReplacesFailed", testCommitReplacesFailed},
		{"MarkFailedKeepsReady", testMarkFailedKeepsReady},
		{"MarkFailedTwiceKeepsLastReason", testMarkFailedTwice},
		{"MissingBlobLeavesNothing", testMissingBlobLeavesNothing},
		{"MissingBlobKeepsFailedRecord", testMissingBlobKeepsFailedRecord},
		{"InvalidVersionRejected", testInvalidVersionRejected},
		{"IndexRecord", testIndexRecord},
		{"CommitRecordsIngestFormat", testCommitRecordsIngestFormat},
		{"CommitRecordsDeprecation", testCommitRecordsDeprecation},
		{"Catalog", testCatalog},
		{"Maintenance", testMaintenance},
		{"Project", testProject},
		{"VersionStates", testVersionStates},
		{"Session", testSession},
		{"CollectOldUnreferenced", testCollectOldUnreferenced},
		{"CollectKeepsYoung", testCollectKeepsYoung},
		{"CollectRePutRefreshes", testCollectRePutRefreshes},
		{"CollectIndexChunks", testCollectIndexChunks},
		{"CollectBounded", testCollectBounded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tt.fn(t, s)
		})
	}
}

// fixture is a version with its bodies, built in code.
type fixture struct {
	v     store.NewVersion
	blobs []store.Blob
}

// newFixture builds name@version from path → body pairs; files are
// sorted into byte order as the contract requires.
func newFixture(name, version string, bodies map[string][]byte) fixture {
	fx := fixture{v: store.NewVersion{Name: name, Version: version, Integrity: "sha512-" + name + "@" + version}}
	for p, body := range bodies {
		h := store.HashOf(body)
		fx.v.Files = append(fx.v.Files, store.File{
			Path: p, Size: int64(len(body)), Hash: h, Binary: bytes.IndexByte(body, 0) >= 0,
			UTF8: store.UTF8Of(utf8.Valid(body)),
		})
		fx.blobs = append(fx.blobs, store.Blob{Hash: h, Data: body})
	}
	slices.SortFunc(fx.v.Files, func(a, b store.File) int { return strings.Compare(a.Path, b.Path) })
	// Tarball order reversed from byte order, modes that vary and every
	// fourth file's UTF-8 validity unknown (as a version stored before
	// migration 00011 reads), so reading back checks that all three are
	// kept per file (npm diff prints the first two and a name-only diff
	// skips reading bodies on the third), not defaulted.
	for i := range fx.v.Files {
		f := &fx.v.Files[i]
		f.Order = len(fx.v.Files) - 1 - i
		f.Mode = store.ModeRegular | 0o644
		if i%3 == 1 {
			f.Mode = store.ModeRegular | 0o755
		}
		if i%4 == 3 {
			f.UTF8 = store.UTF8Unknown
		}
	}
	return fx
}

// small is a three-file version used where content does not matter.
func small(version string) fixture {
	return newFixture("left-pad", version, map[string][]byte{
		"package.json": []byte(`{"name":"left-pad","version":"` + version + `"}`),
		"index.js":     []byte("module.exports = leftPad;\n"),
		"README.md":    []byte("# left-pad\n"),
	})
}

func put(t *testing.T, s store.Store, fx fixture) {
	t.Helper()
	if err := s.PutBlobs(t.Context(), fx.blobs); err != nil {
		t.Fatalf("PutBlobs: %v", err)
	}
}

func commit(t *testing.T, s store.Store, fx fixture) {
	t.Helper()
	put(t, s, fx)
	if err := s.CommitVersion(t.Context(), fx.v); err != nil {
		t.Fatalf("CommitVersion(%s@%s): %v", fx.v.Name, fx.v.Version, err)
	}
}

// checkReady checks that fx reads back exactly: version row, file list
// and every body byte for byte.
func checkReady(t *testing.T, s store.Store, fx fixture) {
	t.Helper()
	ctx := t.Context()
	got, err := s.Version(ctx, fx.v.Name, fx.v.Version)
	if err != nil {
		t.Fatalf("Version: %v", err)
	}
	want := store.Version{
		Name: fx.v.Name, Version: fx.v.Version, Integrity: fx.v.Integrity, State: store.StateReady,
		FileCount: len(fx.v.Files), TotalBytes: fx.v.TotalBytes(), CreatedAt: got.CreatedAt, Deprecated: fx.v.Deprecated,
	}
	if got != want {
		t.Errorf("Version = %+v\nwant      %+v", got, want)
	}
	if got.CreatedAt.IsZero() {
		t.Errorf("Version.CreatedAt is zero")
	}
	files, err := s.Files(ctx, fx.v.Name, fx.v.Version)
	if err != nil {
		t.Fatalf("Files: %v", err)
	}
	if !slices.Equal(files, fx.v.Files) {
		t.Errorf("Files = %q\nwant    %q", paths(files), paths(fx.v.Files))
		for i := range min(len(files), len(fx.v.Files)) {
			if files[i] != fx.v.Files[i] {
				t.Errorf("file %d = %+v\nwant     %+v", i, files[i], fx.v.Files[i])
				break
			}
		}
	}
	for _, b := range fx.blobs {
		body, err := s.Blob(ctx, b.Hash)
		if err != nil {
			t.Fatalf("Blob(%x): %v", b.Hash[:4], err)
		}
		if !bytes.Equal(body, b.Data) {
			t.Errorf("Blob(%x) = %d bytes differing from the %d put", b.Hash[:4], len(body), len(b.Data))
		}
	}
}

// checkInvisible checks that name@version has no readable files and,
// unless failedReason is non-empty, no version record either.
func checkInvisible(t *testing.T, s store.Store, name, version, failedReason string) {
	t.Helper()
	ctx := t.Context()
	v, err := s.Version(ctx, name, version)
	switch {
	case failedReason == "" && !errors.Is(err, store.ErrNotFound):
		t.Errorf("Version(%s@%s) = %+v, %v; want ErrNotFound", name, version, v, err)
	case failedReason != "" && err != nil:
		t.Errorf("Version(%s@%s): %v", name, version, err)
	case failedReason != "" && (v.State != store.StateFailed || v.Reason != failedReason || v.FileCount != 0):
		t.Errorf("Version(%s@%s) = %+v, want failed with reason %q", name, version, v, failedReason)
	}
	if files, err := s.Files(ctx, name, version); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Files(%s@%s) = %d files, %v; want ErrNotFound", name, version, len(files), err)
	}
}

func paths(files []store.File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

func blobCount(t *testing.T, s store.Store) int64 {
	t.Helper()
	c, ok := s.(BlobCounter)
	if !ok {
		t.Fatalf("%T does not implement storetest.BlobCounter", s)
	}
	n, err := c.BlobCount(t.Context())
	if err != nil {
		t.Fatalf("BlobCount: %v", err)
	}
	return n
}

func testNotFound(t *testing.T, s store.Store) {
	ctx := t.Context()
	commit(t, s, small("1.0.0"))
	if _, err := s.Version(ctx, "left-pad", "9.9.9"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Version of unknown version: %v, want ErrNotFound", err)
	}
	if _, err := s.Version(ctx, "right-pad", "1.0.0"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Version of unknown package: %v, want ErrNotFound", err)
	}
	if _, err := s.Files(ctx, "left-pad", "9.9.9"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Files of unknown version: %v, want ErrNotFound", err)
	}
	if _, err := s.Blob(ctx, store.HashOf([]byte("never stored"))); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Blob of unknown hash: %v, want ErrNotFound", err)
	}
}

// testBlobStream reads bodies back through OpenBlob: empty, small (kept
// raw), larger than a stream chunk compressible (zstd) and not (raw), in
// whole, in pieces and after seeks (iotest.TestReader), and an absent hash.
func testBlobStream(t *testing.T, s store.Store) {
	ctx := t.Context()
	random := make([]byte, blobcodec.StreamChunk*5/2)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	bodies := map[string][]byte{
		"empty": {}, "small": []byte("export default 1;\n"),
		"text": textBody(7, blobcodec.StreamChunk*3+123), "random": random,
	}
	var blobs []store.Blob
	for _, b := range bodies {
		blobs = append(blobs, store.Blob{Hash: store.HashOf(b), Data: b})
	}
	if err := s.PutBlobs(ctx, blobs); err != nil {
		t.Fatal(err)
	}
	for name, want := range bodies {
		t.Run(name, func(t *testing.T) {
			st, err := s.OpenBlob(ctx, store.HashOf(want))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if st.Size() != int64(len(want)) {
				t.Fatalf("Size = %d, want %d", st.Size(), len(want))
			}
			if err := iotest.TestReader(st, want); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := s.OpenBlob(ctx, store.HashOf([]byte("never stored"))); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("OpenBlob of unknown hash: %v, want ErrNotFound", err)
	}
}

// testBlobs reads many bodies at once: empty, small (raw), compressible
// (zstd) and not; a hash asked twice is given once, an absent one not at
// all, and fn's error ends the read.
func testBlobs(t *testing.T, s store.Store) {
	ctx := t.Context()
	random := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	want := map[store.Hash][]byte{}
	var blobs []store.Blob
	for _, b := range [][]byte{{}, []byte("export default 1;\n"), textBody(9, 200<<10), random} {
		h := store.HashOf(b)
		want[h] = b
		blobs = append(blobs, store.Blob{Hash: h, Data: b})
	}
	if err := s.PutBlobs(ctx, blobs); err != nil {
		t.Fatal(err)
	}
	absent := store.HashOf([]byte("never stored"))
	var hs []store.Hash
	for h := range want {
		hs = append(hs, h, absent, h)
	}
	got := map[store.Hash][]byte{}
	err := s.Blobs(ctx, hs, func(h store.Hash, body []byte) error {
		if _, dup := got[h]; dup {
			t.Errorf("Blobs gave %x twice", h)
		}
		got[h] = body
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("Blobs gave %d bodies, want %d (the absent hash left out)", len(got), len(want))
	}
	for h, b := range want {
		if g, ok := got[h]; !ok || !bytes.Equal(g, b) {
			t.Errorf("Blobs %x: %d bytes (given: %v), want %d", h, len(g), ok, len(b))
		}
	}
	if err := s.Blobs(ctx, nil, func(store.Hash, []byte) error {
		t.Error("Blobs of no hashes called fn")
		return nil
	}); err != nil {
		t.Errorf("Blobs of no hashes: %v", err)
	}
	stop := errors.New("enough")
	calls := 0
	err = s.Blobs(ctx, hs, func(store.Hash, []byte) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("fn failing: Blobs returned %v after %d calls, want its error after 1", err, calls)
	}
}

// textBody returns n bytes of JavaScript-like text, varied by seed, which
// compresses the way real package sources do.
func textBody(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0))
	words := []string{"const ", "function ", "return ", "export ", "import ", "value", "index", "=> ",
		"{\n", "}\n", "(", ")", ";\n", "  ", "this.", "props", "undefined", "null", "true", "await "}
	var b bytes.Buffer
	b.Grow(n)
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(8) == 0 {
			fmt.Fprintf(&b, "v%d", r.IntN(1000))
		}
	}
	return b.Bytes()[:n]
}

func testPutCommitReadBack(t *testing.T, s store.Store) {
	random := make([]byte, 100<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	fx := newFixture("@scope/pkg", "1.2.3-beta.1", map[string][]byte{
		"package.json":         []byte(`{"name":"@scope/pkg"}`),
		"empty.js":             {},
		"dist/big.js":          textBody(1, 5<<20),
		"img/noise.bin":        random,
		"bad-\xff\xfe.txt":     []byte("path is not UTF-8\n"),
		"body-\xc3.js":         {'o', 'k', 0xc3, 0x28, 0xff, 0x00, '\n'},
		"lib/\u00e9t\u00e9.js": []byte("// été\n"),
	})
	// Each UTF-8 validity is written and read back.
	seen := map[store.UTF8]bool{}
	for _, f := range fx.v.Files {
		seen[f.UTF8] = true
	}
	if len(seen) != 3 {
		t.Fatalf("fixture has UTF-8 validities %v, want all three", seen)
	}
	commit(t, s, fx)
	checkReady(t, s, fx)
}

func testFilesInByteOrder(t *testing.T, s store.Store) {
	// Byte order, not any collation: upper case before lower, '-' (0x2d)
	// before '/' (0x2f), and UTF-8 lead bytes and invalid 0xff last.
	want := []string{"B", "Z", "a", "a-b", "a/b", "a/b/c", "ab", "\u00e9", "\xff"}
	bodies := map[string][]byte{}
	for i, p := range want {
		bodies[p] = fmt.Appendf(nil, "file %d\n", i)
	}
	fx := newFixture("order", "1.0.0", bodies)
	if got := paths(fx.v.Files); !slices.Equal(got, want) {
		t.Fatalf("fixture sorted to %q, want %q", got, want)
	}
	commit(t, s, fx)
	files, err := s.Files(t.Context(), "order", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(files); !slices.Equal(got, want) {
		t.Errorf("Files order = %q, want %q", got, want)
	}
}

func testEmptyVersion(t *testing.T, s store.Store) {
	fx := newFixture("empty", "0.0.1", nil)
	commit(t, s, fx)
	files, err := s.Files(t.Context(), "empty", "0.0.1")
	if err != nil || len(files) != 0 {
		t.Errorf("Files of a version with no files = %d files, %v; want none, nil", len(files), err)
	}
	checkReady(t, s, fx)
}

func testSharedBodyStoredOnce(t *testing.T, s store.Store) {
	shared := textBody(7, 10<<10)
	a := newFixture("dedupe", "1.0.0", map[string][]byte{"lib.js": shared, "v.txt": []byte("1\n")})
	b := newFixture("dedupe", "1.0.1", map[string][]byte{"lib.js": shared, "v.txt": []byte("2\n"),
		"copy/of/lib.js": shared})
	commit(t, s, a)
	commit(t, s, b)
	// lib.js once, and each v.txt.
	if n := blobCount(t, s); n != 3 {
		t.Errorf("BlobCount = %d, want 3", n)
	}
	checkReady(t, s, a)
	checkReady(t, s, b)
}

func testPutBlobsIdempotent(t *testing.T, s store.Store) {
	fx := small("1.0.0")
	put(t, s, fx)
	put(t, s, fx)
	// The same body twice in one call, and new and old bodies mixed.
	extra := store.Blob{Hash: store.HashOf([]byte("extra")), Data: []byte("extra")}
	if err := s.PutBlobs(t.Context(), append(slices.Clone(fx.blobs), extra, extra)); err != nil {
		t.Fatalf("PutBlobs with duplicates: %v", err)
	}
	if err := s.PutBlobs(t.Context(), nil); err != nil {
		t.Fatalf("PutBlobs(nil): %v", err)
	}
	if n := blobCount(t, s); n != int64(len(fx.blobs))+1 {
		t.Errorf("BlobCount = %d, want %d", n, len(fx.blobs)+1)
	}
	if err := s.CommitVersion(t.Context(), fx.v); err != nil {
		t.Fatal(err)
	}
	checkReady(t, s, fx)
}

func testSecondCommitErrExists(t *testing.T, s store.Store) {
	first := small("1.0.0")
	commit(t, s, first)
	second := newFixture("left-pad", "1.0.0", map[string][]byte{"other.js": []byte("other\n")})
	put(t, s, second)
	if err := s.CommitVersion(t.Context(), second.v); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second CommitVersion: %v, want ErrExists", err)
	}
	checkReady(t, s, first)
}

func testConcurrentCommitsOneWins(t *testing.T, s store.Store) {
	const n = 8
	fxs := make([]fixture, n)
	for i := range fxs {
		// Each contender has different files so the winner is visible.
		bodies := map[string][]byte{"package.json": []byte(`{"name":"race"}`)}
		for j := range 50 {
			bodies[fmt.Sprintf("lib/f%02d.js", j)] = fmt.Appendf(nil, "contender %d file %d\n", i, j)
		}
		fxs[i] = newFixture("race", "1.0.0", bodies)
		fxs[i].v.Integrity = fmt.Sprintf("sha512-contender-%d", i)
		put(t, s, fxs[i])
	}
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range fxs {
		wg.Go(func() {
			<-start
			errs[i] = s.CommitVersion(context.WithoutCancel(t.Context()), fxs[i].v)
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("contenders %d and %d both committed", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, store.ErrExists):
			t.Errorf("contender %d: %v, want nil or ErrExists", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no contender committed")
	}
	checkReady(t, s, fxs[winner])
}

func testCommitReplacesFailed(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.MarkFailed(ctx, "left-pad", "1.0.0", "tarball truncated"); err != nil {
		t.Fatal(err)
	}
	checkInvisible(t, s, "left-pad", "1.0.0", "tarball truncated")
	fx := small("1.0.0")
	commit(t, s, fx)
	checkReady(t, s, fx) // reason cleared, state ready
}

// testCommitRecordsDeprecation: a version's deprecation message reads back
// as committed, whole and byte for byte (messages run long and hold any
// text), also over a failed record; a version without one reads "".
func testCommitRecordsDeprecation(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.MarkFailed(ctx, "left-pad", "1.0.0", "upstream 503"); err != nil {
		t.Fatal(err)
	}
	fx := small("1.0.0")
	fx.v.Deprecated = "use String.prototype.padStart — see https://example.com/why\n" + strings.Repeat("long ", 2000)
	commit(t, s, fx)
	checkReady(t, s, fx)
	plain := small("1.0.1")
	commit(t, s, plain)
	checkReady(t, s, plain)
}

func testMarkFailedKeepsReady(t *testing.T, s store.Store) {
	fx := small("1.0.0")
	commit(t, s, fx)
	if err := s.MarkFailed(t.Context(), "left-pad", "1.0.0", "late failure from a lost race"); err != nil {
		t.Fatalf("MarkFailed on a ready version: %v, want nil", err)
	}
	checkReady(t, s, fx)
}

func testMarkFailedTwice(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, reason := range []string{"upstream 503", "integrity mismatch"} {
		if err := s.MarkFailed(ctx, "left-pad", "1.0.0", reason); err != nil {
			t.Fatal(err)
		}
	}
	checkInvisible(t, s, "left-pad", "1.0.0", "integrity mismatch")
}

func testMissingBlobLeavesNothing(t *testing.T, s store.Store) {
	fx := small("1.0.0")
	put(t, s, fx)
	// One more file whose body was never put, sorting last.
	fx.v.Files = append(fx.v.Files, store.File{Path: "zzz.js", Size: 4, Hash: store.HashOf([]byte("lost"))})
	err := s.CommitVersion(t.Context(), fx.v)
	if !errors.Is(err, store.ErrMissingBlob) || errors.Is(err, store.ErrNotFound) {
		t.Fatalf("CommitVersion with a missing body: %v, want ErrMissingBlob (and not ErrNotFound)", err)
	}
	checkInvisible(t, s, "left-pad", "1.0.0", "")
	// The store is still usable for the same version.
	good := small("1.0.0")
	commit(t, s, good)
	checkReady(t, s, good)
}

func testMissingBlobKeepsFailedRecord(t *testing.T, s store.Store) {
	if err := s.MarkFailed(t.Context(), "left-pad", "1.0.0", "first try"); err != nil {
		t.Fatal(err)
	}
	fx := small("1.0.0")
	fx.v.Files = append(fx.v.Files, store.File{Path: "zzz.js", Size: 4, Hash: store.HashOf([]byte("lost"))})
	put(t, s, fixture{blobs: fx.blobs})
	if err := s.CommitVersion(t.Context(), fx.v); !errors.Is(err, store.ErrMissingBlob) {
		t.Fatalf("CommitVersion with a missing body: %v, want ErrMissingBlob", err)
	}
	checkInvisible(t, s, "left-pad", "1.0.0", "first try")
}

func testInvalidVersionRejected(t *testing.T, s store.Store) {
	fx := small("1.0.0")
	put(t, s, fx)
	unsorted := fx.v
	unsorted.Files = slices.Clone(fx.v.Files)
	slices.Reverse(unsorted.Files)
	dup := fx.v
	dup.Files = append(slices.Clone(fx.v.Files), fx.v.Files[len(fx.v.Files)-1])
	noName := fx.v
	noName.Name = ""
	for name, v := range map[string]store.NewVersion{"unsorted": unsorted, "duplicate path": dup, "no name": noName} {
		err := s.CommitVersion(t.Context(), v)
		if err == nil || errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: CommitVersion = %v, want a validation error", name, err)
		}
	}
	checkInvisible(t, s, "left-pad", "1.0.0", "")
}

func testIndexRecord(t *testing.T, s store.Store) {
	ctx := t.Context()
	fx := small("1.0.0")
	chunk := []store.Blob{{Hash: store.HashOf([]byte("chunk one")), Data: []byte("chunk one")},
		{Hash: store.HashOf([]byte("chunk two")), Data: []byte("chunk two")}}
	rec := store.IndexRecord{Format: 1, Size: 18, Chunks: []store.Hash{chunk[0].Hash, chunk[1].Hash},
		Coverage: 0.995, Stats: []byte(`{"Files":3}`)}
	if err := s.PutBlobs(ctx, chunk); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIndex(ctx, "left-pad", "1.0.0", rec); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PutIndex before the version is ready: %v, want ErrNotFound", err)
	}
	commit(t, s, fx)
	if _, err := s.Index(ctx, "left-pad", "1.0.0", 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Index before PutIndex: %v, want ErrNotFound", err)
	}
	missing := rec
	missing.Chunks = append(slices.Clone(rec.Chunks), store.HashOf([]byte("never stored")))
	if err := s.PutIndex(ctx, "left-pad", "1.0.0", missing); !errors.Is(err, store.ErrMissingBlob) {
		t.Errorf("PutIndex with a missing chunk: %v, want ErrMissingBlob", err)
	}
	if _, err := s.Index(ctx, "left-pad", "1.0.0", 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a rejected PutIndex left a record: %v", err)
	}
	if err := s.PutIndex(ctx, "left-pad", "1.0.0", rec); err != nil {
		t.Fatalf("PutIndex: %v", err)
	}
	got, err := s.Index(ctx, "left-pad", "1.0.0", 1)
	if err != nil {
		t.Fatalf("Index: %v", err)
	}
	if got.Format != 1 || got.Size != 18 || !slices.Equal(got.Chunks, rec.Chunks) || got.Coverage != 0.995 || string(got.Stats) != `{"Files":3}` {
		t.Errorf("Index = %+v, want %+v", got, rec)
	}
	if _, err := s.Index(ctx, "left-pad", "1.0.0", 2); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Index of another format: %v, want ErrNotFound", err)
	}
	// Same format again replaces (a rebuild).
	rec.Chunks, rec.Size = rec.Chunks[:1], 9
	if err := s.PutIndex(ctx, "left-pad", "1.0.0", rec); err != nil {
		t.Fatalf("PutIndex again: %v", err)
	}
	if got, err = s.Index(ctx, "left-pad", "1.0.0", 1); err != nil || len(got.Chunks) != 1 || got.Size != 9 {
		t.Errorf("Index after replace = %+v, %v", got, err)
	}
}
