package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/jsdelivr"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/semver"
)

// jsdAPI serves jsDelivr-compatible endpoints from the mirror's store, so
// that tools written against jsDelivr switch by changing the base URL:
//
//	GET /v1/packages/npm/{name}                          package metadata
//	GET /v1/packages/npm/{name}/resolved?specifier=S     the version S resolves to
//	GET /v1/packages/npm/{name}@{version}[?structure=flat] the version's files
//	GET /npm/{name}[@{spec}][/{path}]                    one file (the default file without a path)
//
// The JSON is jsDelivr's (internal/jsdelivr's types, in its field order,
// compact, not HTML-escaped); hashes are base64 sha256 and sizes those of
// the stored files, which jsDelivr computes the same way. Versions are
// served from the store (filling it on a miss), never from jsDelivr
// itself: every endpoint reads through the chain without its fallback
// link (explore.Service.StoreOnly), access first. Differences: ranges
// resolve as npm would install them (jsDelivr takes the highest match
// even when latest satisfies the range); links
// name only this mirror's own endpoints (no stats, no entrypoints).
// Errors use jsDelivr's shape {"status","message"} where jsDelivr has one
// (400, 403 for a package too large, 404); others are the mirror's own,
// with Retry-After on a 503.
type jsdAPI struct {
	svc   *explore.Service // the store-only chain: explore.Service.StoreOnly
	stall time.Duration    // Options.StallTimeout
}

func registerJSDelivr(e *echo.Echo, svc *explore.Service, stall time.Duration) {
	j := &jsdAPI{svc: svc.StoreOnly(), stall: stall}
	e.GET("/v1/packages/npm/*", j.shaped(j.data))
	e.GET("/npm/*", j.shaped(j.cdn))
}

// shaped writes the errors jsDelivr has a shape for in that shape, and
// leaves the others to the API's error handler.
func (j *jsdAPI) shaped(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := h(c)
		if err == nil {
			return nil
		}
		class := explore.Classify(err)
		status := class.Status
		switch {
		case status == http.StatusBadRequest, status == http.StatusNotFound:
		case class.Code == "package_too_large":
			status = http.StatusForbidden
		default:
			return err
		}
		return writeCompact(c, status, "no-store", struct {
			Status  int    `json:"status"`
			Message string `json:"message"`
		}{status, err.Error()})
	}
}

// writeCompact writes v as JSON.stringify would: compact, no HTML
// escaping, no trailing newline.
func writeCompact(c echo.Context, status int, cacheHeader string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", cacheHeader)
	return c.Blob(status, "application/json; charset=utf-8", bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// splitPackage splits "@scope/name@1.0.0/x" into "@scope/name" and
// "@1.0.0/x", the name as npmspec.SplitPath finds it (the path is decoded,
// so an escaped scope slash works too); name is "" when there is none.
func splitPackage(rest string) (name, tail string) {
	r, _, err := npmspec.SplitPath(rest)
	if err != nil || !strings.HasPrefix(rest, r.Name) {
		return "", rest
	}
	return r.Name, rest[len(r.Name):]
}

func notFound(msg string) error { return &explore.NotFoundError{What: msg} }

func (j *jsdAPI) data(c echo.Context) error {
	name, tail := splitPackage(strings.TrimPrefix(c.Request().URL.Path, "/v1/packages/npm/"))
	if err := npmspec.ValidateName(name); err != nil {
		return inputErr("package", err.Error())
	}
	switch {
	case tail == "":
		return j.metadata(c, name)
	case tail == "/resolved":
		return j.resolved(c, name)
	case strings.HasPrefix(tail, "@") && !strings.Contains(tail, "/"):
		return j.listing(c, name, tail[1:])
	}
	return notFound("endpoint " + c.Request().URL.Path + " on this mirror (it serves package metadata, resolved and version listings)")
}

// base is this mirror's URL as the client reached it, for links.
func base(c echo.Context) string { return c.Scheme() + "://" + c.Request().Host }

func (j *jsdAPI) metadata(c echo.Context, name string) error {
	p, err := j.svc.Versions().Packument(c.Request().Context(), name)
	if err != nil {
		return err
	}
	out := jsdelivr.Metadata{Type: "npm", Name: name, Tags: p.DistTags, Versions: []jsdelivr.MetadataVersion{}, Links: map[string]string{}}
	if out.Tags == nil {
		out.Tags = map[string]string{}
	}
	for _, v := range slices.SortedFunc(maps.Keys(p.Versions), func(a, b string) int { return semver.Compare(b, a) }) {
		out.Versions = append(out.Versions, jsdelivr.MetadataVersion{Version: v,
			Links: map[string]string{"self": base(c) + "/v1/packages/npm/" + name + "@" + v}})
	}
	return writeCompact(c, http.StatusOK, cacheControl(c, false), out)
}

func (j *jsdAPI) resolved(c echo.Context, name string) error {
	spec, err := explore.Target{PackageName: name, Version: c.QueryParam("specifier")}.Spec()
	if err != nil {
		return err
	}
	v, err := j.svc.Versions().Resolve(c.Request().Context(), name, spec)
	out := jsdelivr.Resolved{Type: "npm", Name: name, Links: map[string]string{}}
	switch {
	case errors.Is(err, semver.ErrNoMatch):
	case err != nil:
		return err
	default:
		out.Version = &v
		out.Links["self"] = base(c) + "/v1/packages/npm/" + name + "@" + v
	}
	return writeCompact(c, http.StatusOK, cacheControl(c, false), out)
}

func (j *jsdAPI) listing(c echo.Context, name, version string) error {
	structure := c.QueryParam("structure")
	if structure != "" && structure != "flat" && structure != "tree" {
		return inputErr("structure", fmt.Sprintf("%q: want tree (the default) or flat", structure))
	}
	if spec, err := npmspec.ParseSpec(version); err != nil || spec.Kind != npmspec.Version {
		return notFound(fmt.Sprintf("version %s for %s. Make sure you use a specific version number, and not a version range or a tag", version, name))
	}
	ctx := c.Request().Context()
	o, err := j.svc.Open(ctx, explore.Target{PackageName: name, Version: version})
	if err != nil {
		return err
	}
	def, err := j.defaultFile(c, o)
	if err != nil {
		return err
	}
	if structure == "flat" {
		return writeCompact(c, http.StatusOK, cacheControl(c, true), jsdelivr.Listing{
			Type: "npm", Name: o.Name, Version: o.Version, Default: def, Files: jsdelivr.Flat(o.Files)})
	}
	return writeCompact(c, http.StatusOK, cacheControl(c, true), jsdelivr.TreeListing{
		Type: "npm", Name: o.Name, Version: o.Version, Default: def, Files: jsdelivr.Tree(o.Files)})
}

// defaultFile picks the version's default file from its package.json.
func (j *jsdAPI) defaultFile(c echo.Context, o *explore.Opened) (*string, error) {
	if !has(o, "package.json") {
		return nil, nil
	}
	_, pj, _, err := j.svc.FileOf(c.Request().Context(), o, "package.json")
	if err != nil {
		return nil, err
	}
	return jsdelivr.DefaultFile(pj, func(p string) bool { return has(o, p) }), nil
}

func has(o *explore.Opened, p string) bool {
	i := sort.Search(len(o.Files), func(i int) bool { return o.Files[i].Path >= p })
	return i < len(o.Files) && o.Files[i].Path == p
}

// cdn serves /npm/{name}[@{spec}][/{path}] like jsDelivr's CDN: any spec
// (range, tag, none for latest), and the default file when no path is
// given.
func (j *jsdAPI) cdn(c echo.Context) error {
	name, tail := splitPackage(strings.TrimPrefix(c.Request().URL.Path, "/npm/"))
	if err := npmspec.ValidateName(name); err != nil {
		return inputErr("package", err.Error())
	}
	var spec, file string
	if rest, ok := strings.CutPrefix(tail, "@"); ok {
		spec, file, _ = strings.Cut(rest, "/")
	} else {
		file = strings.TrimPrefix(tail, "/")
	}
	ctx := c.Request().Context()
	o, err := j.svc.Open(ctx, explore.Target{PackageName: name, Version: spec})
	if err != nil {
		return err
	}
	if file == "" {
		def, err := j.defaultFile(c, o)
		if err != nil {
			return err
		}
		if def == nil {
			return notFound(fmt.Sprintf("default file of %s@%s: its package.json names none (jsdelivr, browser or main)", o.Name, o.Version))
		}
		file = *def
	}
	f, body, _, err := j.svc.FileOfStream(ctx, o, file)
	if err != nil {
		return err
	}
	sp, _ := npmspec.ParseSpec(spec)
	serveFile(c, "X-Jsd-Version", o.Version, f, body, sp.Kind == npmspec.Version, j.stall)
	return nil
}
