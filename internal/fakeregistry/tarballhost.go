package fakeregistry

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TarballHost is a host serving one download, for tests of what a client
// does when the body goes wrong half way: publish a version
// WithTarballURL(h.URL()) and allow the host in the client's config.
type TarballHost struct {
	srv      *httptest.Server
	data     []byte
	mode     atomic.Value // Mode
	sent     chan struct{}
	sentOnce sync.Once
	requests atomic.Int32
}

// Mode is how a TarballHost answers.
type Mode string

// The modes of a TarballHost.
const (
	// Whole sends the bytes with their Content-Length.
	Whole Mode = "whole"
	// Cut declares the whole Content-Length and sends half: the client
	// reads an unexpected EOF.
	Cut Mode = "cut"
	// Chunked sends the bytes without a Content-Length.
	Chunked Mode = "chunked"
	// Stall sends half, then nothing until the request ends; Sent is
	// closed once the half is out.
	Stall Mode = "stall"
	// Dribble sends one byte every 20 ms (slowloris) until the bytes or
	// the request end.
	Dribble Mode = "dribble"
)

// NewTarballHost starts a host serving data in mode, closed when the test
// ends.
func NewTarballHost(t testing.TB, data []byte, mode Mode) *TarballHost {
	h := &TarballHost{data: data, sent: make(chan struct{})}
	h.mode.Store(mode)
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

// URL is the download's URL.
func (h *TarballHost) URL() string { return h.srv.URL + "/download.tgz" }

// Host is the host's base URL, for a client's allowed tarball hosts.
func (h *TarballHost) Host() string { return h.srv.URL }

// Set switches the mode for the next requests.
func (h *TarballHost) Set(mode Mode) { h.mode.Store(mode) }

// Sent is closed once a Stall answer has sent its half.
func (h *TarballHost) Sent() <-chan struct{} { return h.sent }

// Requests counts the requests served.
func (h *TarballHost) Requests() int { return int(h.requests.Load()) }

func (h *TarballHost) serve(w http.ResponseWriter, r *http.Request) {
	h.requests.Add(1)
	half := h.data[:len(h.data)/2]
	switch h.mode.Load().(Mode) {
	case Cut:
		w.Header().Set("Content-Length", fmt.Sprint(len(h.data)))
		w.Write(half)
	case Chunked:
		w.(http.Flusher).Flush() // the headers go out without a length
		w.Write(h.data)
	case Stall:
		w.Header().Set("Content-Length", fmt.Sprint(len(h.data)))
		w.Write(half)
		w.(http.Flusher).Flush()
		h.sentOnce.Do(func() { close(h.sent) })
		<-r.Context().Done()
	case Dribble:
		w.Header().Set("Content-Length", fmt.Sprint(len(h.data)))
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := range h.data {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
			w.Write(h.data[i : i+1])
			w.(http.Flusher).Flush()
		}
	default:
		w.Write(h.data)
	}
}
