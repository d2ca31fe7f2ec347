package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/store"
)

// testSession: a session reads back as put; a second put of the same hash
// is ErrExists; touching moves SeenAt forward only; deleting twice is
// safe; pruning removes the sessions past either bound and keeps the
// others.
func testSession(t *testing.T, s store.Store) {
	ctx := context.Background()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	hash := func(c string) string { return strings.Repeat(c, 64) }
	if _, err := s.Session(ctx, hash("a")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Session of an unknown hash: %v, want ErrNotFound", err)
	}
	put := func(h string, created, seen time.Time) {
		t.Helper()
		if err := s.PutSession(ctx, store.Session{Hash: h, TokenID: "0123456789abcdef", CreatedAt: created, SeenAt: seen}); err != nil {
			t.Fatalf("PutSession: %v", err)
		}
	}
	put(hash("a"), base, base)
	if err := s.PutSession(ctx, store.Session{Hash: hash("a"), TokenID: "other", CreatedAt: base, SeenAt: base}); !errors.Is(err, store.ErrExists) {
		t.Errorf("second PutSession of one hash: %v, want ErrExists", err)
	}
	got, err := s.Session(ctx, hash("a"))
	if err != nil || got.TokenID != "0123456789abcdef" || !got.CreatedAt.Equal(base) || !got.SeenAt.Equal(base) {
		t.Fatalf("Session = %+v, %v; want token 0123456789abcdef created and seen at %v", got, err, base)
	}
	later := base.Add(time.Hour)
	if err := s.TouchSession(ctx, hash("a"), later); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchSession(ctx, hash("a"), base.Add(time.Minute)); err != nil { // an older touch, arriving late
		t.Fatal(err)
	}
	if got, err := s.Session(ctx, hash("a")); err != nil || !got.SeenAt.Equal(later) || !got.CreatedAt.Equal(base) {
		t.Errorf("after touches: %+v, %v; want seen at %v", got, err, later)
	}
	if err := s.TouchSession(ctx, hash("f"), later); err != nil {
		t.Errorf("TouchSession of an unknown hash: %v, want nil", err)
	}
	for range 2 {
		if err := s.DeleteSession(ctx, hash("a")); err != nil {
			t.Fatalf("DeleteSession: %v", err)
		}
	}
	if _, err := s.Session(ctx, hash("a")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Session after DeleteSession: %v, want ErrNotFound", err)
	}
	// b: too old; c: idle too long; d: within both bounds.
	put(hash("b"), base.Add(-48*time.Hour), base)
	put(hash("c"), base, base.Add(-2*time.Hour))
	put(hash("d"), base, base)
	n, err := s.PruneSessions(ctx, base.Add(-24*time.Hour), base.Add(-time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("PruneSessions = %d, %v; want 2", n, err)
	}
	for c, want := range map[string]bool{"b": false, "c": false, "d": true} {
		if _, err := s.Session(ctx, hash(c)); (err == nil) != want {
			t.Errorf("session %s after pruning: %v, want kept %v", c, err, want)
		}
	}
}
