package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
)

// aheadConfig sends tarball requests ahead, as --max-ahead-tarballs 16.
var aheadConfig = Config{MaxAheadTarballs: 16}

// guessedURL is where the registry in front lays out name@1.0.0's tarball.
func guessedURL(front *env, name string) string {
	base := name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		base = name[i+1:]
	}
	return front.c.npm.RegistryFor(name) + name + "/-/" + base + "-1.0.0.tgz"
}

// readAll reads a download to its end and verifies it.
func readAll(t *testing.T, c *Client, name string, v PackumentVersion) error {
	t.Helper()
	d, err := c.Tarball(context.Background(), name, v)
	if err != nil {
		return err
	}
	defer d.Close()
	if _, err := io.Copy(io.Discard, d); err != nil {
		return err
	}
	return d.Verify()
}

// failAfter fails the test when ch is not closed within a minute, so a
// broken implementation fails instead of hanging; it asserts no timing.
func failAfter(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatal(what)
	}
}

// TestManifestAndTarballAskedAtOnce: a cold version's manifest and its
// tarball, at the registry's conventional URL, are both in flight before
// either answers (the registry holds the manifest until it has seen the
// tarball's request), and Tarball uses that answer instead of asking
// again, for plain and scoped names.
func TestManifestAndTarballAskedAtOnce(t *testing.T) {
	for _, name := range []string{"p", "@s/p"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, Config{})
			tarballAsked := make(chan struct{})
			var once sync.Once
			front := proxyWith(t, e, aheadConfig, func(w http.ResponseWriter, r *http.Request) bool {
				if strings.Contains(r.URL.Path, "/-/") {
					once.Do(func() { close(tarballAsked) })
					return false
				}
				select {
				case <-tarballAsked:
				case <-r.Context().Done():
				}
				return false
			})
			e.reg.Publish(name, "1.0.0", tgz(t), fakeregistry.WithTarballURL(guessedURL(front, name)))
			v, err := front.c.Version(context.Background(), name, "1.0.0")
			if err != nil {
				t.Fatal(err)
			}
			if err := readAll(t, front.c, name, v); err != nil {
				t.Fatal(err)
			}
			if n := e.reg.TarballDownloads(name, "1.0.0"); n != 1 {
				t.Errorf("%d tarball requests, want 1 (the one sent with the manifest)", n)
			}
		})
	}
}

// TestGuessAtAnotherURLIsClosedUnread: when the manifest names another
// tarball URL, that one is downloaded and the answer at the guessed URL
// is closed without its body being read; a version whose tarball is never
// asked for (refused on its declared sizes) has its guess closed by Close
// likewise.
func TestGuessAtAnotherURLIsClosedUnread(t *testing.T) {
	for _, takesTarball := range []bool{true, false} {
		e := newEnv(t, Config{})
		data := tgz(t)
		h := fakeregistry.NewTarballHost(t, data, fakeregistry.Whole)
		guessClosed := make(chan struct{})
		cfg := aheadConfig
		cfg.AllowedTarballHosts = []string{h.Host()}
		front := proxyWith(t, e, cfg, func(w http.ResponseWriter, r *http.Request) bool {
			if !strings.Contains(r.URL.Path, "/-/") {
				return false
			}
			// Headers only: the body follows when the client reads it,
			// which it must not.
			w.Header().Set("Content-Length", "1000000")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			close(guessClosed)
			return true
		})
		if takesTarball {
			e.reg.Publish("p", "1.0.0", data, fakeregistry.WithTarballURL(h.URL()))
		} else {
			e.reg.Publish("p", "1.0.0", data, fakeregistry.WithTarballURL(guessedURL(front, "p")))
		}
		v, err := front.c.Version(context.Background(), "p", "1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		if takesTarball {
			if err := readAll(t, front.c, "p", v); err != nil {
				t.Fatal(err)
			}
			if n := h.Requests(); n != 1 {
				t.Errorf("%d requests for dist.tarball, want 1", n)
			}
		} else {
			front.c.Close()
		}
		failAfter(t, guessClosed, "the guessed answer was never closed")
	}
}

// TestGuessFailureFallsBackSilently: a 404 or a 5xx at the guessed URL is
// not reported: Tarball asks dist.tarball as before, and the download
// succeeds.
func TestGuessFailureFallsBackSilently(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusBadGateway} {
		e := newEnv(t, Config{})
		var mu sync.Mutex
		tarballs := 0
		front := proxyWith(t, e, aheadConfig, func(w http.ResponseWriter, r *http.Request) bool {
			if !strings.Contains(r.URL.Path, "/-/") {
				return false
			}
			mu.Lock()
			defer mu.Unlock()
			tarballs++
			if tarballs == 1 {
				http.Error(w, "not yet", status)
				return true
			}
			return false
		})
		e.reg.Publish("p", "1.0.0", tgz(t), fakeregistry.WithTarballURL(guessedURL(front, "p")))
		v, err := front.c.Version(context.Background(), "p", "1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		if err := readAll(t, front.c, "p", v); err != nil {
			t.Fatalf("%d at the guessed URL: %v, want the download asked again", status, err)
		}
		mu.Lock()
		if tarballs != 2 {
			t.Errorf("%d at the guessed URL: %d tarball requests, want 2", status, tarballs)
		}
		mu.Unlock()
	}
}

// TestGuessedTarballIsCheckedAsAny: the answer taken from the guess is
// checked against the manifest's integrity like any download.
func TestGuessedTarballIsCheckedAsAny(t *testing.T) {
	e := newEnv(t, Config{})
	front := proxyWith(t, e, aheadConfig, func(http.ResponseWriter, *http.Request) bool { return false })
	wrong := fakeregistry.WithIntegrity("sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==")
	e.reg.Publish("p", "1.0.0", tgz(t), fakeregistry.WithTarballURL(guessedURL(front, "p")), wrong)
	v, err := front.c.Version(context.Background(), "p", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := readAll(t, front.c, "p", v); !errors.Is(err, ErrIntegrity) {
		t.Errorf("Verify = %v, want ErrIntegrity", err)
	}
	if n := e.reg.TarballDownloads("p", "1.0.0"); n != 1 {
		t.Errorf("%d tarball requests, want 1 (the guessed one)", n)
	}
}
