package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
)

// loginData is the login form's state.
type loginData struct{ Next string }

func (p *Pages) loginForm(c echo.Context) error {
	return p.render(c, http.StatusOK, "login", page{Title: "Log in", Data: loginData{Next: localPath(c.QueryParam("next"))}})
}

// login checks the token and starts a server-side session for it, whose
// id the browser keeps in an HttpOnly, SameSite=Strict cookie: script on
// the page cannot read it, no other site's page can make the browser send
// it, and it is not the token (internal/session).
func (p *Pages) login(c echo.Context) error {
	if crossSite(c.Request()) {
		// Login CSRF: another site's form would log this browser in with
		// the attacker's token, and what the victim then browses (or
		// warms) would be on the attacker's account.
		return p.render(c, http.StatusForbidden, "error", page{Title: "Forbidden", Error: "A login from another site's page is refused: open this mirror's /login yourself."})
	}
	tok := strings.TrimSpace(c.FormValue("token"))
	next := localPath(c.FormValue("next"))
	if p.d.Sessions == nil {
		return c.Redirect(http.StatusSeeOther, next)
	}
	value, ok := "", false
	if tok != "" {
		var err error
		if value, ok, err = p.d.Sessions.Login(c.Request().Context(), tok); err != nil {
			return err
		}
	}
	if !ok {
		return p.render(c, http.StatusUnauthorized, "login", page{Title: "Log in", Error: "That token is not valid for this mirror.", Data: loginData{Next: next}})
	}
	// The browser's earlier session ends: a copy of its cookie (stolen,
	// or planted by a sibling host for the parent domain) would otherwise
	// live on for its idle time beside the new one.
	if err := p.endSession(c); err != nil {
		return err
	}
	c.SetCookie(p.d.Sessions.Cookie(c.Request(), value))
	return c.Redirect(http.StatusSeeOther, next)
}

// logout ends the session on every replica, not only the browser's copy
// of its cookie.
func (p *Pages) logout(c echo.Context) error {
	if crossSite(c.Request()) {
		return p.render(c, http.StatusForbidden, "error", page{Title: "Forbidden", Error: "A logout from another site's page is refused."})
	}
	if p.d.Sessions != nil {
		if err := p.endSession(c); err != nil {
			return err
		}
		c.SetCookie(p.d.Sessions.Cookie(c.Request(), ""))
	}
	return c.Redirect(http.StatusSeeOther, "/login")
}

// endSession ends every session whose cookie the request carries (a
// sibling host's cookie for the parent domain comes with the mirror's
// own, under the same name).
func (p *Pages) endSession(c echo.Context) error {
	for _, ck := range c.Request().CookiesNamed(CookieName) {
		if ck.Value == "" {
			continue
		}
		if err := p.d.Sessions.Logout(c.Request().Context(), ck.Value); err != nil {
			return err
		}
	}
	return nil
}

// localPath keeps a redirect target on this site: a path, never a
// scheme-relative or absolute URL. Browsers drop tabs and newlines from
// URLs and read a backslash as a slash, so "/\t/evil" and "/\\evil" are
// "//evil" to them: a target holding any control character or backslash
// is refused too.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return "/"
	}
	return p
}

// crossSite reports a request another origin's page made: the browser
// says so in Sec-Fetch-Site ("same-site" too: a sibling host shares the
// site, and so the SameSite cookie, but not the origin), or (older
// browsers) in an Origin that is not the request's own host. A form of
// the mirror's own pages is "same-origin"; a typed URL or bookmark
// "none". Over TLS, an Origin on plain http is another origin too, though
// its host is the same: a network attacker's page on the host's http
// side, whose form older browsers send with the SameSite cookie.
func crossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return true
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	return err != nil || u.Host != r.Host || r.TLS != nil && u.Scheme != "https"
}
