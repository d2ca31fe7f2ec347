package upstream

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// TestTimesReadsTheFullPackument: the dates come from the full document's
// "time", one request per name within PackumentTTL, and the abbreviated
// packument is still what Packument asks for.
func TestTimesReadsTheFullPackument(t *testing.T) {
	e := newEnv(t, Config{})
	at := time.Date(2024, 3, 9, 10, 11, 12, 0, time.UTC)
	e.reg.Publish("p", "1.0.0", tgz(t), fakeregistry.PublishedAt(at))
	e.reg.Publish("p", "1.1.0-rc.1", tgz(t), fakeregistry.PublishedAt(at.Add(24*time.Hour)))
	got, err := e.c.Times(t.Context(), "p")
	if err != nil {
		t.Fatal(err)
	}
	if got.TooLarge || len(got.Versions) != 2 || !got.Versions["1.0.0"].Equal(at) || !got.Versions["1.1.0-rc.1"].Equal(at.Add(24*time.Hour)) {
		t.Fatalf("Times = %+v", got)
	}
	if _, err := e.c.Times(t.Context(), "p"); err != nil || e.reg.PackumentRequests("p") != 1 {
		t.Errorf("second call: %v, %d requests, want 1 (cached)", err, e.reg.PackumentRequests("p"))
	}
	e.clock.Advance(DefaultConfig().PackumentTTL)
	if _, err := e.c.Times(t.Context(), "p"); err != nil || e.reg.PackumentRequests("p") != 2 {
		t.Errorf("after the TTL: %v, %d requests, want 2", err, e.reg.PackumentRequests("p"))
	}
}

// TestTimesKeepsOnlySemverKeys: "created", "modified", junk keys and
// values that are not times are dropped; "time" may come after a large
// nested "versions" and the rest of the document is never needed.
func TestTimesKeepsOnlySemverKeys(t *testing.T) {
	e := newEnv(t, Config{})
	e.reg.SetRawPackument("p", []byte(`{"name":"p","versions":{"1.0.0":{"a":[1,{"b":[]}],"c":null}},
		"time":{"created":"2020-01-01T00:00:00Z","modified":"2021-01-01T00:00:00Z","1.0.0":"2020-01-02T03:04:05.678Z",
		"not-a-version":"2020-01-01T00:00:00Z","2.0.0":"yesterday","3.0.0":{"x":1},"v4.0.0":"2022-02-02T00:00:00Z"},
		"readme":"`+strings.Repeat("x", 1000)+`"`)) // cut short: never read
	got, err := e.c.Times(t.Context(), "p")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Versions) != 2 || got.Versions["1.0.0"].Format(time.DateOnly) != "2020-01-02" || got.Versions["v4.0.0"].IsZero() {
		t.Errorf("Times = %+v, want 1.0.0 and v4.0.0 (semver.valid allows the v)", got.Versions)
	}
}

// TestTimesOverTheCap: a packument whose "time" ends past
// MaxPackumentTimesBytes answers TooLarge, cached like a result, and does
// not count against the registry host's breaker.
func TestTimesOverTheCap(t *testing.T) {
	e := newEnv(t, Config{MaxPackumentTimesBytes: 512, BreakerFailures: 1})
	e.reg.SetRawPackument("big", []byte(`{"name":"big","versions":{"1.0.0":{"readme":"`+strings.Repeat("x", 600)+`"}},"time":{"1.0.0":"2020-01-02T03:04:05Z"}}`))
	for range 2 {
		got, err := e.c.Times(t.Context(), "big")
		if err != nil || !got.TooLarge || len(got.Versions) != 0 {
			t.Fatalf("Times = %+v, %v; want TooLarge", got, err)
		}
	}
	if n := e.reg.PackumentRequests("big"); n != 1 {
		t.Errorf("%d requests, want 1 (TooLarge is cached)", n)
	}
	e.reg.Publish("small", "1.0.0", tgz(t))
	if _, err := e.c.Times(t.Context(), "small"); err != nil {
		t.Errorf("after an over-cap document the breaker refused: %v", err)
	}
}

// TestTimesFailureIsNotCached: a registry failure is an
// *unavailable.Error, and the next call asks again.
func TestTimesFailureIsNotCached(t *testing.T) {
	e := newEnv(t, Config{})
	e.reg.Publish("p", "1.0.0", tgz(t))
	e.reg.Fail("p", http.StatusBadGateway, "")
	var ue *unavailable.Error
	if _, err := e.c.Times(t.Context(), "p"); !errors.As(err, &ue) {
		t.Fatalf("Times = %v, want *unavailable.Error", err)
	}
	if _, err := e.c.Times(t.Context(), "p"); err == nil || e.reg.PackumentRequests("p") != 2 {
		t.Errorf("second call: %v after %d requests, want a new request", err, e.reg.PackumentRequests("p"))
	}
	if _, err := e.c.Times(t.Context(), "Bad Name"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Times(bad name) = %v", err)
	}
}
