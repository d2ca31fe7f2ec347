package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/semver"
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
// MaxPackumentTimesBytes answers TooLarge, cached like a result; neither
// it nor a cut document counts against the registry host's breaker, which
// installs and fills share.
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
	e.reg.SetRawPackument("cut", []byte(`{"name":"cut","versions":{"1.0.0":{`))
	if _, err := e.c.Times(t.Context(), "cut"); err == nil {
		t.Error("Times of a cut document: no error")
	}
	e.reg.Publish("small", "1.0.0", tgz(t))
	if _, err := e.c.Times(t.Context(), "small"); err != nil {
		t.Errorf("after an over-cap and a cut document the breaker refused: %v", err)
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

// FuzzReadTimes: any body gives dates for valid semver keys only, or an
// error, and never panics.
func FuzzReadTimes(f *testing.F) {
	for _, s := range []string{
		`{"name":"p","time":{"1.0.0":"2020-01-02T03:04:05.678Z","created":"2020-01-01T00:00:00Z"}}`,
		`{"versions":{"1.0.0":{"a":[{"b":[1,2,{"c":null}]}]}},"time":{"1.0.0":"2020-01-02T03:04:05Z"}}`,
		`{"time":null}`, `{"time":[1,2]}`, `{"time":{"1.0.0":{"a":[1]}}}`, `{"time":{"x":1}}`,
		`[]`, `null`, `{`, `{"time":{"1.0.0":`, `{"a":]`, `{"time":{"1.0.0":"2020-01-02T03:04:05Z"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		vs, err := readTimes(bytes.NewReader(b))
		if err != nil && vs != nil {
			t.Fatalf("readTimes(%q) = %v and an error %v", b, vs, err)
		}
		for v, at := range vs {
			if !semver.Valid(v) || at.IsZero() {
				t.Fatalf("readTimes(%q) kept %q: %v", b, v, at)
			}
		}
	})
}

// BenchmarkReadTimes reads the dates of a synthetic next-sized full
// packument (3,000 versions of 5 KB manifests before "time", 15 MB)
// beside decoding it whole, the anchor: compare B/op.
func BenchmarkReadTimes(b *testing.B) {
	var doc bytes.Buffer
	doc.WriteString(`{"name":"p","versions":{`)
	manifest := `{"readme":"` + strings.Repeat("x", 5000) + `","scripts":{"a":"b"},"files":["a","b"]}`
	for i := range 3000 {
		if i > 0 {
			doc.WriteByte(',')
		}
		fmt.Fprintf(&doc, `"1.0.%d":%s`, i, manifest)
	}
	doc.WriteString(`},"time":{`)
	for i := range 3000 {
		if i > 0 {
			doc.WriteByte(',')
		}
		fmt.Fprintf(&doc, `"1.0.%d":"2020-01-02T03:04:05.678Z"`, i)
	}
	doc.WriteString(`}}`)
	body := doc.Bytes()
	b.Run("stream", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if vs, err := readTimes(bytes.NewReader(body)); err != nil || len(vs) != 3000 {
				b.Fatal(len(vs), err)
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var v struct {
				Versions map[string]any    `json:"versions"`
				Time     map[string]string `json:"time"`
			}
			if err := json.NewDecoder(bytes.NewReader(body)).Decode(&v); err != nil || len(v.Time) != 3000 {
				b.Fatal(err)
			}
		}
	})
}
