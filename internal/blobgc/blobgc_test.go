package blobgc

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/store/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestValidate(t *testing.T) {
	fill := 5 * time.Minute
	if err := DefaultOptions().Validate(fill); err != nil {
		t.Errorf("defaults: %v", err)
	}
	for _, tt := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"grace within twice the fill timeout", func(o *Options) { o.Grace = 2 * fill }, "blob-gc-grace"},
		{"no batch", func(o *Options) { o.Batch = 0 }, "blob-gc-batch"},
		{"negative interval", func(o *Options) { o.Interval = -time.Second }, "blob-gc-interval"},
	} {
		o := DefaultOptions()
		tt.edit(&o)
		if err := o.Validate(fill); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate = %v, want an error naming %s", tt.name, err, tt.want)
		}
	}
}

// passes is a store.BlobCollector standing for a store of blobs blobs
// whose shared position starts at start: it counts what Sweep asks, and
// skips the first skip passes as if another process were running one.
type passes struct {
	blobs, start, skip int
	pos, asked, ran    int
}

func (p *passes) CollectBlobs(_ context.Context, _, every time.Duration, limit int) (store.BlobPass, error) {
	p.asked++
	if every != 0 {
		return store.BlobPass{}, nil
	}
	if p.asked <= p.skip {
		return store.BlobPass{}, nil
	}
	if p.ran == 0 {
		p.pos = p.start
	}
	p.ran++
	n := min(limit, p.blobs-p.pos)
	p.pos += n
	wrapped := n < limit
	if wrapped {
		p.pos = 0
	}
	return store.BlobPass{Ran: true, Examined: n, Wrapped: wrapped}, nil
}

// TestSweepCoversTheStore: from a position mid-store, Sweep finishes that
// sweep and makes a whole one, waiting out passes running elsewhere.
func TestSweepCoversTheStore(t *testing.T) {
	c := &passes{blobs: 25, start: 15, skip: 2}
	o := DefaultOptions()
	o.Batch = 10
	sum, err := Sweep(t.Context(), c, o, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// 15..25, then an empty pass that wraps (a pass that ends on the last
	// blob cannot tell), then 0..10, 10..20, 20..25 (wraps).
	if sum.Examined != 10+25 || !sum.Wrapped || c.ran != 5 || c.asked != 7 {
		t.Errorf("Sweep = %+v after %d passes asked, %d run; want 35 examined in 5 passes after 2 skipped", sum, c.asked, c.ran)
	}
}

// TestSweepKeepsYoung runs a Sweep on a real store with the default
// options: blobs just put are examined and kept.
func TestSweepKeepsYoung(t *testing.T) {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := []byte("module.exports = 1;\n")
	if err := s.PutBlobs(ctx, []store.Blob{{Hash: store.HashOf(body), Data: body}, {Hash: store.HashOf([]byte("x")), Data: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	sum, err := Sweep(ctx, s, DefaultOptions(), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Examined != 4 || sum.Deleted != 0 {
		t.Errorf("Sweep = %+v, want 2 blobs examined twice, none deleted within the grace", sum)
	}
}

// TestRunOff: an Interval of 0 turns the collector off.
func TestRunOff(t *testing.T) {
	c := &passes{blobs: 1}
	o := DefaultOptions()
	o.Interval = 0
	Run(t.Context(), c, o)
	if c.asked != 0 {
		t.Errorf("Run with interval 0 asked %d passes", c.asked)
	}
}
