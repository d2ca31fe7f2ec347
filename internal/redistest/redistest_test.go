package redistest

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPrefixName(t *testing.T) {
	tests := []struct{ in, prefix string }{
		{"TestFoo", "testfoo_"},
		{"TestCache/ttl moves#01", "testcache_ttl_moves_01_"},
		{"Test*[glob]?", "test_glob_"},
		{strings.Repeat("A", 200), strings.Repeat("a", maxNameBytes) + "_"},
	}
	for _, tt := range tests {
		if got := prefixName(tt.in); !strings.HasPrefix(got, tt.prefix) || strings.ContainsAny(got, "*?[]") {
			t.Errorf("prefixName(%q) = %q, want prefix %q and no glob characters", tt.in, got, tt.prefix)
		}
	}
	if a, b := prefixName("TestX"), prefixName("TestX"); a == b {
		t.Errorf("two runs of one test share the prefix %q", a)
	}
}

func TestPrefixKeysAreDeletedAfterTheTest(t *testing.T) {
	ctx := context.Background()
	var prefix string
	t.Run("inner", func(t *testing.T) {
		prefix = Prefix(t)
		c := Client(t)
		for i := range 3 {
			if err := c.Set(ctx, fmt.Sprintf("%sk%d", prefix, i), "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
	})
	keys, err := Client(t).Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Errorf("keys %q survived their test", keys)
	}
}

// fatalRecorder captures a Fatalf instead of failing the real test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestUnreachableServerFailsWithAHint(t *testing.T) {
	// Port 1 on loopback refuses connections at once.
	t.Setenv(EnvURL, "redis://127.0.0.1:1/0")
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Prefix(rec)
	}()
	<-done
	for _, want := range []string{"Redis is not reachable at", "127.0.0.1:1", EnvURL} {
		if !strings.Contains(rec.msg, want) {
			t.Errorf("message %q lacks %q", rec.msg, want)
		}
	}
}
