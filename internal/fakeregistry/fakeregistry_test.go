package fakeregistry

import (
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// get fetches path from the registry with a client whose connections are
// closed when the test ends.
func get(t *testing.T, r *Registry, path string) (*http.Response, []byte) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Get(r.URL() + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", path, err)
	}
	return resp, body
}

func packument(t *testing.T, r *Registry, path string) abbreviated {
	t.Helper()
	resp, body := get(t, r, path)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", path, resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/vnd.npm.install-v1+json" {
		t.Errorf("GET %s: Content-Type %q", path, ct)
	}
	var doc abbreviated
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return doc
}

func TestPublishServesAbbreviatedPackumentAndTarball(t *testing.T) {
	r := New(t)
	tgz := tarballtest.Package(t, map[string]string{"package.json": `{"name":"@s/x"}`, "index.js": "1"})
	r.Publish("@s/x", "1.0.0", tgz, Deprecated("use y"))

	for _, path := range []string{"@s%2fx", "@s/x", "%40s%2Fx"} {
		doc := packument(t, r, path)
		v, ok := doc.Versions["1.0.0"]
		if doc.Name != "@s/x" || !ok || doc.DistTags["latest"] != "1.0.0" {
			t.Fatalf("GET %s = %+v", path, doc)
		}
		sha := sha512.Sum512(tgz)
		sum1 := sha1.Sum(tgz)
		want := abbreviatedDist{
			Tarball:      r.URL() + "@s/x/-/x-1.0.0.tgz",
			Integrity:    "sha512-" + base64.StdEncoding.EncodeToString(sha[:]),
			Shasum:       hex.EncodeToString(sum1[:]),
			UnpackedSize: int64(len(`{"name":"@s/x"}`) + 1),
			FileCount:    2,
		}
		if v.Dist != want || v.Deprecated != "use y" {
			t.Errorf("GET %s: version = %+v, want dist %+v", path, v, want)
		}
	}
	if got := r.PackumentRequests("@s/x"); got != 3 {
		t.Errorf("PackumentRequests = %d, want 3", got)
	}

	resp, body := get(t, r, "@s/x/-/x-1.0.0.tgz")
	if resp.StatusCode != http.StatusOK || string(body) != string(tgz) {
		t.Errorf("tarball: status %d, %d bytes", resp.StatusCode, len(body))
	}
	if got := r.TarballDownloads("@s/x", "1.0.0"); got != 1 {
		t.Errorf("TarballDownloads = %d, want 1", got)
	}
	if resp, _ := get(t, r, "@s/x/-/x-9.9.9.tgz"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown tarball: status %d, want 404", resp.StatusCode)
	}
	if resp, _ := get(t, r, "nope"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown package: status %d, want 404", resp.StatusCode)
	}
}

func TestPublishOptions(t *testing.T) {
	r := New(t)
	tgz := tarballtest.Package(t, map[string]string{"a": "b"})
	r.Publish("p", "1.0.0", tgz, WithoutIntegrity())
	r.Publish("p", "1.1.0", tgz, WithIntegrity("sha512-wrong"))
	r.Publish("p", "1.2.0", tgz, WithTarballURL("http://elsewhere.invalid/p.tgz"))
	doc := packument(t, r, "p")
	if d := doc.Versions["1.0.0"].Dist; d.Integrity != "" || d.Shasum == "" {
		t.Errorf("WithoutIntegrity: dist = %+v", d)
	}
	if d := doc.Versions["1.1.0"].Dist; d.Integrity != "sha512-wrong" {
		t.Errorf("WithIntegrity: dist = %+v", d)
	}
	if d := doc.Versions["1.2.0"].Dist; d.Tarball != "http://elsewhere.invalid/p.tgz" {
		t.Errorf("WithTarballURL: dist = %+v", d)
	}
}

func TestLatestTag(t *testing.T) {
	tgz := []byte("not even a tarball")
	steps := []struct {
		publish, tag string // tag "" = plain publish; publish "" = SetDistTag("latest", tag)
		wantLatest   string
	}{
		{"1.0.0-rc.1", "", "1.0.0-rc.1"}, // only prereleases: the highest one
		{"1.0.0", "", "1.0.0"},
		{"2.0.0-beta.1", "", "1.0.0"}, // a prerelease never becomes latest
		{"1.2.0", "", "1.2.0"},
		{"1.10.0", "", "1.10.0"}, // numeric, not string, order
		{"3.0.0", "next", "1.10.0"},
		{"1.0.1", "latest", "1.0.1"}, // explicit latest pins it
		{"1.11.0", "", "1.0.1"},
		{"", "1.11.0", "1.11.0"},
	}
	r := New(t)
	for _, s := range steps {
		if s.publish == "" {
			r.SetDistTag("p", "latest", s.tag)
		} else if s.tag != "" {
			r.Publish("p", s.publish, tgz, WithTag(s.tag))
		} else {
			r.Publish("p", s.publish, tgz)
		}
		if got := packument(t, r, "p").DistTags["latest"]; got != s.wantLatest {
			t.Fatalf("after %+v: latest = %q, want %q", s, got, s.wantLatest)
		}
	}
	if got := packument(t, r, "p").DistTags["next"]; got != "3.0.0" {
		t.Errorf("next = %q, want 3.0.0", got)
	}
}

func TestFailAndRaw(t *testing.T) {
	r := New(t)
	r.Publish("p", "1.0.0", []byte("x"))
	r.Fail("p", http.StatusTooManyRequests, "7")
	for _, path := range []string{"p", "p/-/p-1.0.0.tgz"} {
		resp, _ := get(t, r, path)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "7" {
			t.Errorf("GET %s while failing: %d Retry-After %q", path, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	r.Fail("p", 0, "")
	r.SetRawPackument("p", []byte(`{"name":`))
	if resp, body := get(t, r, "p"); resp.StatusCode != http.StatusOK || string(body) != `{"name":` {
		t.Errorf("raw packument: %d %q", resp.StatusCode, body)
	}
	r.SetRawPackument("p", nil)
	if doc := packument(t, r, "p"); doc.Name != "p" {
		t.Errorf("after clearing: %+v", doc)
	}
}

func TestHoldBlocksUntilRelease(t *testing.T) {
	r := New(t)
	r.Publish("p", "1.0.0", []byte("x"))
	release := r.Hold("p")
	done := make(chan int)
	go func() { done <- status(r.URL() + "p") }()
	select {
	case code := <-done:
		t.Fatalf("request finished (%d) while held", code)
	default:
	}
	release()
	release() // idempotent
	if code := <-done; code != http.StatusOK {
		t.Errorf("after release: status %d", code)
	}
}

// TestHoldTarballsHoldsOnlyTarballs: the packument and the manifest answer
// while the tarball waits for release.
func TestHoldTarballsHoldsOnlyTarballs(t *testing.T) {
	r := New(t)
	r.Publish("p", "1.0.0", tarballtest.Package(t, map[string]string{"index.js": "1"}))
	arrived, release := r.HoldTarballs("p")
	for _, path := range []string{"p", "p/1.0.0"} {
		if code := status(r.URL() + path); code != http.StatusOK {
			t.Errorf("%s while tarballs are held: status %d", path, code)
		}
	}
	tarball := packument(t, r, "p").Versions["1.0.0"].Dist.Tarball
	done := make(chan int)
	go func() { done <- status(tarball) }()
	<-arrived
	select {
	case code := <-done:
		t.Fatalf("tarball request finished (%d) while held", code)
	default:
	}
	release()
	if code := <-done; code != http.StatusOK {
		t.Errorf("tarball after release: status %d", code)
	}
}

func TestCleanupReleasesForgottenHolds(t *testing.T) {
	// A subtest's registry is closed at the subtest's end even though a
	// request is still held: this test finishing at all is the check.
	done := make(chan int, 1)
	t.Run("forget", func(t *testing.T) {
		r := New(t)
		r.Hold("p")
		go func() { done <- status(r.URL() + "p") }()
	})
	<-done
}

// status GETs url and returns the status, 0 on a transport error. It is
// safe to call off the test goroutine.
func status(url string) int {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestLatestIsHighestRelease: without an explicit tag, latest follows the
// highest release by semver precedence (10.0.0 above 9.0.0, a release
// above its prereleases), and a prerelease only when there is no release.
func TestLatestIsHighestRelease(t *testing.T) {
	r := New(t)
	tgz := tarballtest.Package(t, map[string]string{"a.js": ""})
	r.Publish("pre", "1.0.0-beta.2", tgz)
	r.Publish("pre", "1.0.0-beta.11", tgz)
	for _, v := range []string{"1.0.0-rc.1", "9.0.0", "10.0.0", "1.10.0"} {
		r.Publish("rel", v, tgz)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if got := r.pkgs["rel"].distTags["latest"]; got != "10.0.0" {
		t.Errorf("latest of rel = %s, want 10.0.0", got)
	}
	if got := r.pkgs["pre"].distTags["latest"]; got != "1.0.0-beta.11" {
		t.Errorf("latest of pre = %s, want 1.0.0-beta.11", got)
	}
}

// TestServesVersionManifests: GET /<name>/<version> answers that version's
// manifest with the packument's dist, for scoped names escaped or not; an
// unknown version is a 404; RefuseVersions answers every one with its
// status; each is counted apart from the packument's requests.
func TestServesVersionManifests(t *testing.T) {
	r := New(t)
	tgz := tarballtest.Package(t, map[string]string{"index.js": "x"})
	r.Publish("@s/p", "1.0.0", tgz)
	want := packument(t, r, "@s%2fp").Versions["1.0.0"]
	for _, path := range []string{"@s%2fp/1.0.0", "@s/p/1.0.0"} {
		resp, body := get(t, r, path)
		var m manifest
		if err := json.Unmarshal(body, &m); resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("GET %s: %s %s", path, resp.Status, body)
		}
		if m.ID != "@s/p@1.0.0" || m.Name != "@s/p" || m.Version != "1.0.0" || m.Dist != want.Dist {
			t.Errorf("GET %s = %+v, want the packument's entry %+v", path, m, want)
		}
	}
	if resp, _ := get(t, r, "@s%2fp/9.9.9"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown version: %s, want 404", resp.Status)
	}
	r.RefuseVersions(http.StatusMethodNotAllowed)
	if resp, _ := get(t, r, "@s%2fp/1.0.0"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("refused: %s, want 405", resp.Status)
	}
	if n, p := r.VersionRequests("@s/p", "1.0.0"), r.PackumentRequests("@s/p"); n != 3 || p != 1 {
		t.Errorf("%d manifest and %d packument requests, want 3 and 1", n, p)
	}
}

// TestFullPackumentHasTimes: Accept: application/json gets the full
// document with each version's publish time; the abbreviated one has none.
func TestFullPackumentHasTimes(t *testing.T) {
	r := New(t)
	at := time.Date(2024, 3, 9, 10, 11, 12, 0, time.UTC)
	r.Publish("p", "1.0.0", tarballtest.Package(t, map[string]string{"package.json": "{}"}), PublishedAt(at))
	if doc := packument(t, r, "p"); doc.Time != nil {
		t.Errorf("abbreviated packument has time: %v", doc.Time)
	}
	req, err := http.NewRequest(http.MethodGet, r.URL()+"p", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc abbreviated
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.Time["1.0.0"] != "2024-03-09T10:11:12Z" || doc.Time["created"] == "" || doc.Time["modified"] == "" {
		t.Errorf("full packument time = %v", doc.Time)
	}
}
