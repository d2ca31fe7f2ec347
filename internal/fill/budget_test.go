package fill_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// TestBudgetWeighsCallerFills is issue 25 §1: a caller's cold fill takes
// the version's declared unpacked bytes from the budget before its
// download, so a second version that does not fit beside it waits
// instead of being read at the same time, and goes on once the first
// gives its bytes back. Before, only warm jobs were weighed, and four
// callers' 200 MiB versions were read at once (1.9 GiB of heap).
func TestBudgetWeighsCallerFills(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(t, "first", "1.0.0")
	e.publish(t, "second", "1.0.0")
	budget := fill.NewBudget(1) // smaller than either version: each runs alone
	waited := make(chan struct{}, 2)
	fill.OnBudgetWait(budget, func() { waited <- struct{}{} })
	f := e.filler(fill.Options{Timeout: time.Minute, Budget: budget})
	arrived, release := e.reg.HoldTarballs("first")
	defer release()

	fillAsync := func(name string) <-chan error {
		done := make(chan error, 1)
		go func() { done <- f.Fill(t.Context(), name, "1.0.0") }()
		return done
	}
	first := fillAsync("first")
	<-arrived // first holds the whole budget while its download is held
	second := fillAsync("second")
	<-waited
	if s := budget.Stats(); s.InUse != 1 || s.Waiting != 1 {
		t.Errorf("with one fill downloading and one waiting: %+v, want 1 byte in use and 1 waiting", s)
	}
	if n := e.reg.TarballDownloads("second", "1.0.0"); n != 0 {
		t.Errorf("the waiting fill downloaded its tarball %d times before its turn", n)
	}
	release()
	for _, done := range []<-chan error{first, second} {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if s := budget.Stats(); s.InUse != 0 || s.Waiting != 0 {
		t.Errorf("after both fills: %+v, want nothing held", s)
	}
}

// TestChargeGrowsWithoutDeadlock: a charge that must grow past what the
// budget has free gives back what it holds and waits for all of it, so
// two charges each holding part of the budget never wait for each other;
// a charge is never more than the whole budget.
func TestChargeGrowsWithoutDeadlock(t *testing.T) {
	t.Parallel()
	b := fill.NewBudget(100)
	waited := make(chan struct{}, 1)
	fill.OnBudgetWait(b, func() { waited <- struct{}{} })
	a, err := b.Take(t.Context(), 60)
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.Take(t.Context(), 40)
	if err != nil {
		t.Fatal(err)
	}
	grown := make(chan error, 1)
	go func() { grown <- c.Grow(t.Context(), 1000) }() // its actual bytes: more than the budget
	<-waited
	if s := b.Stats(); s.InUse != 60 {
		t.Errorf("while c waits to grow: %d bytes in use, want a's 60 (c gave its 40 back)", s.InUse)
	}
	a.Release()
	if err := <-grown; err != nil {
		t.Fatal(err)
	}
	if s := b.Stats(); s.InUse != 100 {
		t.Errorf("c grown past the budget holds %d bytes, want the whole budget (100)", s.InUse)
	}
	c.Release()
	c.Release() // idempotent
	if s := b.Stats(); s.InUse != 0 {
		t.Errorf("after both released: %d bytes in use", s.InUse)
	}

	ctx, cancel := context.WithCancel(t.Context())
	held, _ := b.Take(t.Context(), 100)
	cancel()
	if _, err := b.Take(ctx, 1); err == nil {
		t.Error("a charge waiting with its context ended was granted")
	}
	held.Release()
}

// TestLargeChargeFreesMemory: giving back a charge of FreeAfterBytes or
// more returns the freed memory to the system (debug.FreeOSMemory), so
// the heap of a large fill is not held for minutes after it; a small one
// does not pay a full collection.
func TestLargeChargeFreesMemory(t *testing.T) {
	t.Parallel()
	b := fill.NewBudget(fill.DefaultMaxFillBytes)
	frees := fill.CountFrees(b)
	small, _ := b.Take(t.Context(), 1<<20)
	small.Release()
	if *frees != 0 {
		t.Errorf("a 1 MiB charge freed memory %d times", *frees)
	}
	large, _ := b.Take(t.Context(), 1<<20)
	if err := large.Grow(t.Context(), fill.FreeAfterBytes); err != nil {
		t.Fatal(err)
	}
	large.Release()
	if *frees != 1 || b.Stats().Freed != 1 {
		t.Errorf("a charge grown to FreeAfterBytes freed memory %d times (stats %d), want once", *frees, b.Stats().Freed)
	}
}

// TestLargeBodyStreamsThroughTheSpool: a body larger than an ingest batch
// goes from the download to the search spool as it is read
// (ingest.Streamer), then to the store once verified, whole and under
// its own hash, and its version is indexed from the spool; the fill's
// charge grew to the bytes actually read, then went back.
func TestLargeBodyStreamsThroughTheSpool(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const size = 1 << 20 // 16 batches of smallBatches
	e.reg.Publish("longline", "1.0.0", tarballtest.LongLine(t, "line.js", "/* hostile */", size))
	budget := fill.NewBudget(fill.DefaultMaxFillBytes)
	f := fill.New(e.st, e.up, fill.Options{Timeout: time.Minute, Ingest: smallBatches(), Index: e.s, Budget: budget})
	if err := f.Fill(t.Context(), "longline", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	files, err := e.st.Files(t.Context(), "longline", "1.0.0")
	if err != nil || len(files) != 1 || files[0].Size != size {
		t.Fatalf("stored %+v, %v; want line.js of %d bytes", files, err, size)
	}
	body, err := e.st.Blob(t.Context(), files[0].Hash)
	if err != nil || len(body) != size || store.HashOf(body) != files[0].Hash || !strings.HasPrefix(string(body), "/* hostile */") {
		t.Fatalf("the stored body: %d bytes, %v; want the %d bytes under their hash", len(body), err, size)
	}
	res, err := e.s.Search(t.Context(), "longline", "1.0.0", index.Query{Pattern: "hostile"})
	if err != nil || len(res.Matches) == 0 {
		t.Errorf("grep of the streamed body: %+v, %v", res, err)
	}
	if s := budget.Stats(); s.InUse != 0 {
		t.Errorf("after the fill and its build: %d bytes of the budget still held", s.InUse)
	}
}
