package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
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
	if want := version.Get(); body.Status != "ok" || body.Info != want {
		t.Errorf("/healthz = %s, want status ok and %+v", rec.Body, want)
	}
}
