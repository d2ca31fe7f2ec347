package client

import (
	"net/http"
	"net/url"
	"testing"
)

// FuzzDecodeError checks that whatever a remote answers with an error
// status becomes an *Error with a code and a bounded message, and never
// panics. Seeds: the f.Add calls.
func FuzzDecodeError(f *testing.F) {
	f.Add(404, []byte(`{"error":{"code":"not_found","message":"no such file"}}`), "")
	f.Add(503, []byte(`{"error":{"code":"upstream_unavailable","message":"x"}}`), "30")
	f.Add(502, []byte("<html>Bad Gateway</html>"), "Wed, 21 Oct 2015 07:28:00 GMT")
	f.Add(500, []byte(`{"error":{"code":""}}`), "-1")
	f.Add(429, []byte(`{"error":"slow down"}`), "99999999999999999999")
	f.Add(400, []byte("\xff\xfe\xfd"), "")
	req := &http.Request{URL: &url.URL{Scheme: "http", Host: "pkgscope.test"}}
	f.Fuzz(func(t *testing.T, status int, body []byte, retryAfter string) {
		resp := &http.Response{StatusCode: status, Status: http.StatusText(status), Header: http.Header{}, Request: req}
		resp.Header.Set("Retry-After", retryAfter)
		err := decodeError(resp, body)
		e, ok := err.(*Error)
		if !ok || e.Code == "" || e.Status != status || e.RetryAfter < 0 {
			t.Fatalf("decodeError = %#v", err)
		}
		if e.Code == CodeBadAnswer && len(e.Message) > maxQuotedBody+200 {
			t.Fatalf("message of %d bytes repeats the body unbounded", len(e.Message))
		}
	})
}
