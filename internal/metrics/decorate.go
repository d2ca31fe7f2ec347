package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/pkgscope/pkgscope/internal/fill"
)

// Transport returns an http.RoundTripper that counts and times every
// request next sends, as source (next nil: http.DefaultTransport). Wiring
// it into the upstream client's http.Client counts real network requests:
// packuments served from the client's own cache never reach it.
func (m *Metrics) Transport(source string, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if m == nil {
		return next
	}
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		start := time.Now()
		resp, err := next.RoundTrip(req)
		m.upstreamDuration.WithLabelValues(source).Observe(time.Since(start).Seconds())
		status := 0
		if err == nil {
			status = resp.StatusCode
		}
		m.CountUpstream(source, Outcome(status))
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// Outcome names an upstream answer's status for the outcome label: 0 is
// "error" (no answer: refused, reset, timed out).
func Outcome(status int) string {
	switch {
	case status == 0:
		return "error"
	case status < 400:
		return "ok"
	case status == http.StatusNotFound:
		return "not_found"
	case status == http.StatusTooManyRequests:
		return "rate_limited"
	case status < 500:
		return "client_error"
	}
	return "server_error"
}

// Filler times next, the miss path: explore calls it only when the store
// lacks a version, so each observation is one request's wait for an ingest
// (or for another request's ingest of the same version, joined by the
// single-flight and the cross-replica lock).
func (m *Metrics) Filler(next fill.Filler) fill.Filler {
	if m == nil {
		return next
	}
	return fill.FillerFunc(func(ctx context.Context, name, version string) error {
		start := time.Now()
		err := next.Fill(ctx, name, version)
		m.fills.WithLabelValues(outcomeOf(err)).Observe(time.Since(start).Seconds())
		return err
	})
}
