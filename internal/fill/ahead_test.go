package fill_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// tarballBodies counts what the client reads of tarball bodies and which
// it closes.
type tarballBodies struct {
	mu     sync.Mutex
	read   int64
	closed int
}

func (b *tarballBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && strings.Contains(r.URL.Path, "/-/") {
		resp.Body = &countedBody{ReadCloser: resp.Body, b: b}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	b *tarballBodies
}

func (c *countedBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.b.mu.Lock()
	c.b.read += int64(n)
	c.b.mu.Unlock()
	return n, err
}

func (c *countedBody) Close() error {
	c.b.mu.Lock()
	c.b.closed++
	c.b.mu.Unlock()
	return c.ReadCloser.Close()
}

// aheadEnv is newEnv with a client that asks for tarballs with manifests
// (--max-ahead-tarballs 16), through bodies.
func aheadEnv(t *testing.T, bodies *tarballBodies) *env {
	e := newEnv(t)
	e.up = upstream.New(e.reg.NPM(), upstream.Config{MaxAheadTarballs: 16}, &http.Client{Transport: bodies})
	t.Cleanup(e.up.Close)
	return e
}

// TestFillAsksManifestAndTarballAtOnce: the fetch link's manifest and
// tarball requests are both at the registry before either is answered,
// and the fill downloads the tarball once.
func TestFillAsksManifestAndTarballAtOnce(t *testing.T) {
	t.Parallel()
	e := aheadEnv(t, &tarballBodies{})
	e.publish(t, "both", "1.0.0")
	release := e.reg.Hold("both")
	defer release()
	first := e.reg.Arrived("both")
	done := make(chan error, 1)
	go func() { done <- e.filler(fill.Options{Timeout: time.Minute}).Fill(t.Context(), "both", "1.0.0") }()
	<-first
	// Requests are counted before Arrived is closed, under one lock: the
	// second either is counted already or closes second.
	second := e.reg.Arrived("both")
	if e.reg.VersionRequests("both", "1.0.0")+e.reg.TarballDownloads("both", "1.0.0") < 2 {
		select {
		case <-second:
		case err := <-done:
			t.Fatalf("the fill ended (%v) with one request held", err)
		case <-time.After(time.Minute): // fails a broken fill instead of hanging; asserts no timing
			t.Fatal("the tarball was not asked for while the manifest was held")
		}
	}
	if v, d := e.reg.VersionRequests("both", "1.0.0"), e.reg.TarballDownloads("both", "1.0.0"); v != 1 || d != 1 {
		t.Fatalf("held: %d manifest and %d tarball requests, want 1 and 1", v, d)
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := e.reg.TarballDownloads("both", "1.0.0"); n != 1 {
		t.Errorf("%d tarball requests, want 1", n)
	}
	if files, err := e.st.Files(t.Context(), "both", "1.0.0"); err != nil || len(files) != 2 {
		t.Errorf("stored files %+v, %v; want 2", files, err)
	}
}

// TestFillRefusedOnDeclaredSizesReadsNoTarball: a version refused by
// ingest.CheckDeclared had its tarball asked for with its manifest, but
// not one byte of its body is read, and the answer is closed.
func TestFillRefusedOnDeclaredSizesReadsNoTarball(t *testing.T) {
	t.Parallel()
	bodies := &tarballBodies{}
	e := aheadEnv(t, bodies)
	e.publish(t, "huge", "1.0.0")
	lim := ingest.DefaultLimits()
	lim.MaxUnpackedBytes = 1
	err := fill.New(e.st, e.up, fill.Options{Timeout: time.Minute, Ingest: lim}).Fill(t.Context(), "huge", "1.0.0")
	if !errors.Is(err, ingest.ErrLimit) {
		t.Fatalf("fill = %v, want ErrLimit", err)
	}
	e.up.Close()
	bodies.mu.Lock()
	defer bodies.mu.Unlock()
	if bodies.read != 0 || bodies.closed != 1 {
		t.Errorf("tarball bodies: %d bytes read, %d closed; want 0 read and the guessed one closed", bodies.read, bodies.closed)
	}
	if n := e.reg.TarballDownloads("huge", "1.0.0"); n != 1 {
		t.Errorf("%d tarball requests, want the 1 sent with the manifest", n)
	}
}
