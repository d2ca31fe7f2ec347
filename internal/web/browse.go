package web

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/pkgpath"
	"github.com/pkgscope/pkgscope/internal/semver"
	"github.com/pkgscope/pkgscope/internal/store"
)

// browseData is what the folder and file pages show.
type browseData struct {
	Name, Version string
	Path          string // the folder or file, no leading slash ("" for the root)
	Base          string // /browse/{name}@{version}/
	Crumbs        []crumb
	Versions      *versionsData
	// Folder view: Entries from the From'th (0-based) of Total.
	Entries         []entry
	From, Total     int
	Prev, Next      string
	Files, AllFiles int
	Bytes           int64
	Grep            *grepData
	// File view.
	File *fileData
}

type crumb struct{ Name, Href string }

// entry is one line of a folder listing: a file, or a folder with the
// number of files and bytes under it.
type entry struct {
	Name, Href string
	Dir        bool
	Files      int
	Bytes      int64
}

// browse serves /browse/{name}@{version}/{path}.
func (p *Pages) browse(c echo.Context) error {
	rest := strings.TrimPrefix(c.Request().URL.Path, "/browse/")
	t, file, err := npmspec.SplitPath(rest)
	if err != nil {
		return p.fail(c, &explore.InputError{Field: "url", Err: err})
	}
	o, exact, err := p.stored(c, t.Name, t.Spec)
	// /browse/{name}[@{spec}] without a slash is the package page; with
	// one, the version's files.
	pkgPage := file == "" && !strings.HasSuffix(rest, "/")
	if exact != "" && exact != t.Spec {
		// A range or tag: send the reader to the exact version, so the
		// page and its links name what they show and never move. It
		// needs no fill: the registry's metadata resolves it.
		u := "/browse/" + t.Name + "@" + exact
		if !pkgPage {
			u += "/" + file
		}
		if q := c.QueryString(); q != "" {
			u += "?" + q
		}
		return c.Redirect(http.StatusFound, u)
	}
	if errors.Is(err, errNotStored) {
		return p.offerFetch(c, t.Name, exact)
	}
	if err != nil {
		return p.fail(c, err)
	}
	if pkgPage {
		return p.packagePage(c, o)
	}
	base := "/browse/" + o.Name + "@" + o.Version + "/"
	d := &browseData{Name: o.Name, Version: o.Version, Base: base}
	folder := strings.TrimSuffix(file, "/")
	if file != "" && !strings.HasSuffix(file, "/") {
		if i, ok := slices.BinarySearchFunc(o.Files, file, func(f store.File, p string) int { return strings.Compare(f.Path, p) }); ok {
			return p.fileView(c, d, o, o.Files[i])
		}
		if !hasFolder(o.Files, file) {
			return p.missing(c, o, file)
		}
		return c.Redirect(http.StatusFound, base+file+"/")
	}
	if folder != "" && !hasFolder(o.Files, folder) {
		return p.missing(c, o, folder)
	}
	d.Path = folder
	d.Crumbs = crumbs(base, folder, true)
	d.Entries, d.Files, d.Bytes = listFolder(o.Files, folder, base)
	d.AllFiles, d.Total = len(o.Files), len(d.Entries)
	if s := c.QueryParam("from"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n >= d.Total {
			return p.fail(c, &explore.InputError{Field: "from", Err: fmt.Errorf("give an entry number from 0 to %d", max(0, d.Total-1))})
		}
		d.From = n
	}
	if d.From > 0 {
		d.Prev = "?from=" + strconv.Itoa(max(0, d.From-p.lim.FolderEntries))
	}
	if end := d.From + p.lim.FolderEntries; end < d.Total {
		d.Next = "?from=" + strconv.Itoa(end)
		d.Entries = d.Entries[d.From:end]
	} else {
		d.Entries = d.Entries[d.From:]
	}
	d.Versions = p.versions(c, o.Name, o.Version)
	status := http.StatusOK
	if q := c.QueryParam("grep"); q != "" {
		d.Grep = p.grep(c, o, folder, q)
		if d.Grep.Status != 0 {
			// The folder is shown with the grep's error, under the
			// status the API gives it: a bad pattern is a 400 to a
			// script, not a page that worked.
			status = d.Grep.Status
		}
	}
	title := o.Name + "@" + o.Version + "/" + d.Path
	if d.Grep != nil {
		title = "grep " + d.Grep.Pattern + " in " + title
	}
	return p.render(c, status, "folder", page{Title: title, Data: d})
}

// hasFolder reports whether some file lies under folder/.
func hasFolder(files []store.File, folder string) bool {
	prefix := folder + "/"
	i, _ := slices.BinarySearchFunc(files, prefix, func(f store.File, p string) int { return strings.Compare(f.Path, p) })
	return i < len(files) && strings.HasPrefix(files[i].Path, prefix)
}

// listFolder returns folder's direct entries, folders first, each in byte
// order of their names, with the files and bytes under the folder. files
// are in byte order, so folder's files are one run of them: one pass over
// that run.
func listFolder(files []store.File, folder, base string) ([]entry, int, int64) {
	prefix := ""
	if folder != "" {
		prefix = folder + "/"
	}
	lo, _ := slices.BinarySearchFunc(files, prefix, func(f store.File, p string) int { return strings.Compare(f.Path, p) })
	var dirs, plain []entry
	var n int
	var total int64
	for _, f := range files[lo:] {
		if !strings.HasPrefix(f.Path, prefix) {
			break
		}
		n++
		total += f.Size
		rel := f.Path[len(prefix):]
		if dir, _, ok := strings.Cut(rel, "/"); ok {
			if len(dirs) == 0 || dirs[len(dirs)-1].Name != dir {
				dirs = append(dirs, entry{Name: dir, Href: base + pkgpath.Escape(prefix+dir) + "/", Dir: true})
			}
			dirs[len(dirs)-1].Files++
			dirs[len(dirs)-1].Bytes += f.Size
			continue
		}
		plain = append(plain, entry{Name: rel, Href: base + pkgpath.Escape(f.Path), Files: 1, Bytes: f.Size})
	}
	// A folder's files are one run in byte order, but runs sort by the
	// whole path: "dist-x/a" before "dist/a" ('-' < '/'). Order folders
	// by name.
	slices.SortFunc(dirs, func(a, b entry) int { return strings.Compare(a.Name, b.Name) })
	return append(dirs, plain...), n, total
}

// crumbs links each folder of p; the last element is a link too when
// linkLast (a folder page links its own name to itself for the grep form).
func crumbs(base, p string, linkLast bool) []crumb {
	out := []crumb{{Name: strings.TrimSuffix(strings.TrimPrefix(base, "/browse/"), "/"), Href: base}}
	if p == "" {
		return out
	}
	parts := strings.Split(p, "/")
	for i, part := range parts {
		href := base + pkgpath.Escape(strings.Join(parts[:i+1], "/")) + "/"
		if i == len(parts)-1 && !linkLast {
			href = ""
		}
		out = append(out, crumb{Name: part, Href: href})
	}
	return out
}

// versionsData is the version switcher: dist-tags first, then releases
// newest first, prereleases folded apart (zod's canary builds outnumber
// its releases ten to one), the current version marked. A browse page
// lists the newest ListNames of each; the package page's ?versions= lists
// every version whose name contains its text ("" for all), so each is
// one link away.
type versionsData struct {
	Name, Current string
	Tags          []verLink // Name is the tag
	Releases, Pre []verLink
	// More counts the versions not listed; All is the page listing them.
	More   int
	All    string
	Filter string
	// Filtered is set on the package page's list of every version.
	Filtered bool
}

// verLink is one version in the switcher.
type verLink struct {
	Name, Version, Href string
	Current             bool
	// Published is when the version was published; zero when unknown
	// (only the package page reads dates).
	Published time.Time
}

// prerelease reports a version with a prerelease part (1.0.0-canary.3).
func prerelease(v string) bool {
	core, _, _ := strings.Cut(v, "+")
	return strings.Contains(core, "-")
}

// versions lists name's dist-tags and versions for the switcher; nil when
// the registry cannot say now (the page is still useful without them).
// filter limits them to versions containing it, all listed, when all.
func (p *Pages) versions(c echo.Context, name, current string) *versionsData {
	return p.versionList(c, name, current, "", false)
}

func (p *Pages) versionList(c echo.Context, name, current, filter string, all bool) *versionsData {
	pk, err := p.d.Packages.Versions().Packument(c.Request().Context(), name)
	if err != nil {
		p.log.Debug("web: versions", "package", name, "err", err)
		return nil
	}
	link := func(label, v string) verLink {
		return verLink{Name: label, Version: v, Href: "/browse/" + name + "@" + v, Current: v == current}
	}
	vd := &versionsData{Name: name, Current: current, Filter: filter, Filtered: all,
		All: "/browse/" + name + "@" + current + "?versions=#versions"}
	tags := make([]string, 0, len(pk.DistTags))
	for t := range pk.DistTags {
		tags = append(tags, t)
	}
	// latest first, then the others by name.
	slices.SortFunc(tags, func(a, b string) int {
		if (a == "latest") != (b == "latest") {
			if a == "latest" {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, t := range tags {
		vd.Tags = append(vd.Tags, link(t, pk.DistTags[t]))
	}
	vs := make([]string, 0, len(pk.Versions))
	for v := range pk.Versions {
		if strings.Contains(v, filter) {
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, func(a, b string) int { return semver.Compare(b, a) })
	for _, v := range vs {
		l := link(v, v)
		l.Name = v
		if prerelease(v) {
			if all || len(vd.Pre) < p.lim.ListNames || v == current {
				vd.Pre = append(vd.Pre, l)
				continue
			}
		} else if all || len(vd.Releases) < p.lim.ListNames || v == current {
			vd.Releases = append(vd.Releases, l)
			continue
		}
		vd.More++
	}
	return vd
}

// grepData is a grep's results on a folder page.
type grepData struct {
	Pattern, Include       string
	CaseInsensitive, Fixed bool
	WholeWord              bool
	Files                  []grepFile
	Matches                int
	Truncated              string
	Next                   string // the page of the following matches
	Error                  string
	// Status is the API's status for Error (explore.Classify), 0 without.
	Status int
	// Notes are the API's notes; with no match, what it ruled out and
	// the widenings it ran (what each would find). Widen links them.
	Notes []string
	Widen []crumb
}

type grepFile struct {
	Path, Href string
	Lines      []grepLine
	// SameAs is the file given before with the same bytes, whose
	// SameLines matching lines this one holds too (not repeated).
	SameAs, SameHref string
	SameLines        int
}

type grepLine struct {
	N    int
	Href string
	Text string
}

// grep runs the page's grep over the version, limited to folder.
func (p *Pages) grep(c echo.Context, o *explore.Opened, folder, pattern string) *grepData {
	g := &grepData{
		Pattern: pattern, Include: c.QueryParam("include"),
		CaseInsensitive: c.QueryParam("i") != "", Fixed: c.QueryParam("F") != "", WholeWord: c.QueryParam("w") != "",
	}
	// In path order with no per-file cap before the page's own: the page
	// groups matches by file, one group per file.
	r := explore.Request{
		PackageName: o.Name, Version: o.Version,
		Pattern: pattern, CaseInsensitive: g.CaseInsensitive, FixedStrings: g.Fixed, WholeWord: g.WholeWord,
		MaxMatches: p.lim.GrepMatches, MaxMatchesPerFile: p.lim.GrepMatches, Sort: "path",
	}
	if folder != "" {
		r.Include = append(r.Include, folder+"/**")
	}
	if g.Include != "" {
		switch {
		case folder == "":
			r.Include = []string{g.Include}
		case strings.Contains(g.Include, "/"):
			// Both must hold: the folder and the user's glob, as the
			// path under the folder.
			r.Include = []string{path.Join(folder, g.Include)}
		default:
			// A glob without a slash names files at any depth (ripgrep's
			// -g, as the API reads include): at any depth under folder.
			r.Include = []string{folder + "/**/" + g.Include}
		}
	}
	r.Cursor = c.QueryParam("cursor")
	res, err := p.d.Packages.Grep(c.Request().Context(), r)
	if err != nil {
		cl := explore.Classify(err)
		g.Status = cl.Status
		if cl.Status >= 500 {
			p.log.Error("web: grep", "err", err)
			if cl.RetryAfter > 0 {
				c.Response().Header().Set("Retry-After", itoa(int(cl.RetryAfter.Seconds())))
			}
			g.Error = "the grep could not run now; try again shortly"
		} else {
			g.Error = err.Error()
		}
		return g
	}
	base := "/browse/" + o.Name + "@" + o.Version + "/"
	for _, m := range res.Matches {
		if m.SameBytesAs != "" {
			g.Files = append(g.Files, grepFile{Path: m.File, Href: base + pkgpath.Escape(m.File),
				SameAs: m.SameBytesAs, SameHref: base + pkgpath.Escape(m.SameBytesAs), SameLines: m.MatchingLines})
			continue
		}
		if len(g.Files) == 0 || g.Files[len(g.Files)-1].Path != m.File {
			g.Files = append(g.Files, grepFile{Path: m.File, Href: base + pkgpath.Escape(m.File)})
		}
		f := &g.Files[len(g.Files)-1]
		text := m.Text
		if l := cutLine([]byte(text), len(text), p.lim.LineWidth); l.Cut > 0 {
			text = l.Text + " …"
		}
		href := f.Href + "#L" + strconv.Itoa(m.Line)
		if m.Line > p.lim.PageLines {
			href = f.Href + "?line=" + strconv.Itoa(m.Line) + "#L" + strconv.Itoa(m.Line)
		}
		f.Lines = append(f.Lines, grepLine{N: m.Line, Href: href, Text: text})
	}
	g.Matches = len(res.Matches)
	g.Notes = res.Notes
	if g.Matches == 0 && r.Cursor == "" {
		g.Widen = widenLinks(c, g)
	}
	if res.Truncated {
		g.Truncated = res.TruncatedBy
	}
	if res.Next != nil {
		// The API's next, as this page's own URL: the rest of the matches.
		q := c.QueryParams()
		q.Set("cursor", res.Next.Cursor)
		g.Next = c.Request().URL.Path + "?" + q.Encode()
	}
	return g
}

// widenLinks are the grep page's own links for the widenings the API
// names for a grep with no match: the same grep with one restriction
// lifted.
func widenLinks(c echo.Context, g *grepData) []crumb {
	var out []crumb
	with := func(name string, edit func(q url.Values)) {
		q := c.QueryParams()
		q.Del("cursor")
		edit(q)
		out = append(out, crumb{Name: name, Href: c.Request().URL.Path + "?" + q.Encode()})
	}
	if !g.Fixed && strings.ContainsAny(g.Pattern, "$^*+?()[]{}|") {
		with("as literal text", func(q url.Values) { q.Set("F", "1") })
	}
	if !g.CaseInsensitive && strings.ToLower(g.Pattern) != strings.ToUpper(g.Pattern) {
		with("ignoring case", func(q url.Values) { q.Set("i", "1") })
	}
	if g.WholeWord {
		with("not only whole words", func(q url.Values) { q.Del("w") })
	}
	if g.Include != "" {
		with("in every file", func(q url.Values) { q.Del("include") })
	}
	return out
}

// pageStart is the first line of the page of a file that holds line n.
func pageStart(n, pageLines int) int { return (n-1)/pageLines*pageLines + 1 }

// fileData is a file page.
type fileData struct {
	Size       int64
	Binary     bool
	Raw        string // the raw bytes' URL
	Lines      []fileLine
	Start, End int // line numbers shown
	Total      int
	Prev, Next string // links to the neighbouring pages
	CutBy      string // "lines" or "bytes" when the page does not reach the end
	Highlight  bool
}

type fileLine struct {
	N    int
	HTML template.HTML
	Cut  int // bytes of the line not shown
}

func (p *Pages) fileView(c echo.Context, d *browseData, o *explore.Opened, f store.File) error {
	d.Path = f.Path
	d.Crumbs = crumbs(d.Base, f.Path, false)
	d.Versions = p.versions(c, o.Name, o.Version)
	// The raw bytes through the page itself, so the login cookie works
	// (the API's /v1/npm wants the Authorization header).
	fd := &fileData{Size: f.Size, Raw: d.Base + pkgpath.Escape(f.Path) + "?raw=1"}
	d.File = fd
	raw := c.QueryParam("raw") != ""
	start, line := 1, 0
	for _, field := range []string{"offset", "line"} {
		s := c.QueryParam(field)
		if s == "" || raw {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return p.fail(c, &explore.InputError{Field: field, Err: errors.New("give a line number, 1 or more")})
		}
		if field == "offset" {
			start = n
		} else {
			// ?line=N#LN: the page holding line N, wherever it is in the
			// file (a bare #L1137 past the first page is sent here by
			// the page's script).
			line, start = n, pageStart(n, p.lim.PageLines)
		}
	}
	if f.Binary && !raw {
		fd.Binary = true
		return p.render(c, http.StatusOK, "file", page{Title: o.Name + "@" + o.Version + "/" + f.Path, Data: d})
	}
	// A page seen before is kept whole (bodies are immutable under their
	// hash): it needs no read of the body at all.
	if raw {
		_, body, _, err := p.d.Packages.FileOfStream(c.Request().Context(), o, f.Path)
		if err != nil {
			return p.fail(c, err)
		}
		defer body.Close()
		return serveRaw(c, f, body)
	}
	lit, err := p.litPage(c, o, f, start)
	if err != nil {
		return p.fail(c, err)
	}
	if line > 0 && start+len(lit.lines)-1 < line && line <= lit.total {
		// The byte budget ended the aligned page before the line: start
		// a few lines above it instead.
		start = max(1, line-lineContext)
		if lit, err = p.litPage(c, o, f, start); err != nil {
			return p.fail(c, err)
		}
	}
	if start > 1 && start > lit.total {
		return p.fail(c, &explore.InputError{Field: "offset", Err: fmt.Errorf("the file has %s", english.Count(lit.total, "line"))})
	}
	fd.Total, fd.Start, fd.End, fd.CutBy = lit.total, start, start+len(lit.lines)-1, lit.cutBy
	fd.Lines, fd.Highlight = lit.lines, lit.lexed
	self := d.Base + pkgpath.Escape(f.Path)
	if start > 1 {
		fd.Prev = self + "?offset=" + strconv.Itoa(max(1, start-p.lim.PageLines))
	}
	if fd.End < lit.total {
		fd.Next = self + "?offset=" + strconv.Itoa(fd.End+1)
	}
	return p.render(c, http.StatusOK, "file", page{Title: o.Name + "@" + o.Version + "/" + f.Path, Data: d})
}

// lineContext is how many lines a page sent to a line (?line=) shows
// above it when the aligned page does not reach it.
const lineContext = 10

// litPage returns the highlighted page of f from line start. A page seen
// before is kept whole (bodies are immutable under their hash): it needs
// no read of the body at all.
func (p *Pages) litPage(c echo.Context, o *explore.Opened, f store.File, start int) (litPage, error) {
	key := litKey{hash: f.Hash, ext: path.Ext(f.Path), start: start, width: p.lim.LineWidth}
	lit, ok := p.lit.Get(key)
	if !ok {
		_, body, _, err := p.d.Packages.FileOfStream(c.Request().Context(), o, f.Path)
		if err != nil {
			return litPage{}, err
		}
		defer body.Close()
		lines, total, cutBy, err := pageOf(body, start, p.lim)
		if err != nil {
			return litPage{}, fmt.Errorf("reading %s of %s@%s: %w", f.Path, o.Name, o.Version, err)
		}
		lit = litPage{total: total, cutBy: cutBy}
		lit.lines, lit.lexed = highlight(f.Path, lines, start)
		p.lit.Add(key, lit, lit.cost())
	}
	return lit, nil
}

// pageLine is one line of a page: its first LineWidth bytes (cut at a
// rune boundary, a trailing CR dropped) and how many bytes were cut.
type pageLine struct {
	Text string
	Cut  int
}

// pageOf reads body's lines and returns those from start on that fit the
// page's budget (PageLines lines, PageBytes bytes counting each line up to
// LineWidth), the file's line count (as cat -n counts), and what cut the
// page short. It keeps only what the page shows: a 128 MiB body, or one
// 5 MB minified line, costs a 64 KiB buffer.
func pageOf(body io.Reader, start int, lim Limits) (lines []pageLine, total int, cutBy string, err error) {
	r := bufio.NewReaderSize(body, 64<<10)
	used := 0
	for {
		var head []byte // the line's first LineWidth+1 bytes at most
		n := 0          // the line's length
		var rerr error
		for {
			var chunk []byte
			chunk, rerr = r.ReadSlice('\n')
			n += len(chunk)
			if room := lim.LineWidth + 1 - len(head); room > 0 {
				head = append(head, chunk[:min(room, len(chunk))]...)
			}
			if rerr != bufio.ErrBufferFull {
				break
			}
		}
		if rerr != nil && rerr != io.EOF {
			return nil, 0, "", rerr
		}
		if n == 0 {
			return lines, total, cutBy, nil // the end (after a final newline, or empty)
		}
		total++
		if rerr == nil { // ended by its newline
			n--
			head = bytes.TrimSuffix(head, []byte("\n"))
		}
		if total >= start && cutBy == "" {
			cost := min(n, lim.LineWidth) + 1
			switch {
			case len(lines) == lim.PageLines:
				cutBy = "lines"
			case used+cost > lim.PageBytes && len(lines) > 0:
				cutBy = "bytes"
			default:
				used += cost
				lines = append(lines, cutLine(head, n, lim.LineWidth))
			}
		}
		if rerr == io.EOF {
			return lines, total, cutBy, nil
		}
	}
}

// cutLine shows a line of n bytes whose first bytes are head: at most
// width of them, cut at a rune boundary, without a trailing CR.
func cutLine(head []byte, n, width int) pageLine {
	if n <= width {
		return pageLine{Text: string(bytes.TrimSuffix(head[:n], []byte("\r")))}
	}
	cut := width
	for cut > 0 && !utf8.RuneStart(head[cut]) {
		cut--
	}
	return pageLine{Text: string(head[:cut]), Cut: n - cut}
}

func itoa(n int) string { return strconv.Itoa(n) }

// serveRaw sends a file's bytes as they are. Package files are untrusted:
// they are served as plain text (or an attachment when binary), never as
// markup or script of this origin, and sandboxed.
func serveRaw(c echo.Context, f store.File, body io.ReadSeeker) error {
	h := c.Response().Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	ctype := "text/plain; charset=utf-8"
	if f.Binary {
		ctype = "application/octet-stream"
		h.Set("Content-Disposition", "attachment; filename="+strconv.Quote(path.Base(f.Path)))
	}
	h.Set(echo.HeaderContentType, ctype)
	// ServeContent streams the body and answers Range requests.
	http.ServeContent(c.Response(), c.Request(), "", time.Time{}, body)
	return nil
}
