package upstream

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/npmrc"
)

// TestLiveRegistry fetches a small real package through whatever registry
// npm on this machine is configured with. It needs the network, so it runs
// only when asked.
func TestLiveRegistry(t *testing.T) {
	if os.Getenv("PKGSCOPE_LIVE") != "1" {
		t.Skip("set PKGSCOPE_LIVE=1 to fetch is-number@7.0.0 from the registry npm is configured with")
	}
	npm, err := npmrc.Load("", os.Getenv)
	if err != nil {
		t.Fatalf("npmrc.Load: %v", err)
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := New(npm, Config{}, &http.Client{Transport: tr})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	p, err := c.Packument(ctx, "is-number")
	if err != nil {
		t.Fatalf("Packument(is-number) from %s: %v", npm, err)
	}
	v, ok := p.Versions["7.0.0"]
	if !ok || p.DistTags["latest"] == "" || v.Dist.Integrity == "" {
		t.Fatalf("is-number packument lacks 7.0.0, latest or integrity: %+v", v)
	}
	data, err := fetchAll(ctx, c, "is-number", v)
	if err != nil {
		t.Fatalf("Tarball(is-number@7.0.0): %v", err)
	}
	if len(data) < 1000 {
		t.Errorf("tarball is %d bytes", len(data))
	}
	t.Logf("is-number: %d versions, latest %s, 7.0.0 tarball %d bytes, verified", len(p.Versions), p.DistTags["latest"], len(data))
}
