package warm

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/store"
)

func TestParseSpecArg(t *testing.T) {
	for _, tc := range []struct{ in, name, spec string }{
		{"react", "react", ""},
		{"react@19", "react", "19"},
		{"react@", "react", ""},
		{"@types/react", "@types/react", ""},
		{"@types/react@^19.1", "@types/react", "^19.1"},
		{"lucide-react@latest", "lucide-react", "latest"},
		{"left@npm:left-pad@^1.3.0", "left-pad", "^1.3.0"},
		{"x@npm:@scope/y@2", "@scope/y", "2"},
		{"@", "@", ""},
		{"", "", ""},
	} {
		if got := ParseSpecArg(tc.in); got.Name != tc.name || got.Spec != tc.spec || got.Skip != "" {
			t.Errorf("ParseSpecArg(%q) = %+v, want %q @ %q", tc.in, got, tc.name, tc.spec)
		}
	}
}

// FuzzParseSpecArg checks that ParseSpecArg never panics and, for input
// that is not an alias, loses nothing: name@spec is the input.
func FuzzParseSpecArg(f *testing.F) {
	for _, s := range []string{"react", "@types/react@^19", "a@npm:b@1", "@", "@@", "x@y@z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		w := ParseSpecArg(in)
		if strings.Contains(in, "@npm:") {
			return
		}
		joined := w.Name
		if w.Name != in { // split at an "@"
			joined += "@" + w.Spec
		}
		if joined != in {
			t.Errorf("ParseSpecArg(%q) = %+v, which joins to %q", in, w, joined)
		}
	})
}

func TestRetryPolicy(t *testing.T) {
	p := &retryPolicy{base: time.Second, max: 10 * time.Second}
	for _, tc := range []struct {
		attempt int
		want    time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {4, 8 * time.Second}, {5, 10 * time.Second}, {60, 10 * time.Second}} {
		before := time.Now()
		got := p.NextRetry(&rivertype.JobRow{Attempt: tc.attempt}).Sub(before)
		if got < tc.want || got > tc.want+tc.want/10+50*time.Millisecond {
			t.Errorf("attempt %d: retry in %s, want %s plus at most 10%% jitter", tc.attempt, got, tc.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for name, tweak := range map[string]func(*Config){
		"workers":         func(c *Config) { c.Workers = 0 },
		"max-attempts":    func(c *Config) { c.MaxAttempts = -1 },
		"retry-base":      func(c *Config) { c.RetryBase = time.Hour },
		"poll-interval":   func(c *Config) { c.PollInterval = 0 },
		"rescue-margin":   func(c *Config) { c.RescueMargin = 0 },
		"queue":           func(c *Config) { c.Queue = "" },
		"workers (10000)": func(c *Config) { c.Workers = 20_000 },
	} {
		c := DefaultConfig()
		tweak(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), strings.Fields(name)[0]) {
			t.Errorf("%s: %v, want an error naming it", name, err)
		}
	}
}

// TestCleanup checks that the periodic cleanup deletes requests past
// RequestRetention and keeps the others.
func TestCleanup(t *testing.T) {
	for _, kind := range backends {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			reg := fakeregistry.New(t)
			w := newWorker(t, reg, newLocation(t, kind).open(t), testConfig(), nil)
			keep, err := w.q.Submit(t.Context(), "new", specs("alpha@git+ssh://x"))
			if err != nil {
				t.Fatal(err)
			}
			old, err := w.q.Submit(t.Context(), "old", specs("alpha@git+ssh://x"))
			if err != nil {
				t.Fatal(err)
			}
			stale := time.Now().Add(-w.q.cfg.RequestRetention - time.Minute)
			if _, err := w.q.db.exec(t.Context(), `UPDATE warm_requests SET created_at = ? WHERE id = ?`, w.q.db.at(stale), old); err != nil {
				t.Fatal(err)
			}
			if err := (&cleanupWorker{q: w.q}).Work(t.Context(), &river.Job[cleanupArgs]{}); err != nil {
				t.Fatal(err)
			}
			if _, err := w.q.Progress(t.Context(), old); err == nil {
				t.Error("the old request survived the cleanup")
			}
			if p, err := w.q.Progress(t.Context(), keep); err != nil || p.Failed != 1 {
				t.Errorf("the new request: %+v, %v", p, err)
			}
		})
	}
}

// TestOnMiss fails a mirror's fill with a 503: the miss leaves a job that
// a worker completes once the registry recovers. A version that does not
// exist leaves none.
func TestOnMiss(t *testing.T) {
	t.Parallel()
	reg := fakeregistry.New(t)
	publish(t, reg, "later", "1.0.0")
	reg.Fail("later", http.StatusServiceUnavailable, "")
	w := newWorker(t, reg, newLocation(t, sqliteBackend).open(t), testConfig(), nil)
	mirror := OnMiss(w.q.deps.Fill, w.q, nil)
	if err := mirror.Fill(t.Context(), "later", "1.0.0"); err == nil {
		t.Fatal("the fill succeeded against a failing registry")
	}
	reg.Fail("later", 0, "")
	if err := mirror.Fill(t.Context(), "later", "9.9.9"); err == nil {
		t.Fatal("the fill of a missing version succeeded")
	}
	completed := subscribe(t, w.q, river.EventKindJobCompleted)
	w.start()
	var a Args
	for ev := range completed {
		if jsonArgs(ev.Job, &a) == nil && a.Name == "later" {
			break
		}
	}
	if a.Version != "1.0.0" {
		t.Errorf("job for %+v, want later@1.0.0", a)
	}
	if v, err := w.st.Version(t.Context(), "later", "1.0.0"); err != nil || v.State != store.StateReady {
		t.Errorf("after the job: %+v, %v", v, err)
	}
	res, err := w.q.rc.JobList(t.Context(), river.NewJobListParams().Kinds(JobKind).First(10))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Jobs) != 1 {
		t.Errorf("%d jobs, want 1 (none for the missing version)", len(res.Jobs))
	}
}

// TestOnMissLeavesNoJobWhenBusy: a miss refused because every fill slot
// and waiter's room was taken (fill.ErrBusy) leaves no job: its caller
// retries, and a stampede of refusals must not fill the queue.
func TestOnMissLeavesNoJobWhenBusy(t *testing.T) {
	t.Parallel()
	reg := fakeregistry.New(t)
	publish(t, reg, "held", "1.0.0")
	publish(t, reg, "busy", "1.0.0")
	w := newWorker(t, reg, newLocation(t, sqliteBackend).open(t), testConfig(), nil)
	mirror := OnMiss(fill.New(w.st, w.up, fill.Options{Timeout: time.Minute, Ingest: ingest.DefaultLimits(), Slots: fill.NewSlots(1, 0)}), w.q, nil)
	arrived := reg.Arrived("held")
	release := reg.Hold("held")
	defer release()
	held := make(chan error, 1)
	go func() { held <- mirror.Fill(t.Context(), "held", "1.0.0") }()
	<-arrived // held@1.0.0 takes the only slot
	if err := mirror.Fill(t.Context(), "busy", "1.0.0"); !errors.Is(err, fill.ErrBusy) {
		t.Fatalf("a second version with no slot and no room to wait: %v, want fill.ErrBusy", err)
	}
	release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	res, err := w.q.rc.JobList(t.Context(), river.NewJobListParams().Kinds(JobKind).First(10))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Jobs) != 0 {
		t.Errorf("%d jobs after a refused miss, want none", len(res.Jobs))
	}
}

func TestEnqueueValidates(t *testing.T) {
	t.Parallel()
	w := newWorker(t, fakeregistry.New(t), newLocation(t, sqliteBackend).open(t), testConfig(), nil)
	for _, nv := range [][2]string{{"Bad Name", "1.0.0"}, {"ok", "^1"}, {"ok", "latest"}, {"ok", "git+ssh://x"}} {
		if err := w.q.Enqueue(t.Context(), nv[0], nv[1]); err == nil {
			t.Errorf("Enqueue(%q, %q) accepted", nv[0], nv[1])
		}
	}
	if err := w.q.Enqueue(t.Context(), "ok", "1.0.0"); err != nil {
		t.Error(err)
	}
}
