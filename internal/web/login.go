package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// loginData is the login form's state.
type loginData struct{ Next string }

func (p *Pages) loginForm(c echo.Context) error {
	return p.render(c, http.StatusOK, "login", page{Title: "Log in", Data: loginData{Next: localPath(c.QueryParam("next"))}})
}

// login checks the token and keeps it in an HttpOnly, SameSite=Strict
// cookie: script on the page cannot read it, and no other site's page
// can make the browser send it.
func (p *Pages) login(c echo.Context) error {
	tok := strings.TrimSpace(c.FormValue("token"))
	next := localPath(c.FormValue("next"))
	if p.d.Verify == nil {
		return c.Redirect(http.StatusSeeOther, next)
	}
	if tok == "" || !p.d.Verify(tok) {
		return p.render(c, http.StatusUnauthorized, "login", page{Title: "Log in", Error: "That token is not valid for this mirror.", Data: loginData{Next: next}})
	}
	c.SetCookie(&http.Cookie{
		Name: CookieName, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: c.Scheme() == "https", MaxAge: int((30 * 24 * time.Hour).Seconds()),
	})
	return c.Redirect(http.StatusSeeOther, next)
}

func (p *Pages) logout(c echo.Context) error {
	c.SetCookie(&http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	return c.Redirect(http.StatusSeeOther, "/login")
}

// localPath keeps a redirect target on this site: a path, never a
// scheme-relative or absolute URL.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
		return "/"
	}
	return p
}
