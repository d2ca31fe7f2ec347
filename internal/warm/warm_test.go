package warm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/store"
)

// TestWarmSpecs warms ranges, tags and exact versions, and reports what
// cannot be warmed without stopping the rest.
func TestWarmSpecs(t *testing.T) {
	for _, kind := range backends {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			reg := fakeregistry.New(t)
			publish(t, reg, "alpha", "1.0.0")
			publish(t, reg, "alpha", "1.1.0")
			publish(t, reg, "alpha", "2.0.0-rc.1")
			publish(t, reg, "@scope/beta", "2.0.0")
			publish(t, reg, "gamma", "3.0.0")
			w := newWorker(t, reg, newLocation(t, kind).open(t), testConfig(), nil)
			w.start()

			p := w.warm(specs("alpha@^1", "@scope/beta@2.0.0", "@scope/beta@2.0.0", "gamma",
				"missing@1.0.0", "alpha@^9", "alpha@git+ssh://x")...)
			if !p.Finished || p.Total != 6 || p.Done != 3 || p.Failed != 3 {
				t.Fatalf("progress %+v, want 6 items: 3 done, 3 failed", p)
			}
			for name, version := range map[string]string{"alpha": "1.1.0", "@scope/beta": "2.0.0", "gamma": "3.0.0"} {
				it := item(t, p, name)
				if it.State != Done || it.Version != version || it.Bytes == 0 {
					t.Errorf("%s: %+v, want done at %s with its size", name, it, version)
				}
				if v, err := w.st.Version(t.Context(), name, version); err != nil || v.State != store.StateReady {
					t.Errorf("%s@%s in the store: %+v, %v", name, version, v, err)
				}
			}
			for _, f := range p.Items[3:] {
				if f.State != Failed || f.Reason == "" {
					t.Errorf("%s@%s: %+v, want failed with a reason", f.Name, f.Spec, f)
				}
			}
			if r := item(t, p, "missing").Reason; !strings.Contains(r, "not found") {
				t.Errorf("missing package's reason %q does not say it was not found", r)
			}
			if got := reg.TarballDownloads("@scope/beta", "2.0.0"); got != 1 {
				t.Errorf("@scope/beta@2.0.0 downloaded %d times, want 1 (asked for twice)", got)
			}
			// A permanent failure is not retried.
			if got := reg.PackumentRequests("missing"); got != 1 {
				t.Errorf("missing package's packument requested %d times, want 1", got)
			}
		})
	}
}

// TestPresentCostsOneLookup checks that warming a stored version asks the
// registry nothing.
func TestPresentCostsOneLookup(t *testing.T) {
	for _, kind := range backends {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			reg := fakeregistry.New(t)
			publish(t, reg, "delta", "1.0.0")
			publish(t, reg, "delta", "2.0.0")
			w := newWorker(t, reg, newLocation(t, kind).open(t), testConfig(), nil)
			w.start()
			if p := w.warm(specs("delta@1.0.0")...); p.Done != 1 {
				t.Fatalf("first warm: %+v", p)
			}
			packuments := reg.PackumentRequests("delta")

			// Submitted straight as present: no job at all.
			id, err := w.q.Submit(t.Context(), "again", specs("delta@1.0.0"))
			if err != nil {
				t.Fatal(err)
			}
			p, err := w.q.Progress(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if it := p.Items[0]; !p.Finished || it.State != Present || it.Bytes == 0 {
				t.Errorf("second warm: %+v, want present at once with its size", p)
			}
			// A job for a version the mirror stored itself (as its miss
			// hook enqueues) looks it up and stops there.
			if err := w.q.deps.Fill.Fill(t.Context(), "delta", "2.0.0"); err != nil {
				t.Fatal(err)
			}
			packuments = reg.PackumentRequests("delta")
			completed := subscribe(t, w.q, river.EventKindJobCompleted)
			if err := w.q.Enqueue(t.Context(), "delta", "2.0.0"); err != nil {
				t.Fatal(err)
			}
			// Events of the first warm may still arrive: wait for this job's.
			ev := <-completed
			for a := (Args{}); jsonArgs(ev.Job, &a) == nil && a.Version != "2.0.0"; {
				ev = <-completed
			}
			var out Outcome
			if err := json.Unmarshal(ev.Job.Output(), &out); err != nil || out.State != Present || out.Version != "2.0.0" {
				t.Errorf("job output %s (%v), want present at 2.0.0", ev.Job.Output(), err)
			}
			if got := reg.PackumentRequests("delta"); got != packuments {
				t.Errorf("packument requests went from %d to %d for a stored version", packuments, got)
			}
			if got := reg.TarballDownloads("delta", "1.0.0") + reg.TarballDownloads("delta", "2.0.0"); got != 2 {
				t.Errorf("%d downloads, want 2 (one per version)", got)
			}
		})
	}
}

// TestRetryThenReport checks that a package the registry keeps failing is
// tried MaxAttempts times and then reported with the registry's answer,
// and that one failing only once is warmed on its retry.
func TestRetryThenReport(t *testing.T) {
	for _, kind := range backends {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			reg := fakeregistry.New(t)
			publish(t, reg, "broken", "1.0.0")
			publish(t, reg, "flaky", "1.0.0")
			reg.Fail("broken", http.StatusInternalServerError, "")
			reg.Fail("flaky", http.StatusBadGateway, "")
			cfg := testConfig()
			w := newWorker(t, reg, newLocation(t, kind).open(t), cfg, nil)

			// flaky recovers after its first failed attempt.
			failed := subscribe(t, w.q, river.EventKindJobFailed)
			var once sync.Once
			go func() {
				for ev := range failed {
					var a Args
					if err := jsonArgs(ev.Job, &a); err == nil && a.Name == "flaky" {
						once.Do(func() { reg.Fail("flaky", 0, "") })
					}
				}
			}()
			w.start()
			p := w.warm(specs("broken@1.0.0", "flaky@1.0.0")...)

			b := item(t, p, "broken")
			if b.State != Failed || !strings.Contains(b.Reason, "500") || !strings.Contains(b.Reason, "after 3 attempts") {
				t.Errorf("broken: %+v, want failed after 3 attempts with the registry's 500", b)
			}
			if got := reg.PackumentRequests("broken"); got != cfg.MaxAttempts {
				t.Errorf("broken's packument requested %d times, want MaxAttempts = %d", got, cfg.MaxAttempts)
			}
			if f := item(t, p, "flaky"); f.State != Done {
				t.Errorf("flaky: %+v, want done on its retry", f)
			}
		})
	}
}

// TestSnoozeOn429 checks that a 429 waits for Retry-After without spending
// an attempt.
func TestSnoozeOn429(t *testing.T) {
	t.Parallel()
	reg := fakeregistry.New(t)
	publish(t, reg, "busy", "1.0.0")
	reg.Fail("busy", http.StatusTooManyRequests, "1")
	w := newWorker(t, reg, newLocation(t, sqliteBackend).open(t), testConfig(), nil)
	snoozed := subscribe(t, w.q, river.EventKindJobSnoozed)
	completed := subscribe(t, w.q, river.EventKindJobCompleted)
	w.start()
	if err := w.q.Enqueue(t.Context(), "busy", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-snoozed:
	case <-t.Context().Done():
		t.Fatal("no snooze")
	}
	reg.Fail("busy", 0, "")
	var job *rivertype.JobRow
	for job == nil {
		ev := <-completed
		var a Args
		if err := jsonArgs(ev.Job, &a); err == nil && a.Name == "busy" {
			job = ev.Job
		}
	}
	if job.Attempt != 1 {
		t.Errorf("job finished on attempt %d, want 1: a snooze spends no attempt", job.Attempt)
	}
	// An exact version's metadata is its manifest (the packument only
	// where the registry does not serve it).
	if got := reg.VersionRequests("busy", "1.0.0") + reg.PackumentRequests("busy"); got != 2 {
		t.Errorf("version metadata requested %d times, want 2 (the 429, then the retry)", got)
	}
}

// TestKillMidIngest kills a worker while its job downloads the tarball:
// nothing of the version becomes visible, and the job completes when a new
// worker starts.
func TestKillMidIngest(t *testing.T) {
	for _, kind := range backends {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			reg := fakeregistry.New(t)
			publish(t, reg, "slow", "1.0.0")
			loc := newLocation(t, kind)

			// Worker A: its store is its own connection, closed on "kill",
			// as a dead process's would be.
			stA, killStore := loc.openClosable(t)
			downloading := make(chan struct{})
			var once sync.Once
			a := newWorker(t, reg, stA, testConfig(), func(rt http.RoundTripper) http.RoundTripper {
				return roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if strings.HasSuffix(r.URL.Path, ".tgz") {
						once.Do(func() { close(downloading) })
					}
					return rt.RoundTrip(r)
				})
			})
			// Read the packument first, so the job goes straight to the
			// tarball, where the registry holds it.
			if _, err := a.up.Packument(t.Context(), "slow"); err != nil {
				t.Fatal(err)
			}
			release := reg.Hold("slow")
			if err := a.q.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			id, err := a.q.Submit(t.Context(), "kill", specs("slow@1.0.0"))
			if err != nil {
				t.Fatal(err)
			}
			<-downloading
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if err := a.q.rc.StopAndCancel(ctx); err != nil {
				t.Fatal(err)
			}
			a.q.Close()
			killStore()

			stB := loc.open(t)
			if _, err := stB.Version(t.Context(), "slow", "1.0.0"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("after the kill the store has slow@1.0.0 (%v), want nothing", err)
			}
			// The killed worker's download resumes into a closed store and
			// fails; the new worker's completes.
			release()
			b := newWorker(t, reg, stB, testConfig(), nil)
			b.start()
			p := b.wait(id)
			if it := p.Items[0]; it.State != Done {
				t.Fatalf("after restart: %+v, want done", it)
			}
			files, err := stB.Files(t.Context(), "slow", "1.0.0")
			if err != nil || len(files) != 2 {
				t.Errorf("files of slow@1.0.0: %d, %v; want 2", len(files), err)
			}
		})
	}
}

// TestTwoWorkersOneIngest has two workers (two processes' worth: separate
// River clients, registry clients and fill chains) asked for the same
// version at once: one job, one download.
func TestTwoWorkersOneIngest(t *testing.T) {
	for _, kind := range backends {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			reg := fakeregistry.New(t)
			publish(t, reg, "shared", "1.0.0")
			loc := newLocation(t, kind)
			st1, st2 := loc.open(t), loc.open(t)
			w1 := newWorker(t, reg, st1, testConfig(), nil)
			w2 := newWorker(t, reg, st2, testConfig(), nil)
			release := reg.Hold("shared")
			w1.start()
			w2.start()
			id1, err := w1.q.Submit(t.Context(), "one", specs("shared@1.0.0"))
			if err != nil {
				t.Fatal(err)
			}
			id2, err := w2.q.Submit(t.Context(), "two", specs("shared@1.0.0"))
			if err != nil {
				t.Fatal(err)
			}
			release()
			p1, p2 := w1.wait(id1), w2.wait(id2)
			if p1.Items[0].State != Done || p2.Items[0].State != Done {
				t.Errorf("items %+v and %+v, want both done", p1.Items[0], p2.Items[0])
			}
			if got := reg.TarballDownloads("shared", "1.0.0"); got != 1 {
				t.Errorf("shared@1.0.0 downloaded %d times by two workers, want 1", got)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

// jsonArgs decodes a job's args.
func jsonArgs(job *rivertype.JobRow, a *Args) error { return json.Unmarshal(job.EncodedArgs, a) }

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// subscribe subscribes to kinds on q's client; the subscription ends with
// the test.
func subscribe(t *testing.T, q *Queue, kinds ...river.EventKind) <-chan *river.Event {
	ch, cancel := q.rc.Subscribe(kinds...)
	t.Cleanup(cancel)
	return ch
}
