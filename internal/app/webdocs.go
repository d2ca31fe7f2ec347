package app

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/pkgscope/pkgscope/internal/auth"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/webdocs"
)

// newWebDocs builds the explore_web_docs service. It reads its four data
// packages through svc, so they are mirrored, pinned and warmed like any
// package; nothing is loaded until the first call or Warm. svc is the
// store-only chain (explore.Service.StoreOnly).
func newWebDocs(svc *explore.Service, access explore.Access, cfg config.Config, log *slog.Logger, mdnClient *http.Client) *webdocs.Service {
	opt := cfg.WebDocs()
	opt.Logger, opt.HTTPClient, opt.Access = log, mdnClient, access
	return webdocs.New(storedOnly{svc}, opt)
}

// storedOnly gives webdocs the store-only chain: its dataset is kept for
// the process's life, so it must come from registry-verified, stored
// bytes, never from the jsDelivr fallback. It reads them as the mirror,
// not as the caller who triggered the load.
type storedOnly struct{ svc *explore.Service }

func (p storedOnly) Open(ctx context.Context, t explore.Target) (*explore.Opened, error) {
	return p.svc.Open(auth.WithoutIdentity(ctx), t)
}

func (p storedOnly) FileOf(ctx context.Context, o *explore.Opened, path string) (store.File, []byte, *explore.Opened, error) {
	return p.svc.FileOf(auth.WithoutIdentity(ctx), o, path)
}
