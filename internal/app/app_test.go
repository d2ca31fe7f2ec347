package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// mirror is a running mirror against a fake registry, on one store kind.
type mirror struct {
	t   testing.TB
	reg *fakeregistry.Registry
	srv *httptest.Server
	app *App
}

type storeKind string

const (
	embedded storeKind = "embedded"
	pg       storeKind = "postgres"
)

func newMirror(t testing.TB, kind storeKind, tweak ...func(*config.Config)) *mirror {
	t.Helper()
	return newMirrorLogging(t, kind, slog.New(slog.DiscardHandler), tweak...)
}

// newMirrorLogging is newMirror logging to log.
func newMirrorLogging(t testing.TB, kind storeKind, log *slog.Logger, tweak ...func(*config.Config)) *mirror {
	t.Helper()
	reg := fakeregistry.New(t)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.ProjectDir = t.TempDir()
	if kind == pg {
		cfg.DatabaseURL = pgtest.URL(t)
	}
	for _, f := range tweak {
		f(&cfg)
	}
	env := reg.Env()
	a, err := New(t.Context(), cfg, log, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		srv.Close()
		a.Close()
	})
	return &mirror{t: t, reg: reg, srv: srv, app: a}
}

// explore posts body to /v1/explore and decodes the answer into out (when
// not nil), returning the status and the raw body.
func (m *mirror) explore(body string, out any) (int, []byte) {
	m.t.Helper()
	resp, err := http.Post(m.srv.URL+"/v1/explore", "application/json", strings.NewReader(body))
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, out); err != nil {
			m.t.Fatalf("decoding %s: %v", b, err)
		}
	}
	return resp.StatusCode, b
}

func (m *mirror) get(path string) (*http.Response, []byte) {
	m.t.Helper()
	resp, err := http.Get(m.srv.URL + path)
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

type listResult struct {
	PackageName string `json:"packageName"`
	Version     string `json:"version"`
	TotalFiles  int    `json:"totalFiles"`
	Entries     []struct {
		Path string `json:"path"`
		Type string `json:"type"`
	} `json:"entries"`
}

// files are the paths of the file entries.
func (l listResult) files() []string {
	var out []string
	for _, e := range l.Entries {
		if e.Type == "file" {
			out = append(out, e.Path)
		}
	}
	return out
}

type readResult struct {
	Content     string `json:"content"`
	StartLine   int    `json:"startLine"`
	EndLine     int    `json:"endLine"`
	TotalLines  int    `json:"totalLines"`
	Truncated   bool   `json:"truncated"`
	TruncatedBy string `json:"truncatedBy"`
	LinesCut    int    `json:"linesCut"`
	Binary      bool   `json:"binary"`
	Size        int64  `json:"size"`
	Column      int    `json:"column"`
	NextColumn  int    `json:"nextColumn"`
	LineBytes   int    `json:"lineBytes"`
}

func forEachStore(t *testing.T, f func(t *testing.T, kind storeKind)) {
	for _, kind := range []storeKind{embedded, pg} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			f(t, kind)
		})
	}
}

func TestListResolvesRangesAndTags(t *testing.T) {
	forEachStore(t, func(t *testing.T, kind storeKind) {
		m := newMirror(t, kind)
		for _, v := range []string{"1.0.0", "1.2.0", "1.3.0-beta.1", "2.0.0"} {
			m.reg.Publish("icons", v, tarballtest.Package(t, map[string]string{
				"package.json": `{"name":"icons","version":"` + v + `"}`,
				"dist/v.txt":   v,
			}))
		}
		m.reg.SetDistTag("icons", "latest", "1.2.0")
		m.reg.SetDistTag("icons", "next", "1.3.0-beta.1")
		cases := []struct{ spec, want string }{
			{"", "1.2.0"},       // omitted: latest
			{"latest", "1.2.0"}, // tag
			{"next", "1.3.0-beta.1"},
			{"^1.0.0", "1.2.0"}, // latest preferred when it satisfies
			{"^2", "2.0.0"},     // latest does not satisfy: highest that does
			{"1.0.0", "1.0.0"},  // exact
			{">=1 <2", "1.2.0"}, // prerelease excluded from a plain range
			{"1.0.0 - 1.1.0", "1.0.0"},
		}
		for _, tc := range cases {
			var res listResult
			status, body := m.explore(fmt.Sprintf(`{"action":"list","packageName":"icons","version":%q}`, tc.spec), &res)
			if status != http.StatusOK || res.Version != tc.want {
				t.Errorf("list icons@%q = %d %s, want version %s", tc.spec, status, body, tc.want)
				continue
			}
			if strings.Join(res.files(), ",") != "dist/v.txt,package.json" {
				t.Errorf("files = %q", res.files())
			}
		}
	})
}

func TestScopedPackageWithOwnTopFolder(t *testing.T) {
	forEachStore(t, func(t *testing.T, kind storeKind) {
		m := newMirror(t, kind)
		m.reg.Publish("@types/react", "19.1.0", tarballtest.PackageUnder(t, "react", map[string]string{
			"index.d.ts":   "export {};\ndeclare const x: 1;\n",
			"package.json": "{}",
			"README.md":    "# types",
		}))
		var res listResult
		if status, body := m.explore(`{"action":"list","packageName":"@types/react","version":"19"}`, &res); status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		if got := strings.Join(res.files(), ","); got != "README.md,index.d.ts,package.json" {
			t.Fatalf("files = %s (byte order, top folder stripped)", got)
		}
		resp, body := m.get("/v1/npm/@types/react@19/index.d.ts")
		if resp.StatusCode != 200 || string(body) != "export {};\ndeclare const x: 1;\n" {
			t.Fatalf("raw GET = %d %q", resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
			t.Errorf("Content-Type = %q", ct)
		}
		if v := resp.Header.Get("X-Pkgscope-Version"); v != "19.1.0" {
			t.Errorf("X-Pkgscope-Version = %q", v)
		}
		// An exact version's URL names the version: no header repeats it,
		// unless the URL spells it otherwise.
		resp, body = m.get("/v1/npm/@types/react@19.1.0/index.d.ts")
		if _, ok := resp.Header["X-Pkgscope-Version"]; resp.StatusCode != 200 || ok || string(body) != "export {};\ndeclare const x: 1;\n" {
			t.Errorf("exact raw GET = %d %q, X-Pkgscope-Version %q", resp.StatusCode, body, resp.Header.Get("X-Pkgscope-Version"))
		}
		resp, _ = m.get("/v1/npm/@types/react@v19.1.0/index.d.ts")
		if v := resp.Header.Get("X-Pkgscope-Version"); resp.StatusCode != 200 || v != "19.1.0" {
			t.Errorf("raw GET of @v19.1.0 = %d, X-Pkgscope-Version %q", resp.StatusCode, v)
		}
		resp, body = m.get("/v1/npm/@types%2freact@19.1.0/-/files")
		if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"index.d.ts"`)) {
			t.Fatalf("escaped-scope list = %d %s", resp.StatusCode, body)
		}
	})
}

func TestGlob(t *testing.T) {
	m := newMirror(t, embedded)
	m.reg.Publish("lib", "1.0.0", tarballtest.Package(t, map[string]string{
		"dist/a.d.ts": "", "dist/a.js": "", "dist/esm/b.d.ts": "", "src/c.ts": "", "README.md": "",
	}))
	var res listResult
	status, body := m.explore(`{"action":"glob","packageName":"lib","patterns":["dist/**/*.d.ts","!dist/esm/**"]}`, &res)
	if status != 200 || strings.Join(res.files(), ",") != "dist/a.d.ts" {
		t.Fatalf("glob = %d %s", status, body)
	}
	status, body = m.explore(`{"action":"glob","packageName":"lib","patterns":"*.md"}`, &res)
	if status != 200 || strings.Join(res.files(), ",") != "README.md" {
		t.Fatalf("glob with a single string = %d %s", status, body)
	}
	resp, body := m.get("/v1/npm/lib@1.0.0/-/files?glob=src/**")
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"files":["src/c.ts"]`)) {
		t.Fatalf("GET glob = %d %s", resp.StatusCode, body)
	}
}

func TestRead(t *testing.T) {
	forEachStore(t, func(t *testing.T, kind storeKind) {
		m := newMirror(t, kind, func(c *config.Config) { c.MaxLineWidth = 10 })
		long := strings.Repeat("0123456789", 3) + "é" // 32 bytes, a 2-byte rune at the end
		m.reg.Publish("lib", "1.0.0", tarballtest.TGZ(t,
			tarballtest.File("package/a.txt", "one\ntwo\nthree\n"),
			tarballtest.File("package/min.js", long),
			tarballtest.Bytes("package/img.png", []byte("\x89PNG\x00\x00\x01")),
			tarballtest.File("package/empty", ""),
			tarballtest.File("package/t.d.ts", "type A<T> = Array<T> & {};\n"),
		))
		var r readResult
		if status, body := m.explore(`{"action":"read","packageName":"lib","path":"/a.txt","offset":2,"limit":1}`, &r); status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		if r.Content != "     2\ttwo" || r.StartLine != 2 || r.EndLine != 2 || r.TotalLines != 3 || !r.Truncated || r.TruncatedBy != "limit" {
			t.Errorf("read a.txt 2:1 = %+v", r)
		}
		// JSON is not HTML-escaped: agents read "<" better than "\u003c".
		if _, body := m.explore(`{"action":"read","packageName":"lib","path":"t.d.ts"}`, nil); !bytes.Contains(body, []byte("type A<T>")) {
			t.Errorf("read t.d.ts body = %s", body)
		}
		m.explore(`{"action":"read","packageName":"lib","path":"a.txt"}`, &r)
		if r.Content != "     1\tone\n     2\ttwo\n     3\tthree" || r.Truncated {
			t.Errorf("read a.txt = %+v", r)
		}
		m.explore(`{"action":"read","packageName":"lib","path":"min.js"}`, &r)
		if !strings.HasPrefix(r.Content, "     1\t0123456789 [… line cut at 10 of 32 bytes; read the rest with offset=1, column=11]") || r.LinesCut != 1 {
			t.Errorf("long line = %+v", r)
		}
		// Page through the line in windows until nextColumn is 0.
		var got strings.Builder
		for col := 1; col != 0; col = r.NextColumn {
			r = readResult{}
			if status, body := m.explore(fmt.Sprintf(`{"action":"read","packageName":"lib","path":"min.js","offset":1,"column":%d}`, col), &r); status != 200 {
				t.Fatalf("window at %d: %d %s", col, status, body)
			}
			got.WriteString(strings.TrimPrefix(r.Content, "     1\t"))
		}
		if got.String() != long {
			t.Errorf("windows rebuilt %q, want %q", got.String(), long)
		}
		r = readResult{}
		m.explore(`{"action":"read","packageName":"lib","path":"img.png"}`, &r)
		if !r.Binary || r.Size != 7 || r.Content != "" {
			t.Errorf("binary = %+v", r)
		}
		m.explore(`{"action":"read","packageName":"lib","path":"empty"}`, &r)
		if r.TotalLines != 0 || r.Content != "" {
			t.Errorf("empty = %+v", r)
		}
	})
}

// TestErrors checks the status and code of every kind of bad request and
// failure; the message must say what to fix.
func TestErrors(t *testing.T) {
	m := newMirror(t, embedded, func(c *config.Config) { c.MaxBodyBytes = 4096 })
	m.reg.Publish("ok", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x"}))
	m.reg.Publish("bad-integrity", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x"}),
		fakeregistry.WithIntegrity("sha512-"+strings.Repeat("A", 86)+"=="))
	m.reg.Publish("down", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x"}))
	m.reg.Fail("down", http.StatusInternalServerError, "")
	cases := []struct {
		name, body string
		status     int
		code, msg  string
	}{
		{"malformed JSON", `{"action":`, 400, "bad_request", "not valid JSON"},
		{"unknown field", `{"action":"list","packageName":"ok","pattern":"x","bogus":1}`, 400, "bad_request", `unknown field "bogus"`},
		{"unknown action", `{"action":"cat","packageName":"ok"}`, 400, "bad_request", "unknown action"},
		// A field the action does not read, an alias, another engine's
		// regexp syntax: each a 400 naming the correction (explore.Do).
		{"grep limit", `{"action":"grep","packageName":"ok","pattern":"x","limit":2}`, 400, "bad_request", "grep takes maxMatches, not limit"},
		{"grep path", `{"action":"grep","packageName":"ok","pattern":"x","path":"dist/client/components"}`, 400, "bad_request", "grep has no path: use include:['dist/client/components/**']"},
		{"glob path", `{"action":"glob","packageName":"ok","patterns":"*.d.ts","path":"dist/client/components"}`, 400, "bad_request", "use 'dist/client/components/*.d.ts'"},
		{"read pattern", `{"action":"read","packageName":"ok","path":"a.js","pattern":"x"}`, 400, "bad_request", "read has no pattern: to find lines, use grep"},
		{"alias", `{"action":"grep","packageName":"ok","query":"x"}`, 400, "bad_request", `unknown field "query": did you mean pattern?`},
		{"alias before action", `{"glob":"*.js","action":"grep","packageName":"ok","pattern":"x"}`, 400, "bad_request", `unknown field "glob": did you mean include?`},
		// encoding/json alone fills packageName from these.
		{"field in another case", `{"action":"list","PackageName":"ok"}`, 400, "bad_request", `unknown field "PackageName": did you mean packageName?`},
		{"field in lower case", `{"action":"grep","packageName":"ok","pattern":"x","maxmatches":2}`, 400, "bad_request", `unknown field "maxmatches": did you mean maxMatches?`},
		{"wrong type", `{"action":"grep","packageName":"ok","pattern":"x","maxMatches":"3"}`, 400, "bad_request", `maxMatches: must be a whole number (e.g. 3, without quotes), not a JSON string`},
		{"GNU word boundary", `{"action":"grep","packageName":"ok","pattern":"\\<Home\\>"}`, 400, "bad_request", `use \b`},
		{"look-around", `{"action":"grep","packageName":"ok","pattern":"(?<=use)State"}`, 400, "bad_request", "RE2 has no look-around"},
		{"backreference", `{"action":"grep","packageName":"ok","pattern":"(a)\\1"}`, 400, "bad_request", "RE2 has no backreferences"},
		{"bad name", `{"action":"list","packageName":"../etc"}`, 400, "bad_request", "packageName"},
		{"git spec", `{"action":"list","packageName":"ok","version":"git+ssh://x/y.git"}`, 400, "bad_request", "version"},
		{"url spec", `{"action":"list","packageName":"ok","version":"https://example.invalid/x.tgz"}`, 400, "bad_request", "version"},
		{"traversal", `{"action":"read","packageName":"ok","path":"../../etc/passwd"}`, 400, "bad_request", "path"},
		{"bad glob", `{"action":"glob","packageName":"ok","patterns":["[a"]}`, 400, "bad_request", "glob"},
		{"no such package", `{"action":"list","packageName":"nope"}`, 404, "not_found", "nope"},
		{"no such version", `{"action":"list","packageName":"ok","version":"^9"}`, 404, "no_matching_version", `range "^9" matches none of 1 version; the highest is 1.0.0 (also latest)`},
		{"no such file", `{"action":"read","packageName":"ok","path":"b.js"}`, 404, "not_found", "b.js"},
		{"limit over max", `{"action":"read","packageName":"ok","path":"a.js","limit":1000000}`, 422, "limit_exceeded", "max-read-limit"},
		{"upstream down", `{"action":"list","packageName":"down"}`, 503, "upstream_unavailable", "500"},
		{"integrity mismatch", `{"action":"list","packageName":"bad-integrity"}`, 502, "upstream_integrity", "integrity"},
		{"body too large", `{"action":"list","packageName":"` + strings.Repeat("a", 5000) + `"}`, 413, "body_too_large", "max-body-bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := m.explore(tc.body, nil)
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("error body %q is not the JSON shape: %v", body, err)
			}
			if status != tc.status || e.Error.Code != tc.code || !strings.Contains(e.Error.Message, tc.msg) {
				t.Errorf("got %d %s, want %d %s containing %q", status, body, tc.status, tc.code, tc.msg)
			}
		})
	}
	// An upstream failure answers Retry-After, and is not remembered: once
	// the registry is back, the same request succeeds.
	resp, err := http.Post(m.srv.URL+"/v1/explore", "application/json", strings.NewReader(`{"action":"list","packageName":"down"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Retry-After") == "" {
		t.Errorf("503 without Retry-After")
	}
	m.reg.Fail("down", 0, "")
	if status, body := m.explore(`{"action":"list","packageName":"down"}`, nil); status != 200 {
		t.Errorf("after recovery: %d %s", status, body)
	}
}

// TestColdStampedeFetchesOnce: concurrent requests for one cold version
// download its tarball once (in-process single-flight).
func TestColdStampedeFetchesOnce(t *testing.T) {
	m := newMirror(t, embedded)
	m.reg.Publish("hot", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x"}))
	release := m.reg.Hold("hot")
	const n = 20
	var wg sync.WaitGroup
	statuses := make(chan int, n)
	for range n {
		wg.Go(func() {
			status, _ := m.explore(`{"action":"list","packageName":"hot","version":"1.0.0"}`, nil)
			statuses <- status
		})
	}
	release()
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != 200 {
			t.Errorf("status %d", s)
		}
	}
	if got := m.reg.TarballDownloads("hot", "1.0.0"); got != 1 {
		t.Errorf("tarball downloaded %d times, want 1", got)
	}
}

// TestColdFillsPastTheSlotsAre503: with max-fills 1 and no room to wait,
// a second cold version asked while the first is fetched is refused at
// once through the API (503 fills_busy with Retry-After, never a
// 404), /metrics counts it, and nothing is recorded of it.
func TestColdFillsPastTheSlotsAre503(t *testing.T) {
	m := newMirror(t, embedded, func(c *config.Config) { c.MaxFills, c.MaxFillWaiters = 1, 0 })
	for _, name := range []string{"held", "next"} {
		m.reg.Publish(name, "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x"}))
	}
	// The version list (the jsDelivr-compatible metadata, which never
	// fills) caches held's packument, so the next registry request for it
	// is the tarball, asked by a fill holding its slot.
	if resp, body := m.get("/v1/packages/npm/held"); resp.StatusCode != 200 {
		t.Fatalf("held's versions: %d %s", resp.StatusCode, body)
	}
	arrived := m.reg.Arrived("held")
	release := m.reg.Hold("held")
	defer release()
	held := make(chan int, 1)
	go func() {
		status, _ := m.explore(`{"action":"list","packageName":"held","version":"1.0.0"}`, nil)
		held <- status
	}()
	<-arrived // held@1.0.0 holds the only slot
	resp, err := http.Post(m.srv.URL+"/v1/explore", "application/json", strings.NewReader(`{"action":"list","packageName":"next","version":"1.0.0"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"fills_busy"`) || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a cold version past the slots: %d %s (Retry-After %q), want 503 fills_busy with Retry-After",
			resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	_, metrics := m.get("/metrics")
	for _, want := range []string{"pkgscope_fill_slots 1", "pkgscope_fill_slots_in_use 1", "pkgscope_fill_slot_refusals_total 1", "pkgscope_fill_budget_bytes 2.68435456e+08"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(string(metrics), "pkgscope_fill_slot"))
		}
	}
	release()
	if status := <-held; status != 200 {
		t.Errorf("the held version: %d", status)
	}
	// Not recorded (internal/fill's TestFillSlotsBoundColdFills fills it
	// again once the slot is free: here the held request is answered from
	// the verified download while its fill, holding the slot, still
	// writes to the store).
	if _, err := m.app.Store.Version(t.Context(), "next", "1.0.0"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused version left a record: %v", err)
	}
}

// TestReadOfNewlineFileIsBounded: reading one line of a file of 32 MiB of
// newlines costs about the body, not a slice per line (which was 800 MiB).
func TestReadOfNewlineFileIsBounded(t *testing.T) {
	m := newMirror(t, embedded)
	m.reg.Publish("nl", "1.0.0", tarballtest.Package(t, map[string]string{"nl.txt": strings.Repeat("\n", 32<<20)}))
	req := `{"action":"read","packageName":"nl","version":"1.0.0","path":"nl.txt","offset":5,"limit":1}`
	var r readResult
	if status, body := m.explore(req, &r); status != 200 || r.TotalLines != 32<<20 || r.Content != "     5\t" {
		t.Fatalf("%d %s", status, body)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m.explore(req, &r)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4*(32<<20) {
		t.Errorf("one read allocated %d MiB, want at most 4x the 32 MiB body", got>>20)
	}
}

// TestJustPublishedExactVersion: an exact version published after the
// packument was cached is found at once (a refetch), not after the TTL;
// and a version that really does not exist is still a 404.
func TestJustPublishedExactVersion(t *testing.T) {
	m := newMirror(t, embedded, func(c *config.Config) { c.PackumentRefetch = time.Nanosecond })
	m.reg.Publish("lib", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "1"}))
	if status, body := m.explore(`{"action":"list","packageName":"lib"}`, nil); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	m.reg.Publish("lib", "1.0.1", tarballtest.Package(t, map[string]string{"a.js": "2"}))
	var l listResult
	if status, body := m.explore(`{"action":"list","packageName":"lib","version":"1.0.1"}`, &l); status != 200 || l.Version != "1.0.1" {
		t.Fatalf("just-published exact version: %d %s", status, body)
	}
	if status, body := m.explore(`{"action":"list","packageName":"lib","version":"9.9.9"}`, nil); status != 404 {
		t.Errorf("unpublished version: %d %s", status, body)
	}
}

// TestListedVersionWithMissingTarballIs503: a version the packument lists
// whose tarball answers 404 (the registry lagging just after a publish) is
// a 503 to retry, never a 404.
func TestListedVersionWithMissingTarballIs503(t *testing.T) {
	m := newMirror(t, embedded)
	m.reg.Publish("lag", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "1"}),
		fakeregistry.WithTarballURL(m.reg.URL()+"lag/-/not-there-yet-1.0.0.tgz"))
	status, body := m.explore(`{"action":"list","packageName":"lag","version":"1.0.0"}`, nil)
	if status != http.StatusServiceUnavailable || !strings.Contains(string(body), "upstream_unavailable") {
		t.Errorf("got %d %s, want 503 upstream_unavailable", status, body)
	}
}

// TestFailedVersionIsNotRedownloaded: a tarball that failed its integrity
// check is answered from memory for failed-retry-after, not downloaded on
// every request.
func TestFailedVersionIsNotRedownloaded(t *testing.T) {
	m := newMirror(t, embedded)
	m.reg.Publish("bad", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x"}),
		fakeregistry.WithIntegrity("sha512-"+strings.Repeat("A", 86)+"=="))
	for range 3 {
		if status, body := m.explore(`{"action":"list","packageName":"bad","version":"1.0.0"}`, nil); status != http.StatusBadGateway {
			t.Fatalf("%d %s", status, body)
		}
	}
	if n := m.reg.TarballDownloads("bad", "1.0.0"); n != 1 {
		t.Errorf("downloaded %d times, want 1", n)
	}
}
