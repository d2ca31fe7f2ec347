// Package web is the mirror's page for people: the developer checking what
// an agent saw, the operator warming a lockfile, the reviewer following a
// link in an agent's answer. It is server-rendered html/template with no
// build step; a little progressive JavaScript (line-range anchors, live
// warm progress) and everything readable with JavaScript off.
//
// Pages (all GET unless said):
//
//	/                                  find a package, recently stored versions, warm form
//	/browse/{name}@{version}           the package page: README, versions with publish dates, dependencies, size
//	/browse/{name}@{version}/          versions and dist-tags, the folder's files with sizes
//	/browse/{name}@{version}/{path}    a folder, or a file with line numbers and highlighting
//	/browse/…/?grep=P                  grep the version (or the folder), results linked to lines
//	/diff/{name}?from=A&to=B           what npm diff prints between two versions, a page at a time
//	/docs?q=, /docs/page?path=, /docs/compat?key=   explore_web_docs
//	/warm/{id}                         a warm request's per-package state (POST /warm submits one)
//	/projects/{id}                     a registered project's node_modules folders and their warmth
//	/login (GET, POST), /logout (POST) a token kept in an HttpOnly, SameSite=Strict cookie
//	POST /browse/…, POST /diff/…       the "Fetch" button of a version the store does not hold
//	/robots.txt                        keeps crawlers to the home page
//
// A GET never fills the store (fetch.go): a version not stored yet shows
// a button that fetches it.
//
// A {version} that is a range or a tag redirects to the exact version, so
// every page names what it shows and its links do not move. The pages read
// packages through the same explore chain as the API (access check first),
// and show files within the API's budgets: a long file is paged, a long
// line cut with a link to the raw bytes.
package web

import (
	"context"
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/lru"
	"github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/session"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/warm"
	"github.com/pkgscope/pkgscope/internal/webdocs"
)

// Packages is how the pages read packages: *explore.Service, whose read
// chain checks the caller's access before anything else.
type Packages interface {
	// Open resolves t and returns the version's files with their sizes.
	Open(ctx context.Context, t explore.Target) (*explore.Opened, error)
	// FileOfStream returns one file of an opened version, its body as a
	// stream the caller closes (charged to max-body-bytes-in-flight).
	FileOfStream(ctx context.Context, o *explore.Opened, path string) (store.File, store.BlobStream, *explore.Opened, error)
	// Grep searches the version's text files.
	Grep(ctx context.Context, r explore.Request) (*explore.GrepResult, error)
	// Versions is the read chain: the pages ask it for a package's
	// dist-tags and versions (Packument).
	Versions() explore.Versions
	// Diff answers the diff action: a page of npm diff's text.
	Diff(ctx context.Context, r explore.Request) (*explore.DiffResult, error)
	// Correct is the API's correction of an error opening name (the
	// closest published names of an unknown package).
	Correct(ctx context.Context, name string, err error) error
	// Fill brings a version into the store and returns it once
	// committed (the Fetch button).
	Fill(ctx context.Context, t explore.Target) (*explore.Opened, error)
}

// Warmer submits warm requests and reports their progress.
type Warmer interface {
	// Submit checks and queues a request exactly as POST /v1/warm does
	// (every item through the access check first) and returns its id.
	Accept(ctx context.Context, body warm.PostBody) (string, error)
	// Progress returns a request's state, or an error matching
	// warm.ErrNotFound.
	Progress(ctx context.Context, id string) (warm.Progress, error)
}

// Projects reports registered projects (project.Service).
type Projects interface {
	// Status returns a project's folders and their warmth after the
	// access check; an error matching project.ErrNotFound for an unknown
	// id.
	Status(ctx context.Context, id string) (*project.Status, error)
}

// Deps are what the pages read. Catalog, WebDocs, Warm and Projects may be nil:
// their parts of the page are then left out.
type Deps struct {
	Packages Packages
	Catalog  store.Catalog
	WebDocs  *webdocs.Service
	Warm     Warmer
	Projects Projects
	// Search asks the registry's search for packages matching text, at
	// most n (upstream.Client.Search); nil leaves it out.
	Search func(ctx context.Context, text string, n int) ([]string, error)
	// Dates returns when name's versions were published, by version, or
	// tooLarge when the registry's full document was over the mirror's
	// cap (upstream.Client.Times); nil leaves dates out. Only the package
	// page of a stored version asks, so following links cannot make the
	// mirror fetch more than one document per stored package per
	// packument-ttl.
	Dates func(ctx context.Context, name string) (dates map[string]time.Time, tooLarge bool, err error)
	// Access is the read chain's access check (explore.Options.Access);
	// nil lets everything through. Lists of names read from the store
	// (the home page's) show only the packages it allows.
	Access explore.Access
	// Auth is true when the mirror has tokens: the login form is shown,
	// and Sessions logs a browser in with a token given to it.
	Auth     bool
	Sessions Sessions
	Logger   *slog.Logger
}

// Sessions starts and ends the web page's logins (session.Manager): the
// cookie carries a session id, never the token.
type Sessions interface {
	// Login checks token and starts a session for it, returning the
	// cookie's value; false when the token is not valid.
	Login(ctx context.Context, token string) (string, bool, error)
	// Logout ends the session of a cookie's value, on every replica.
	Logout(ctx context.Context, value string) error
	// Cookie returns the cookie carrying value ("" clears it).
	Cookie(r *http.Request, value string) *http.Cookie
}

// Limits bound what one page shows, within the API's read budgets.
type Limits struct {
	// PageLines is how many lines of a file one page shows.
	PageLines int
	// PageBytes bounds the bytes of file content on one page.
	PageBytes int
	// FolderEntries is how many entries of a folder one page lists.
	FolderEntries int
	// LineWidth is the bytes of a line shown before it is cut.
	LineWidth int
	// ListNames is how many names and versions lists show.
	ListNames int
	// GrepMatches is how many matches a grep page shows.
	GrepMatches int
	// DatesWait is the longest the package page waits for publish dates
	// (packument-times-timeout); past it the page goes without them.
	DatesWait time.Duration
}

// DefaultLimits keep a warm page under 50 ms of server time
// (BenchmarkWebPages): 1,000 lines (half a read; highlighting costs about
// 0.4 ms per KiB of TypeScript with chroma's lexers), the read's 100 KiB
// and 2,000 bytes a line, 1,000 folder entries (a 5,000-entry folder is
// 700 KB of HTML on one page).
func DefaultLimits() Limits {
	return Limits{PageLines: 1000, PageBytes: 100 << 10, FolderEntries: 1000, LineWidth: 2000, ListNames: 50, GrepMatches: 200, DatesWait: 2 * time.Second}
}

// CookieName is the cookie holding a session id after login.
const CookieName = session.CookieName

// Pages serves the web page.
type Pages struct {
	d    Deps
	lim  Limits
	tmpl map[string]*template.Template
	log  *slog.Logger
	// lit keeps highlighted pages of files: a body is immutable under its
	// hash, and highlighting is most of a file page's cost.
	lit *lru.Cache[litKey, litPage]
	// readmes keeps rendered READMEs by the body's hash and the version's
	// base (relative links point into it): zod's 92 KB README takes
	// goldmark 13 ms to render on the shared machine, the rest of its
	// package page well under that.
	readmes *lru.Cache[readmeKey, template.HTML]
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// New returns the pages over d.
func New(d Deps, lim Limits) *Pages {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	lit := lru.New[litKey, litPage](litBytes, lru.Options{MaxEntryCost: litBytes / 8})
	readmes := lru.New[readmeKey, template.HTML](readmeBytes, lru.Options{MaxEntryCost: readmeBytes / 8})
	return &Pages{d: d, lim: lim, tmpl: parseTemplates(), log: d.Logger, lit: lit, readmes: readmes}
}

// IsPage reports whether a request path is one of the pages (as opposed
// to the API): auth accepts the login cookie, and a missing token
// redirects to the login form, only there.
func IsPage(path string) bool {
	switch {
	case path == "/", path == "/login", path == "/logout", path == "/warm":
		return true
	}
	for _, p := range []string{"/browse/", "/diff/", "/docs", "/warm/", "/projects/", "/static/"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// Public reports whether a page is served without a token: the login form
// and the static files it needs.
func Public(path string) bool {
	return path == "/login" || path == "/robots.txt" || strings.HasPrefix(path, "/static/")
}

// Register mounts the pages on e.
func (p *Pages) Register(e *echo.Echo) {
	e.GET("/", p.home)
	e.GET("/login", p.loginForm)
	e.POST("/login", p.login)
	e.POST("/logout", p.logout)
	e.GET("/robots.txt", func(c echo.Context) error {
		// The same bytes for everyone, token or not: shared caches may keep them.
		c.Response().Header().Set("Cache-Control", "public, max-age=3600")
		return c.String(http.StatusOK, robotsTxt)
	})
	e.GET("/browse/*", p.browse)
	e.POST("/browse/*", p.fetchBrowse)
	e.GET("/diff/*", p.diffPage)
	e.POST("/diff/*", p.fetchDiff)
	e.GET("/docs", p.docsSearch)
	e.GET("/docs/page", p.docsPage)
	e.GET("/docs/compat", p.docsCompat)
	e.POST("/warm", p.warmSubmit)
	e.GET("/warm/:id", p.warmProgress)
	e.GET("/projects/:id", p.projectPage)
	e.GET("/static/highlight.css", func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "public, max-age=86400")
		return c.Blob(http.StatusOK, "text/css; charset=utf-8", highlightCSS())
	})
	e.GET("/static/*", echo.WrapHandler(http.FileServer(http.FS(staticFS))))
	e.RouteNotFound("/*", p.notFound)
}

// page is what every template gets.
type page struct {
	Title   string
	Auth    bool // the mirror has tokens (show login/logout)
	Query   string
	Error   string
	Data    any
	Request *http.Request
}

// render writes a page with status.
func (p *Pages) render(c echo.Context, status int, name string, pg page) error {
	pg.Auth = p.d.Auth
	pg.Request = c.Request()
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	// The pages run only their own script and style; package bytes are
	// always text in them, never markup.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	c.Response().WriteHeader(status)
	return p.tmpl[name].ExecuteTemplate(c.Response(), "layout", pg)
}

// fail renders an error as a page, with the status the API would answer
// (explore.Classify) and a message that never carries internals.
func (p *Pages) fail(c echo.Context, err error) error {
	cl := explore.Classify(err)
	msg := err.Error()
	if cl.Status >= 500 {
		p.log.Error("web page", "path", c.Request().URL.Path, "err", err)
		msg = http.StatusText(cl.Status) + ": the mirror could not answer now; try again shortly."
		if cl.RetryAfter > 0 {
			c.Response().Header().Set("Retry-After", itoa(int(cl.RetryAfter.Seconds())))
		}
	}
	pg := page{Title: http.StatusText(cl.Status), Error: msg}
	if d := closestPackages(err); d != nil {
		pg.Data = d
	}
	return p.render(c, cl.Status, "error", pg)
}
