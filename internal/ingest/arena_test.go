package ingest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/pkgscope/pkgscope/internal/store"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// Each batch is read into the memory of the batch before last, once the
// store has written it; every body still reaches the store intact (the
// recorder copies each at PutBlobs time and checks its hash), duplicates
// included, and a body bigger than an arena's chunk gets its own buffer.
func TestBatchesReuseTheArenaOfTheBatchBeforeLast(t *testing.T) {
	t.Parallel()
	want := map[string]string{}
	var entries []tb.Entry
	add := func(name, body string) {
		want[name] = body
		entries = append(entries, tb.File("package/"+name, body))
	}
	for i := range 40 {
		add(fmt.Sprintf("f%02d", i), strings.Repeat(fmt.Sprintf("%03d", i), 100+i))
		if i%7 == 0 { // a duplicate body: its room goes to the next one
			add(fmt.Sprintf("copy%02d", i), strings.Repeat(fmt.Sprintf("%03d", i), 100+i))
		}
	}
	add("big", strings.Repeat("b", 5000)) // more than a chunk
	lim := DefaultLimits()
	lim.BatchBytes = 1000
	rec := newRecorder()
	var first []*byte // where each batch's first body sits
	rec.onPut = func(batch []store.Blob) error {
		first = append(first, unsafe.SliceData(batch[0].Data))
		return nil
	}
	if _, err := Ingest(context.Background(), rec, "demo", "1.0.0", "", tb.TGZ(t, entries...), lim); err != nil {
		t.Fatal(err)
	}
	if len(first) < 6 {
		t.Fatalf("%d batches, want at least 6", len(first))
	}
	for i := 2; i < len(first)-1; i++ { // the last one is "big"
		if first[i] != first[i-2] {
			t.Errorf("batch %d was not read into the memory of batch %d", i, i-2)
		}
		if first[i] == first[i-1] {
			t.Errorf("batch %d was read into the memory of batch %d, still being written", i, i-1)
		}
	}
	rec.committed(t)
	files := rec.commits[0].Files
	if len(files) != len(want) {
		t.Fatalf("%d files committed, want %d", len(files), len(want))
	}
	for _, f := range files {
		if got := rec.blobs[f.Hash]; !bytes.Equal(got, []byte(want[f.Path])) {
			t.Errorf("%s: stored %.20q..., want %.20q...", f.Path, got, want[f.Path])
		}
	}
}

func TestArenaTakeAndGive(t *testing.T) {
	t.Parallel()
	a := arena{size: 100} // chunks of 100 bytes at most, 200 in all
	x := a.take(60)
	y := a.take(60) // does not fit the first chunk: the second
	if x == nil || y == nil || unsafe.SliceData(x) == unsafe.SliceData(y) {
		t.Fatalf("take(60) twice = %p, %p", x, y)
	}
	if z := a.take(60); z != nil {
		t.Errorf("carved past 2*size: %d bytes in %d chunks", a.total, len(a.chunks))
	}
	if z := a.take(101); z != nil {
		t.Errorf("take(101) of 100-byte chunks = %d bytes", len(z))
	}
	a.give(y)
	if z := a.take(100); unsafe.SliceData(z) != unsafe.SliceData(y) {
		t.Errorf("a body given back did not leave its room")
	}
	a.give(x) // not the latest carve: kept
	if z := a.take(1); z != nil {
		t.Errorf("give of an earlier carve freed its room")
	}
	a.reset()
	if z := a.take(100); unsafe.SliceData(z) != unsafe.SliceData(x) || len(a.chunks) != 2 {
		t.Errorf("reset did not reuse the first chunk (%d chunks)", len(a.chunks))
	}
	if cap(x) != 60 {
		t.Errorf("a carve's capacity %d runs into the next one's", cap(x))
	}
}
