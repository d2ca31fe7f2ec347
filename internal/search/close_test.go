package search

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/store"
)

// stallingStore blocks Files until its context ends, telling the test
// when a build has reached it and whether it has returned.
type stallingStore struct {
	*countingStore
	entered  chan struct{}
	returned atomic.Bool
}

func (s *stallingStore) Files(ctx context.Context, name, version string) ([]store.File, error) {
	s.entered <- struct{}{}
	<-ctx.Done()
	s.returned.Store(true)
	return nil, ctx.Err()
}

// A build outlives the grep that started it (it runs detached, for the
// others waiting on it); Close must still cancel it and wait for it, since
// the store it reads is closed right after. Found by test/reliability: a
// mirror closed during an index build left the build running on a closed
// store.
func TestCloseWaitsForDetachedBuilds(t *testing.T) {
	st := &stallingStore{countingStore: newStore(t), entered: make(chan struct{}, 1)}
	publish(t, st.countingStore, "p", "1.0.0", map[string]string{"a.js": "x"})
	s, err := New(st, DefaultOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	searched := make(chan error, 1)
	go func() { _, err := s.Search(ctx, "p", "1.0.0", index.Query{Pattern: "x"}); searched <- err }()
	<-st.entered
	cancel()
	if err := <-searched; !errors.Is(err, context.Canceled) {
		t.Fatalf("Search after its caller gave up: %v", err)
	}
	if st.returned.Load() {
		t.Fatal("the build stopped with its caller; it must run detached")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !st.returned.Load() {
		t.Fatal("Close returned while a build was still reading the store")
	}
	if _, err := s.Search(context.Background(), "p", "1.0.0", index.Query{Pattern: "x"}); !errors.Is(err, errClosed) {
		t.Errorf("Search after Close: %v, want errClosed", err)
	}
}
