package reliability

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
)

// rawUpload opens a connection to the mirror and returns it with send,
// which writes a POST of path declaring length bytes of body, then
// prefix, and returns once prefix is written (the connection is left
// open: the rest of the body never comes). send may run on any goroutine.
func rawUpload(t *testing.T, m *mirror, path, token string, length int, prefix []byte) (net.Conn, func() error) {
	t.Helper()
	u, err := url.Parse(m.url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, u.Host, length)
	if token != "" {
		head += "Authorization: Bearer " + token + "\r\n"
	}
	return conn, func() error {
		_, err := conn.Write(append([]byte(head+"\r\n"), prefix...))
		return err
	}
}

// TestSlowUploadsOfOneCallerDelayNoOther: a caller holding two slow
// 34 MB POST /v1/projects uploads that never finish takes at most its
// share of max-lockfile-bytes-in-flight (64 MiB of 128 MiB), so another caller's 150-byte
// POST /v1/warm is answered at once (before: after 26 s, once read-timeout
// cut the slow uploads, issue 25 §2). The minimum upload rate is off here,
// so that only the shares are tested. The other caller's latency is
// logged, not asserted: the bound is the suite's client deadline.
func TestSlowUploadsOfOneCallerDelayNoOther(t *testing.T) {
	m := newMirror(t, func(c *config.Config) {
		c.Tokens = "upload-a-token,upload-b-token"
		c.MinUploadBytesPerSecond = 0
	})
	// 34 MB and 33.1 MB: with the byte each body is charged beyond its
	// length, exactly 64 MiB, the whole budget before the shares (and the
	// default share now). Each body is charged its length once 16 MiB of
	// it are in, so once its bytes are sent (the socket buffers hold a
	// few MB at most), the mirror holds them.
	lengths := []int{34_000_000, 64<<20 - 34_000_000 - 2}
	for _, length := range lengths {
		prefix := []byte(`{"lockfile":{"name":"package-lock.json","content":"` + strings.Repeat("a", length-100))
		_, send := rawUpload(t, m, "/v1/projects", "upload-a-token", length, prefix)
		if err := send(); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", m.url+"/v1/warm", strings.NewReader(`{"specs":["lodash@4.17.21","react@18.3.1","left-pad@1.3.0","@types/node@20.0.0","typescript@5.4.5","vite@5.2.0","zod@3.23.8"]}`))
	req.Header.Set("Authorization", "Bearer upload-b-token")
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: answerBound}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("another caller's small POST /v1/warm while one caller holds two slow uploads: %v", err)
	}
	resp.Body.Close()
	t.Logf("another caller's 150-byte POST /v1/warm: %d in %s while one caller holds two slow 34 MB uploads", resp.StatusCode, time.Since(start).Round(time.Millisecond))
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("another caller's small POST /v1/warm: %d, want 202", resp.StatusCode)
	}
}

// TestStalledUploadIsCut: a body that stops arriving is cut at the
// minimum upload rate's deadline (uploadGrace and a second, 3 s), 408
// naming min-upload-bytes-per-second, not at read-timeout (here 5
// minutes; before, nothing else cut it).
func TestStalledUploadIsCut(t *testing.T) {
	m := newMirror(t, func(c *config.Config) {
		c.ReadTimeout = 5 * time.Minute
	})
	conn, send := rawUpload(t, m, "/v1/warm", "", 100_000, []byte(`{"specs":["lodash@4.17.21"`))
	if err := send(); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(3 * answerBound))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled upload: %v", err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode}
	a.body = make([]byte, 4096)
	n, _ := resp.Body.Read(a.body)
	a.body = a.body[:n]
	if a.status != http.StatusRequestTimeout || a.code() != "body_timeout" || !strings.Contains(string(a.body), "min-upload-bytes-per-second") {
		t.Errorf("a stalled upload: %s, want 408 body_timeout naming min-upload-bytes-per-second", a)
	}
}

// TestFullUploadPoolIsCoded: an upload refused because its caller's share
// of the lockfile pool stayed full is a 503 coded upload_pool_full, with
// Retry-After and the setting named (before: 503 coded "internal").
func TestFullUploadPoolIsCoded(t *testing.T) {
	m := newMirror(t, func(c *config.Config) {
		c.Tokens = "pool-a-token,pool-b-token"
		c.MaxWarmBodyBytes, c.MaxLockfileBytesPerCaller, c.MaxLockfileBytesInFlight = 64<<10, 64<<10, 128<<10
	})
	h := m.app.Handler()
	holdUploadShare(t, h, func(r *http.Request) { r.Header.Set("Authorization", "Bearer pool-a-token") })
	gone, cancel := context.WithCancel(t.Context())
	cancel() // a client that does not wait
	req := httptest.NewRequestWithContext(gone, "POST", "/v1/warm", strings.NewReader(`{"specs":["lodash@4.17.21"]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer pool-a-token")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	a := answer{status: rec.Code, body: rec.Body.Bytes()}
	if a.status != http.StatusServiceUnavailable || a.code() != "upload_pool_full" || rec.Header().Get("Retry-After") == "" ||
		!strings.Contains(string(a.body), "max-lockfile-bytes-per-caller") {
		t.Errorf("an upload past its caller's share: %s (Retry-After %q), want 503 upload_pool_full naming max-lockfile-bytes-per-caller",
			a, rec.Header().Get("Retry-After"))
	}
	// b's upload goes through meanwhile.
	if rec := send(h, "POST", "/v1/warm", `{"specs":["lodash@4.17.21"]}`, "pool-b-token"); rec.Code != http.StatusAccepted {
		t.Errorf("another caller's upload: %d %.300s, want 202", rec.Code, rec.Body)
	}
}

// TestUploadShareIgnoresForwardedFor: without tokens an upload's share of
// the lockfile pool is its peer address's; X-Forwarded-For and X-Real-IP
// (which any client may send; no proxy is configured to be trusted) do
// not give a caller holding its share a fresh one, while another address
// still gets its own.
func TestUploadShareIgnoresForwardedFor(t *testing.T) {
	m := newMirror(t, func(c *config.Config) {
		c.MaxWarmBodyBytes, c.MaxLockfileBytesPerCaller, c.MaxLockfileBytesInFlight = 64<<10, 64<<10, 128<<10
	})
	h := m.app.Handler()
	holdUploadShare(t, h, func(r *http.Request) { r.RemoteAddr = "192.0.2.7:40000" })
	for _, hdr := range []string{"X-Forwarded-For", "X-Real-IP"} {
		gone, cancel := context.WithCancel(t.Context())
		cancel() // a client that does not wait for room
		req := httptest.NewRequestWithContext(gone, "POST", "http://localhost/v1/warm", strings.NewReader(`{"specs":["lodash@4.17.21"]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(hdr, "203.0.113.9")
		req.RemoteAddr = "192.0.2.7:40001"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if a := (answer{status: rec.Code, body: rec.Body.Bytes()}); a.status != http.StatusServiceUnavailable || !strings.Contains(string(a.body), "max-lockfile-bytes-per-caller") {
			t.Errorf("the same address claiming another with %s: %s, want 503 naming max-lockfile-bytes-per-caller", hdr, a)
		}
	}
	req := httptest.NewRequest("POST", "http://localhost/v1/warm", strings.NewReader(`{"specs":["lodash@4.17.21"]}`))
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = "198.51.100.3:40000"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Errorf("another address's upload: %d %.300s, want 202", rec.Code, rec.Body)
	}
}

// holdUploadShare starts a POST /v1/warm from the caller whose by sets
// (a token or a peer address) and returns once the mirror has read 60 KiB
// of its body (a pipe write returns once read): that caller's share of a
// 64 KiB max-lockfile-bytes-per-caller is held. The body never ends; it
// is cut when the test ends.
func holdUploadShare(t *testing.T, h http.Handler, by func(*http.Request)) {
	t.Helper()
	pr, pw := io.Pipe()
	held := make(chan struct{})
	go func() {
		pw.Write([]byte(`{"specs":["lodash@4.17.21"` + strings.Repeat(" ", 60<<10)))
		close(held)
	}()
	done := make(chan struct{})
	rec := httptest.NewRecorder()
	go func() {
		defer close(done)
		req := httptest.NewRequest("POST", "http://localhost/v1/warm", pr)
		req.Header.Set("Content-Type", "application/json")
		by(req)
		h.ServeHTTP(rec, req)
	}()
	select {
	case <-held:
	case <-done:
		pr.Close()
		t.Fatalf("the upload holding the share was answered before its body came: %d %.300s", rec.Code, rec.Body)
	}
	t.Cleanup(func() {
		pw.CloseWithError(io.ErrUnexpectedEOF)
		<-done
	})
}
