package web

import (
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// warmCookie lists the warm requests this browser submitted (ids are
// secrets: the mirror never lists other people's requests).
const warmCookie = "pkgscope_warm"

// maxWarmCookieIDs is how many of its requests a browser remembers.
const maxWarmCookieIDs = 8

var warmID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// warmSummary is one request on the home page.
type warmSummary struct {
	ID string
	warm.Progress
}

func (p *Pages) myWarmRequests(c echo.Context) []warmSummary {
	if p.d.Warm == nil {
		return nil
	}
	var out []warmSummary
	for _, id := range cookieIDs(c) {
		pr, err := p.d.Warm.Progress(c.Request().Context(), id)
		if err != nil {
			continue // expired or never existed
		}
		pr.Items = nil
		out = append(out, warmSummary{ID: id, Progress: pr})
	}
	return out
}

func cookieIDs(c echo.Context) []string {
	ck, err := c.Cookie(warmCookie)
	if err != nil {
		return nil
	}
	var ids []string
	for _, id := range strings.Split(ck.Value, ".") {
		if warmID.MatchString(id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// warmSubmit takes the home page's warm form: specs, one a line, or a
// lockfile pasted with its file name.
func (p *Pages) warmSubmit(c echo.Context) error {
	if p.d.Warm == nil {
		return p.fail(c, &explore.NotFoundError{What: "warm queue on this mirror"})
	}
	if crossSite(c.Request()) {
		// SameSite=Strict keeps other sites' forms from carrying the
		// login cookie, but not a sibling host's (another.example.com is
		// the same site as pkgscope.example.com): such a form would queue
		// thousands of packages on this browser's token.
		return p.render(c, http.StatusForbidden, "error", page{Title: "Forbidden", Error: "A warm request from another site's page is refused: use the form on this mirror's home page."})
	}
	var body warm.PostBody
	if lf := c.FormValue("lockfile"); strings.TrimSpace(lf) != "" {
		body.Lockfile = &warm.PostLockfile{Name: c.FormValue("lockfileName"), Content: lf, PackageJSON: c.FormValue("packageJson")}
	} else {
		for _, l := range strings.Split(c.FormValue("specs"), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				body.Specs = append(body.Specs, l)
			}
		}
	}
	id, err := p.d.Warm.Accept(c.Request().Context(), body)
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			msg, _ := he.Message.(string)
			return p.render(c, he.Code, "error", page{Title: "Warm request refused", Error: msg})
		}
		return p.fail(c, err)
	}
	ids := append([]string{id}, slices.DeleteFunc(cookieIDs(c), func(s string) bool { return s == id })...)
	if len(ids) > maxWarmCookieIDs {
		ids = ids[:maxWarmCookieIDs]
	}
	c.SetCookie(&http.Cookie{Name: warmCookie, Value: strings.Join(ids, "."), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.Scheme() == "https", MaxAge: 7 * 24 * 3600})
	return c.Redirect(http.StatusSeeOther, "/warm/"+id)
}

// warmProgress shows a request's per-package state; while it runs, the
// page refreshes itself (a meta refresh without JavaScript, a quiet poll
// of /v1/warm/{id} with it).
func (p *Pages) warmProgress(c echo.Context) error {
	if p.d.Warm == nil {
		return p.fail(c, &explore.NotFoundError{What: "warm queue on this mirror"})
	}
	pr, err := p.d.Warm.Progress(c.Request().Context(), c.Param("id"))
	if errors.Is(err, warm.ErrNotFound) {
		return p.fail(c, &explore.NotFoundError{What: "warm request " + c.Param("id")})
	}
	if err != nil {
		return p.fail(c, err)
	}
	if c.Request().Header.Get("Accept") == echo.MIMEApplicationJSON {
		// The page's own script polls this (the API's /v1/warm/{id}
		// takes no cookie).
		return c.JSON(http.StatusOK, pr)
	}
	return p.render(c, http.StatusOK, "warm", page{Title: "Warm request", Data: pr})
}
