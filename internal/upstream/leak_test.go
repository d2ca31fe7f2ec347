package upstream

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// TestErrorsNameNoURLOrAddress: a registry that cannot be reached, or
// that cuts its answer short, gives an error that says what failed in
// words, never the registry's URL, a token in its path, or its address.
// net/http's own errors name all three.
func TestErrorsNameNoURLOrAddress(t *testing.T) {
	const secret = "s3cr3t-token-in-path"
	closed := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // nothing listens there now: connection refused
		return "http://" + addr + "/" + secret + "/"
	}
	cut := func(t *testing.T) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte(`{"name":"p"`))
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/" + secret + "/"
	}
	for name, c := range map[string]struct {
		registry func(*testing.T) string
		words    string
	}{
		"connection refused": {closed, "connection refused"},
		"answer cut short":   {cut, "closed before the answer was complete"},
	} {
		t.Run(name, func(t *testing.T) {
			u := c.registry(t)
			e := newEnvFor(t, fakeregistry.New(t), u, Config{})
			_, err := e.c.Packument(context.Background(), "p")
			var ue *unavailable.Error
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want an *unavailable.Error", err)
			}
			host := strings.TrimPrefix(strings.Split(u, "/"+secret)[0], "http://")
			hostOnly, _, _ := net.SplitHostPort(host)
			for _, leak := range []string{secret, host, hostOnly, "http://"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error %q names %q", err, leak)
				}
			}
			if !strings.Contains(err.Error(), c.words) {
				t.Errorf("error %q does not say %q", err, c.words)
			}
		})
	}
}

// TestDetailKeepsTheTransportError: what the answer leaves out goes to
// the log through Detail.
func TestDetailKeepsTheTransportError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	e := newEnvFor(t, fakeregistry.New(t), "http://"+addr+"/", Config{})
	_, err = e.c.Packument(context.Background(), "p")
	if d := Detail(err); !strings.Contains(d, addr) || !strings.Contains(d, "refused") {
		t.Errorf("Detail = %q, want the whole transport error", d)
	}
	if Detail(errors.New("x")) != "" {
		t.Error("Detail of an error with no transport failure is not empty")
	}
}
