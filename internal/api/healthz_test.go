package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/api"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/version"
)

// TestHealthzSaysWhichBuild: an operator rolling out a release asks each
// replica's /healthz which build it runs.
func TestHealthzSaysWhichBuild(t *testing.T) {
	e := api.New(explore.New(explore.Options{}), nil, api.Options{})
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	var body struct {
		Status string
		version.Info
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("/healthz answered %d %s (%v)", rec.Code, rec.Body, err)
	}
	want := version.Get()
	want.Go = "" // not told without a token
	if body.Status != "ok" || body.Info != want || strings.Contains(rec.Body.String(), `"go"`) {
		t.Errorf("/healthz = %s, want status ok and %+v, no Go release", rec.Body, want)
	}
}
