package popular

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestShipped(t *testing.T) {
	l, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Packages) < 1000 {
		t.Errorf("the shipped list has %d packages, want at least 1000", len(l.Packages))
	}
	top := l.Top(1000)
	for _, name := range []string{"react", "typescript", "lodash"} {
		if !slices.Contains(top, name) {
			t.Errorf("%s is not in the shipped top 1000", name)
		}
	}
	if strings.Contains(l.Source, "://") {
		t.Errorf("source %q names a host", l.Source)
	}
}

func TestParseRejects(t *testing.T) {
	head := `"source":"s","method":"m","date":"2026-01-01","score":"x"`
	for name, body := range map[string]string{
		"not json":      `[`,
		"unknown field": `{` + head + `,"extra":1,"packages":[]}`,
		"no source":     `{"method":"m","date":"d","score":"x","packages":[]}`,
		"twice":         `{` + head + `,"packages":[{"name":"a","score":2},{"name":"a","score":1}]}`,
		"unsorted":      `{` + head + `,"packages":[{"name":"a","score":1},{"name":"b","score":2}]}`,
		"bad name":      `{` + head + `,"packages":[{"name":"../etc","score":1}]}`,
	} {
		if _, err := Parse([]byte(body)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Parse = %v, want ErrInvalid", name, err)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	l := &List{Source: "/-/v1/search?text=x", Method: "m", Date: "2026-01-02", Score: "s",
		Packages: []Package{{"typescript", 0.99}, {"@types/node", 0.5}, {"ab", 0.5}, {"zed", 0}}}
	b, err := l.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != len(l.Packages)+2 {
		t.Errorf("encoded on %d lines, want the head, one per package, and the close:\n%s", n, b)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if !reflect.DeepEqual(back, l) {
		t.Errorf("round trip: %+v, want %+v", back, l)
	}
}

func TestTop(t *testing.T) {
	l := &List{Packages: []Package{{"a", 3}, {"b", 2}, {"c", 1}}}
	for n, want := range map[int][]string{-1: {}, 0: {}, 2: {"a", "b"}, 9: {"a", "b", "c"}} {
		if got := l.Top(n); !slices.Equal(got, want) {
			t.Errorf("Top(%d) = %q, want %q", n, got, want)
		}
	}
}

// fakeSearch serves /-/v1/search from a fixed ranking per text, paged.
type fakeSearch struct {
	mu       sync.Mutex
	requests []string
	auth     []string
	results  map[string][]Package
}

func (f *fakeSearch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.URL.RawQuery)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	q := r.URL.Query()
	if r.URL.Path != "/-/v1/search" || q.Get("popularity") != "1.0" {
		http.NotFound(w, r)
		return
	}
	all := f.results[q.Get("text")]
	size, _ := strconv.Atoi(q.Get("size"))
	from, _ := strconv.Atoi(q.Get("from"))
	type obj struct {
		Package map[string]string `json:"package"`
		Score   map[string]any    `json:"score"`
	}
	page := struct {
		Objects []obj `json:"objects"`
		Total   int   `json:"total"`
	}{Objects: []obj{}, Total: len(all)}
	for i := from; i < min(from+size, len(all)); i++ {
		page.Objects = append(page.Objects, obj{
			Package: map[string]string{"name": all[i].Name},
			Score:   map[string]any{"final": 1, "detail": map[string]float64{"popularity": all[i].Score}},
		})
	}
	json.NewEncoder(w).Encode(page)
}

func TestSearch(t *testing.T) {
	fake := &fakeSearch{results: map[string][]Package{
		"keywords:a": {{"react", 0.9}, {"lodash", 0.8}, {"left-pad", 0.3}, {"../bad", 0.99}},
		"keywords:b": {{"lodash", 0.85}, {"@types/node", 0.7}},
	}}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	day := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	l, err := Search(t.Context(), srv.Client(), Registry{URL: srv.URL + "/", Auth: func(string) string { return "Bearer t" }},
		SearchOptions{Texts: []string{"keywords:a", "keywords:b"}, PageSize: 2, Size: 3, Now: func() time.Time { return day }})
	if err != nil {
		t.Fatal(err)
	}
	want := []Package{{"react", 0.9}, {"lodash", 0.85}, {"@types/node", 0.7}}
	if !reflect.DeepEqual(l.Packages, want) {
		t.Errorf("packages %+v, want %+v", l.Packages, want)
	}
	if l.Date != "2026-11-30" || !strings.HasPrefix(l.Source, "/-/v1/search?") || strings.Contains(l.Source, "127.0.0.1") {
		t.Errorf("provenance %q %q", l.Date, l.Source)
	}
	if len(fake.requests) != 3 { // a: 2 pages of 2; b: 1 page
		t.Errorf("%d requests %q, want 3", len(fake.requests), fake.requests)
	}
	if fake.auth[0] != "Bearer t" {
		t.Errorf("Authorization %q, want npm's credential for the registry", fake.auth[0])
	}
	if err := l.Validate(); err != nil {
		t.Error(err)
	}
}

func TestSearchUnserved(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	_, err := Search(t.Context(), srv.Client(), Registry{URL: srv.URL + "/"}, SearchOptions{})
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("Search on a registry without search: %v, want an error with its 404", err)
	}
}

func TestFromDownloads(t *testing.T) {
	tsv := "name\tversion\tdownloads_a_month\tsummary\n" +
		"react\t19.0.0\t300\tUI\n" +
		"typescript\t5.0.0\t500\tTS\n" +
		"Bad Name\t1.0.0\t900\t\n" +
		"short\n" +
		"left-pad\t1.3.0\tmany\t\n" +
		"lodash\t4.0.0\t300\t\n"
	l, err := FromDownloads(strings.NewReader(tsv), "index.tsv", "2026-11-30", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []Package{{"typescript", 500}, {"lodash", 300}, {"react", 300}}
	if !reflect.DeepEqual(l.Packages, want) {
		t.Errorf("packages %+v, want %+v", l.Packages, want)
	}
	if _, err := FromDownloads(strings.NewReader("a\tb\n"), "x", "d", 10); err == nil {
		t.Error("a file without the columns was accepted")
	}
}

// FuzzParse checks that Parse never panics and that what it accepts
// encodes and parses back to the same list.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"source":"s","method":"m","date":"d","score":"x","packages":[{"name":"a","score":1}]}`))
	f.Add([]byte(`{"source":"s","method":"m","date":"d","score":"x","packages":[{"name":"@s/a","score":-1e300}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := Parse(b)
		if err != nil {
			return
		}
		enc, err := l.Encode()
		if err != nil {
			t.Fatalf("accepted list does not encode: %v", err)
		}
		back, err := Parse(enc)
		if err != nil || !reflect.DeepEqual(back, l) {
			t.Fatalf("round trip: %+v, %v; want %+v", back, err, l)
		}
	})
}
