package jsdelivr_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pkgscope/pkgscope/internal/jsdelivr"
)

// TestRedirectToAnotherHostIsRefused: a jsDelivr answer redirecting to
// another host (an internal address, say) is not followed, as the
// registry client refuses for tarballs; the other host sees no request,
// and the error names neither URL.
func TestRedirectToAnotherHostIsRefused(t *testing.T) {
	var hits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"version":"1.0.0"}`))
	}))
	t.Cleanup(other.Close)
	jsd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/secret-path", http.StatusFound)
	}))
	t.Cleanup(jsd.Close)
	c, err := jsdelivr.New(jsdelivr.Config{DataURL: jsd.URL, CDNURL: jsd.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resolve(t.Context(), "lib", "1"); err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Errorf("Resolve through a redirect to another host: %v, want it refused", err)
	} else if strings.Contains(err.Error(), other.URL) || strings.Contains(err.Error(), "secret-path") || strings.Contains(err.Error(), jsd.URL) {
		t.Errorf("error %q names a URL", err)
	}
	if _, err := c.File(t.Context(), "lib", "1.0.0", "a.js", 0); err == nil {
		t.Error("File through a redirect to another host: no error")
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the other host got %d requests, want 0", n)
	}
}
