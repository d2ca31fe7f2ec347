package index

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// mapSource is a TextSource over docs held in memory, counting the calls
// per key. When answer is set, it answers instead, given the true body.
type mapSource struct {
	bodies map[string][]byte
	answer func(ctx context.Context, key string, body []byte) ([]byte, error)

	mu    sync.Mutex
	calls map[string]int
}

func newMapSource(docs []Doc) *mapSource {
	m := &mapSource{bodies: map[string][]byte{}, calls: map[string]int{}}
	for _, d := range docs {
		k := d.Key
		if k == "" {
			sum := sha256.Sum256(d.Data)
			k = string(sum[:])
		}
		m.bodies[k] = d.Data
	}
	return m
}

func (m *mapSource) Body(ctx context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	m.calls[key]++
	m.mu.Unlock()
	b, ok := m.bodies[key]
	if m.answer != nil {
		return m.answer(ctx, key, b)
	}
	if !ok {
		return nil, fmt.Errorf("no body %x", key)
	}
	return b, nil
}

// keysRead returns how many distinct keys were read, and how many reads.
func (m *mapSource) keysRead() (keys, reads int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range m.calls {
		keys++
		reads += n
	}
	return keys, reads
}

// openBoth builds docs and opens the index twice: from the full file
// (OpenBytes) and from its stored form (OpenStored over src).
func openBoth(t testing.TB, docs []Doc, lim BuildLimits) (full, stored *Index, src *mapSource) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := Build(&buf, docs, lim); err != nil {
		t.Fatalf("Build: %v", err)
	}
	full, err := OpenBytes(buf.Bytes())
	if err != nil {
		t.Fatalf("OpenBytes: %v", err)
	}
	t.Cleanup(func() { full.Close() })
	src = newMapSource(docs)
	stored, err = OpenStored(storedOf(t, buf.Bytes()), src)
	if err != nil {
		t.Fatalf("OpenStored: %v", err)
	}
	t.Cleanup(func() { stored.Close() })
	return full, stored, src
}

// sameAnswer runs q on both indexes and fails unless the results and
// errors are equal.
func sameAnswer(t *testing.T, name string, full, stored *Index, q Query, lim SearchLimits) {
	t.Helper()
	want, werr := full.Search(context.Background(), q, lim)
	agree(t, name, stored, q, lim, want, werr)
}

// agree runs q on stored and fails unless it answers want and werr, the
// full file's answer.
func agree(t *testing.T, name string, stored *Index, q Query, lim SearchLimits, want Result, werr error) {
	t.Helper()
	got, gerr := stored.Search(context.Background(), q, lim)
	if fmt.Sprint(werr) != fmt.Sprint(gerr) {
		t.Errorf("%s %+v: stored form says %v, full file %v", name, q, gerr, werr)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s %+v: stored form answers\n%+v\nfull file\n%+v", name, q, got, want)
	}
}

// TestOpenStoredAnswersAsOpen: an index opened from its stored form gives
// every query of the golden table the Result the full file gives, and the
// same Stats. TestDifferential compares its table's answers too, and the
// tests run by inBothForms hold for both forms.
func TestOpenStoredAnswersAsOpen(t *testing.T) {
	full, stored, _ := openBoth(t, goldenDocs(), DefaultBuildLimits())
	if !reflect.DeepEqual(full.Stats(), stored.Stats()) {
		t.Errorf("stats differ: stored form %+v, full file %+v", stored.Stats(), full.Stats())
	}
	for _, c := range goldenCases {
		lim := DefaultSearchLimits()
		if c.Window > 0 {
			lim.MaxLineWindow = c.Window
		}
		sameAnswer(t, c.Name, full, stored, c.Query, lim)
	}
	for _, c := range goldenCases {
		c.Query.ContextLines = 3
		sameAnswer(t, c.Name+" with context", full, stored, c.Query, DefaultSearchLimits())
	}
}

// TestOpenStoredReadsOnlyCandidates: a selective literal reads the body
// of the one content that holds it, not the other 198, and once for the
// two files next to each other that hold it.
func TestOpenStoredReadsOnlyCandidates(t *testing.T) {
	var docs []Doc
	for i := range 200 {
		docs = append(docs, Doc{Path: fmt.Sprintf("f%03d.js", i), Data: []byte(fmt.Sprintf("export const value%d = %d;\n", i, i*7))})
	}
	docs[123].Data = append(docs[123].Data, "function useRouterOnce() {}\n"...)
	docs[124].Data = docs[123].Data
	_, stored, src := openBoth(t, docs, DefaultBuildLimits())
	res, err := stored.Search(context.Background(), Query{Pattern: "useRouterOnce"}, DefaultSearchLimits())
	if err != nil || len(res.Matches) != 2 || res.Matches[0].File != "f123.js" || res.Matches[1].File != "f124.js" {
		t.Fatalf("got %+v, %v; want a match in f123.js and f124.js", res, err)
	}
	if keys, reads := src.keysRead(); keys != 1 || reads != 1 {
		t.Errorf("read %d bodies %d times, want the one holding the literal once", keys, reads)
	}
}

// TestOpenStoredWrongBody: a body that is not the content's text (another
// length, a missing byte order mark) fails the search with ErrCorrupt and
// the file's path; a source's error is wrapped and named the same way.
func TestOpenStoredWrongBody(t *testing.T) {
	docs := []Doc{
		{Path: "dist/x.js", Data: []byte("function useRouter() {}\n")},
		{Path: "bom.js", Data: []byte("\ufeffimport { useRouter } from './x';\n")},
	}
	errGone := errors.New("the blob is gone")
	for _, c := range []struct {
		name, path string
		alter      func([]byte) ([]byte, error)
		want       error
	}{
		{"longer", "dist/x.js", func(b []byte) ([]byte, error) { return append(bytes.Clone(b), 'x'), nil }, ErrCorrupt},
		{"shorter", "dist/x.js", func(b []byte) ([]byte, error) { return b[:len(b)-1], nil }, ErrCorrupt},
		{"bom missing", "bom.js", func(b []byte) ([]byte, error) { return append(bytes.TrimPrefix(b, utf8BOM), "xyz"...), nil }, ErrCorrupt},
		{"source error", "dist/x.js", func([]byte) ([]byte, error) { return nil, errGone }, errGone},
	} {
		_, stored, src := openBoth(t, docs, DefaultBuildLimits())
		target := docs[0].Data
		if c.path == "bom.js" {
			target = docs[1].Data
		}
		src.answer = func(_ context.Context, _ string, b []byte) ([]byte, error) {
			if bytes.Equal(b, target) {
				return c.alter(b)
			}
			return b, nil
		}
		_, err := stored.Search(context.Background(), Query{Pattern: "useRouter"}, DefaultSearchLimits())
		if !errors.Is(err, c.want) || !strings.Contains(fmt.Sprint(err), "reading the text of "+c.path+":") {
			t.Errorf("%s: err %v, want one wrapping %v and naming %s", c.name, err, c.want, c.path)
		}
	}
}

// TestOpenStoredCancelWhileReading: a search whose ctx ends while the
// source is reading ends with ctx's error, and one whose Timeout passes
// there ends truncated by the timeout.
func TestOpenStoredCancelWhileReading(t *testing.T) {
	docs := []Doc{{Path: "a.js", Data: []byte("useRouter\n")}}
	_, stored, src := openBoth(t, docs, DefaultBuildLimits())
	ctx, cancel := context.WithCancel(context.Background())
	src.answer = func(bctx context.Context, _ string, _ []byte) ([]byte, error) {
		cancel()
		<-bctx.Done()
		return nil, bctx.Err()
	}
	if _, err := stored.Search(ctx, Query{Pattern: "useRouter"}, DefaultSearchLimits()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while reading: err %v, want context.Canceled", err)
	}

	// The source waits for its context, which must end at the search's
	// Timeout. A timeout that passes before the search reaches the source
	// (a stalled machine) proves nothing, so the next is ten times longer.
	var entered atomic.Bool
	src.answer = func(bctx context.Context, _ string, _ []byte) ([]byte, error) {
		entered.Store(true)
		<-bctx.Done()
		return nil, bctx.Err()
	}
	for _, timeout := range []time.Duration{50 * time.Millisecond, 500 * time.Millisecond, 5 * time.Second} {
		lim := DefaultSearchLimits()
		lim.Timeout = timeout
		res, err := stored.Search(context.Background(), Query{Pattern: "useRouter"}, lim)
		if !entered.Load() {
			continue
		}
		if err != nil || res.TruncatedBy != TruncTimeout {
			t.Errorf("timeout while reading: %+v, %v; want a result truncated by the timeout", res, err)
		}
		return
	}
	t.Fatal("no search reached the source before its timeout")
}

// TestOpenStoredCloseWaitsForReads: Close does not return while a search
// is reading a body through the source (whose bytes the search scans
// after), and later searches fail with ErrClosed.
func TestOpenStoredCloseWaitsForReads(t *testing.T) {
	docs := []Doc{{Path: "a.js", Data: []byte("useRouter\n")}}
	_, stored, src := openBoth(t, docs, DefaultBuildLimits())
	reading, release := make(chan struct{}), make(chan struct{})
	var closed atomic.Bool
	src.answer = func(_ context.Context, _ string, b []byte) ([]byte, error) {
		close(reading)
		<-release
		if closed.Load() {
			return nil, errors.New("Close returned while a search was reading")
		}
		return b, nil
	}
	searched := make(chan error)
	go func() {
		res, err := stored.Search(context.Background(), Query{Pattern: "useRouter"}, DefaultSearchLimits())
		if err == nil && len(res.Matches) != 1 {
			err = fmt.Errorf("%d matches, want 1", len(res.Matches))
		}
		searched <- err
	}()
	<-reading
	closeDone := make(chan error)
	go func() {
		err := stored.Close()
		closed.Store(true)
		closeDone <- err
	}()
	for range 100 {
		runtime.Gosched() // a Close that did not wait would return meanwhile
	}
	close(release)
	if err := <-searched; err != nil {
		t.Fatal(err)
	}
	if err := <-closeDone; err != nil {
		t.Fatal(err)
	}
	if _, err := stored.Search(context.Background(), Query{Pattern: "a"}, DefaultSearchLimits()); !errors.Is(err, ErrClosed) {
		t.Fatalf("search after Close: %v", err)
	}
}

// TestOpenStoredCorrupt: any changed byte of the tables, any truncation
// and a full file given as a stored form are errors wrapping ErrCorrupt
// or an index whose searches never panic and, where they read text, read
// it checked.
func TestOpenStoredCorrupt(t *testing.T) {
	full := smallIndex(t)
	stored := storedOf(t, full)
	src := newMapSource(smallDocs())
	if _, err := OpenStored(stored, src); err != nil {
		t.Fatalf("good stored form: %v", err)
	}
	if _, err := OpenStored(full, src); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a full file as a stored form: err %v, want ErrCorrupt", err)
	}
	for n := range stored {
		if _, err := OpenStored(stored[:n], src); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: err %v, want ErrCorrupt", n, err)
		}
	}
	for i := range stored {
		b := bytes.Clone(stored)
		b[i] ^= 0x5a
		checkStored(t, fmt.Sprintf("byte %d changed", i), b, src)
	}
}

// TestOpenStoredStructure: the table checks of TestOpenStructure hold for
// the stored form, whose sections sit earlier than the trailer says.
func TestOpenStoredStructure(t *testing.T) {
	stored := storedOf(t, smallIndex(t))
	var tr trailer
	tr.decode(stored[len(stored)-trailerSize:])
	at := func(off uint64) uint64 { return off - tr.textLen }
	for _, m := range []struct {
		name string
		f    func(b []byte)
	}{
		{"text length", func(b []byte) { binary.LittleEndian.PutUint64(b[len(b)-trailerSize+8:], tr.textLen+1) }},
		{"huge text length", func(b []byte) { binary.LittleEndian.PutUint64(b[len(b)-trailerSize+8:], 1<<63) }},
		{"section offset", func(b []byte) { binary.LittleEndian.PutUint64(b[len(b)-trailerSize+16:], tr.pathsOff-1) }},
		{"content text out of place", func(b []byte) { binary.LittleEndian.PutUint64(b[at(tr.contsOff)+contRecSize:], 1) }},
		{"key length", func(b []byte) { b[at(tr.keysOff)] = 200 }},
		{"paths not sorted", func(b []byte) { b[at(tr.pathsOff)] = 'z' }},
		{"block out of order", func(b []byte) { binary.LittleEndian.PutUint64(b[at(tr.blocksOff)+blockRecSize:], 0) }},
		{"trigrams unsorted", func(b []byte) { binary.LittleEndian.PutUint32(b[at(tr.trisOff):], 1<<23) }},
		{"stats", func(b []byte) { binary.LittleEndian.PutUint64(b[len(b)-trailerSize+15*8:], 7) }},
	} {
		b := bytes.Clone(stored)
		m.f(b)
		if _, err := OpenStored(b, newMapSource(nil)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", m.name, err)
		}
	}
}

// checkStored opens b as a stored form: it must be refused with
// ErrCorrupt, or searched without an internal error, every error of a
// search wrapping ErrCorrupt (a body that no longer fits its content) or
// naming the body it could not find.
func checkStored(t *testing.T, what string, b []byte, src TextSource) {
	t.Helper()
	ix, err := OpenStored(b, src)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: err %v, want ErrCorrupt", what, err)
		}
		return
	}
	defer ix.Close()
	_ = ix.Stats()
	for _, q := range storedFuzzQueries {
		_, err := ix.Search(context.Background(), q, DefaultSearchLimits())
		if errors.Is(err, errInternal) {
			t.Fatalf("%s: %q: %v", what, q.Pattern, err)
		}
		if err != nil && !errors.Is(err, ErrCorrupt) && !strings.Contains(err.Error(), "no body") {
			t.Fatalf("%s: %q: unexpected error %v", what, q.Pattern, err)
		}
	}
}

var storedFuzzQueries = []Query{{Pattern: "useRouter"}, {Pattern: `read\w+\(`}, {Pattern: "x*", ContextLines: 2}, {Pattern: "(?i)WORLD$"}, {Pattern: `a.{0,300}b`}}

// FuzzOpenStored: OpenStored never panics, and a stored form it accepts
// never makes Search panic, whatever bodies the source returns.
func FuzzOpenStored(f *testing.F) {
	f.Add(storedOf(f, smallIndex(f)))
	f.Add([]byte(headerMagic))
	src := newMapSource(smallDocs())
	f.Fuzz(func(t *testing.T, data []byte) {
		checkStored(t, "fuzzed", data, src)
	})
}

// FuzzOpenStoredBodies: a source that gives each content other bytes of
// the right length (the one defect the index cannot see; the caller's
// hashes must) never makes Search panic, with lines, blocks and context
// cut where the index's tables no longer fit the text.
func FuzzOpenStoredBodies(f *testing.F) {
	docs := append(smallDocs(), genCorpus(9, 6, 0.5)...)
	var buf bytes.Buffer
	if _, err := Build(&buf, docs, smallBlocks()); err != nil {
		f.Fatal(err)
	}
	stored := storedOf(f, buf.Bytes())
	f.Add([]byte("\n"))
	f.Add([]byte("useRouter\nxy"))
	f.Add([]byte("\xff\xfe\x00a\nb\r\n"))
	f.Fuzz(func(t *testing.T, fill []byte) {
		if len(fill) == 0 {
			return
		}
		src := newMapSource(docs)
		src.answer = func(_ context.Context, _ string, b []byte) ([]byte, error) {
			out := make([]byte, len(b))
			for i := range out {
				out[i] = fill[i%len(fill)]
			}
			if bytes.HasPrefix(b, utf8BOM) {
				copy(out, utf8BOM)
			}
			return out, nil
		}
		ix, err := OpenStored(stored, src)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		for _, q := range append(storedFuzzQueries, Query{Pattern: "b", ContextLines: 3}, Query{Pattern: `\w+`, WholeWord: true}) {
			if _, err := ix.Search(context.Background(), q, DefaultSearchLimits()); err != nil {
				t.Fatalf("%q: %v", q.Pattern, err)
			}
		}
	})
}
