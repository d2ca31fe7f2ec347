package app

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/auth"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/session"
	"github.com/pkgscope/pkgscope/internal/upstream"
	"github.com/pkgscope/pkgscope/internal/warm"
	"github.com/pkgscope/pkgscope/internal/web"
)

// webAuth is auth's configuration with the web page: the login form and
// its static files need no token, and the pages (only they) accept the
// login's session cookie and send a browser without one to the form.
func webAuth(sessions *session.Manager) auth.Options {
	return auth.Options{
		Skip:   func(c echo.Context) bool { return auth.SkipHealth(c) || web.Public(c.Request().URL.Path) },
		Cookie: web.CookieName, Session: sessions.Identity, Page: web.IsPage, Login: "/login",
	}
}

// mountWeb serves the web page from the same service, store, registry and
// warm queue as the API; datesWait is packument-times-timeout.
func (a *App) mountWeb(e *echo.Echo, svc *explore.Service, wh *warm.Handlers, reg *upstream.Client, access explore.Access, datesWait time.Duration) {
	lim := web.DefaultLimits()
	lim.DatesWait = datesWait
	web.New(web.Deps{
		Packages: svc, Catalog: a.Store, WebDocs: a.WebDocs, Warm: wh, Projects: a.Projects, Access: access, Search: reg.Search,
		Dates: func(ctx context.Context, name string) (map[string]time.Time, bool, error) {
			t, err := reg.Times(ctx, name)
			if err != nil {
				return nil, false, err
			}
			return t.Versions, t.TooLarge, nil
		},
		Auth: a.Tokens.Len() > 0, Sessions: a.sessions,
	}, lim).Register(e)
}
