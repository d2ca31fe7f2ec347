package explore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	pathpkg "path"
	"slices"
	"strings"

	"github.com/pkgscope/pkgscope/internal/closest"
	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/pkgpath"
	"github.com/pkgscope/pkgscope/internal/semver"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/unavailable"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// Corrections: a mistake an agent makes gets the nearest thing that
// exists, never a bare 404, and never the mirror's internals (hosts,
// URLs). What can be read one way only is read that way, with a note.

// maxSuggestions is how many names or paths a correction offers.
const maxSuggestions = 5

// Suggester names published packages close to a name the registry does
// not know (the registry's search, internal/upstream).
type Suggester interface {
	// Suggest returns package names close to name, best first; an error
	// means none are known.
	Suggest(ctx context.Context, name string) ([]string, error)
}

// start begins an action: its budget (read's or the others'), then
// begin.
func (s *Service) start(ctx context.Context, r *Request, read bool) (*Budget, *Opened, Answer, error) {
	b, err := s.Budget(r.MaxBytes, read)
	if err != nil {
		return nil, nil, Answer{}, err
	}
	o, a, err := s.begin(ctx, r)
	return b, o, a, err
}

// begin applies the corrections that need no package (a name@spec split),
// opens the version and returns the answer's header.
func (s *Service) begin(ctx context.Context, r *Request) (*Opened, Answer, error) {
	var notes []string
	if ref, ok := npmspec.SplitNameSpec(r.PackageName); ok && ref.Spec != "" {
		name, spec := ref.Name, ref.Spec
		if r.Version != "" && r.Version != spec {
			return nil, Answer{}, &InputError{Field: "packageName", Err: fmt.Errorf("%q names version %q but version is %q: give the name alone in packageName", r.PackageName, spec, r.Version)}
		}
		notes = append(notes, fmt.Sprintf("packageName %q was read as packageName %q, version %q", r.PackageName, name, spec))
		r.PackageName, r.Version = name, spec
	}
	asked := r.PackageName
	if note := unscoped(&r.PackageName); note != "" {
		notes = append(notes, note)
	}
	o, err := s.Open(ctx, Target{PackageName: r.PackageName, Version: r.Version})
	if err != nil {
		err = s.unknownPackage(ctx, r.PackageName, err)
		if nf := (*NotFoundError)(nil); asked != r.PackageName && errors.As(err, &nf) {
			nf.What += fmt.Sprintf(" (read from %q)", asked)
		}
		return nil, Answer{}, err
	}
	a := Answer{PackageName: o.Name, Version: o.Version, ResolvedFrom: resolvedFrom(r.Version), Source: o.Source, Notes: notes}
	if latest, msg := s.skippedLatest(ctx, o, r.Version); latest != "" {
		what := NoVersionGiven
		if r.Version != "" {
			what = a.ResolvedFrom
		}
		a.ResolvedFrom = fmt.Sprintf("%s; latest %s is deprecated, so the newest version that is not (as npm picks)", what, latest)
		a.Note("dist-tag latest is %s, deprecated (%q): to read it anyway, give version %q", latest, s.deprecationText(msg), latest)
	}
	// Said once per answer: not again on the pages that continue it
	// (a cursor, a read from a later line or column).
	if o.Deprecated != "" && r.Cursor == "" && r.Offset <= 1 && r.Column <= 1 {
		a.Notes = append(a.Notes, s.deprecationNote(o))
	}
	if s.browse != "" {
		a.Browse = s.browse + "/browse/" + o.Name + "@" + o.Version + "/"
	}
	return o, a, nil
}

// unscoped reads a scoped name written without its "@" ("types/node")
// as the scoped name (Scoped), and returns the note saying so ("" when
// the name is left as it is).
func unscoped(name *string) string {
	scoped, ok := Scoped(*name)
	if !ok {
		return ""
	}
	note := fmt.Sprintf("packageName %q was read as %q: a scoped name starts with @", *name, scoped)
	*name = scoped
	return note
}

// Scoped returns the scoped name a name written without its "@" stands
// for ("types/node" is @types/node), and whether name was one. No
// unscoped npm name holds a "/", so it can mean nothing else; refused, it
// cost an agent a call to learn that the "@" was missing.
func Scoped(name string) (string, bool) {
	if strings.HasPrefix(name, "@") || strings.Count(name, "/") != 1 || npmspec.ValidateName("@"+name) != nil {
		return name, false
	}
	return "@" + name, true
}

// deprecationNote tells the first page of an answer that the version is
// deprecated, in the registry's words, cut at Limits.DeprecationNoteBytes
// (one line: newlines become spaces).
func (s *Service) deprecationNote(o *Opened) string {
	return fmt.Sprintf("%s@%s is deprecated: %s", o.Name, o.Version, s.deprecationText(o.Deprecated))
}

// deprecationText is a deprecation message on one line (newlines and
// other control characters become spaces, as in messages stored before
// upstream.Printable), cut at Limits.DeprecationNoteBytes.
func (s *Service) deprecationText(msg string) string {
	msg = strings.Join(strings.Fields(upstream.Printable(msg)), " ")
	if limit := s.lim.DeprecationNoteBytes; limit > 0 && len(msg) > limit {
		msg = strings.ToValidUTF8(msg[:limit], "") + fmt.Sprintf("… [cut at %d bytes, setting deprecation-note-bytes]", limit)
	}
	return msg
}

// skippedLatest returns dist-tag latest and its deprecation message when
// a range (a bare name is the range "*") passed over it because it is
// deprecated: npm's rule (semver.Select) picks the newest version that
// is not, and an agent reading "latest" in the header would take the
// answer for latest. It reads the packument the range was just resolved
// from (the registry client's memory); a version another source answered,
// or a packument that cannot be read, gives "".
func (s *Service) skippedLatest(ctx context.Context, o *Opened, version string) (latest, msg string) {
	spec, err := npmspec.ParseSpec(version)
	if err != nil || spec.Kind != npmspec.Range || o.fromElsewhere() {
		return "", ""
	}
	p, err := s.pkgs.Packument(ctx, o.Name)
	if err != nil {
		return "", ""
	}
	latest = p.DistTags["latest"]
	pv, ok := p.Versions[latest]
	if !ok || latest == o.Version || pv.Deprecation() == "" {
		return "", ""
	}
	// "*" takes latest even when it is a prerelease (semver.Select);
	// another range only when latest satisfies it.
	if spec.Raw != "*" {
		if v, err := semver.Select(spec, []semver.Candidate{{Version: latest}}, nil); err != nil || v != latest {
			return "", ""
		}
	}
	return latest, pv.Deprecation()
}

// NoVersionGiven is why a request without a version got the version it
// got: Answer.ResolvedFrom is "latest: " and it, or, when latest was
// deprecated and passed over, it, "; " and why.
const NoVersionGiven = "no version given"

// resolvedFrom says why the version answered was chosen.
func resolvedFrom(version string) string {
	if version == "" {
		return "latest: " + NoVersionGiven
	}
	spec, err := npmspec.ParseSpec(version)
	if err != nil {
		return ""
	}
	switch spec.Kind {
	case npmspec.Version:
		return "exact"
	case npmspec.Range:
		return "range " + spec.Raw
	}
	return "dist-tag " + spec.Raw
}

// Correct is the correction an answer gives an error opening name: an
// unknown package names the closest published ones, a name with capitals
// its lower-case form; other errors are returned unchanged. The web page
// uses it where it opens versions itself.
func (s *Service) Correct(ctx context.Context, name string, err error) error {
	return s.unknownPackage(ctx, name, err)
}

// unknownPackage turns the registry's "no such package" into one that
// names the closest published packages; other errors pass unchanged.
//
// A name with capitals is almost always a mistake for the lower-case one
// (npm refuses capitals in new names; only old ones such as JSONStream
// have them), and the registry refuses such a name with 403 as well as
// 404: both become a 404 naming the lower-case name, where a 403 would
// otherwise read as an outage and advise checking the auth token.
func (s *Service) unknownPackage(ctx context.Context, name string, err error) error {
	if lower := strings.ToLower(name); lower != name && refusedName(err) {
		return &NotFoundError{What: fmt.Sprintf("package %q on the registry", name),
			Hint: fmt.Sprintf("package names are lower case: try %q (only a few old packages, such as JSONStream, have capitals)", lower)}
	}
	nf := &NotFoundError{What: fmt.Sprintf("package %q on the registry", name)}
	switch {
	case noVersions(err):
		// An empty or unpublished name ("lodahs", a placeholder): most
		// often a misspelling of a package that has versions.
		nf.What = fmt.Sprintf("published version of %q: the name exists on the registry but has no versions", name)
	case !errors.Is(err, upstream.ErrNotFound):
		return err
	}
	if s.suggest != nil {
		if names, serr := s.suggest.Suggest(ctx, name); serr == nil {
			names = closest.Strings(name, slices.DeleteFunc(names, func(n string) bool { return n == name }), maxSuggestions)
			if len(names) > 0 {
				nf.Hint = "closest published names: " + strings.Join(names, ", ")
			}
		}
	}
	if nf.Hint == "" {
		nf.Hint = "check the spelling; scoped packages are written @scope/name"
	}
	return nf
}

// noVersions reports whether err is a resolution of a package with no
// published versions at all: semver.Select's ErrNoMatch, whose message
// ends with semver's "it has no published versions" (highest).
func noVersions(err error) bool {
	return errors.Is(err, semver.ErrNoMatch) && strings.HasSuffix(err.Error(), "it has no published versions")
}

// refusedName reports whether the registry said no to a package name:
// not found, or forbidden (401/403).
func refusedName(err error) bool {
	if errors.Is(err, upstream.ErrNotFound) {
		return true
	}
	var ue *unavailable.Error
	return errors.As(err, &ue) && ue.Source == unavailable.Registry &&
		(ue.Status == http.StatusUnauthorized || ue.Status == http.StatusForbidden)
}

// cleanPath cleans a path an agent sent.
func cleanPath(raw string) (string, error) {
	p, err := pkgpath.CleanQuery(strings.TrimSuffix(raw, "/"))
	if err != nil {
		return "", &InputError{Field: "path", Err: err}
	}
	return p, nil
}

// candidates are the readings of path to try, in order: as given, then
// without the prefixes agents copy from an installed tree
// (node_modules/<name>/) or from a tarball listing (package/).
func candidates(name, path string) []string {
	out := []string{path}
	if name == "" {
		return out // a project's paths: from its root, as given
	}
	for _, prefix := range []string{"node_modules/" + name + "/", "package/"} {
		if rest, ok := strings.CutPrefix(path, prefix); ok && rest != "" {
			out = append(out, rest)
		}
	}
	return out
}

// closestPaths names the paths nearest to a missing one: files, or with
// folders set, folders.
func closestPaths(name string, files []store.File, path string, folders bool) string {
	var cands []string
	if folders {
		for _, e := range tree(files, "", -1) {
			if e.Type == EntryFolder {
				cands = append(cands, strings.TrimSuffix(e.Path, "/"))
			}
		}
	} else {
		for _, f := range files {
			cands = append(cands, f.Path)
		}
	}
	names := closest.Strings(path, cands, maxSuggestions)
	// A guessed name in the right folder ("dist/index.d.ts" where the
	// package has dist/lucide-react.d.ts, "dist/cjs" beside dist/esm):
	// what that folder holds of the same type.
	dir, ext := pathpkg.Dir(path), typeExt(path)
	for _, c := range cands {
		if len(names) >= maxSuggestions {
			break
		}
		if pathpkg.Dir(c) == dir && (folders || ext != "" && typeExt(c) == ext) && !slices.Contains(names, c) {
			names = append(names, c)
		}
	}
	if len(names) == 0 && !folders {
		names = nearestByName(cands, path, name)
	}
	if len(names) == 0 {
		return "list or glob the package to see its files"
	}
	return "closest: " + strings.Join(names, ", ")
}

// nearestByName is closestPaths' answer when nothing is near the whole
// path (lodash-es has no src/, and src/index.ts is nothing like
// lodash.js): the files with the same name before its first dot at any
// depth ("index.js" for "src/index.ts") or an entry point's name (index,
// main, the package's own: lodash.js in lodash-es), then the shallowest
// files of the same kind (code, declarations) whose names are nearest,
// then package.json, whose main, module and exports name the entry
// points.
func nearestByName(cands []string, path, pkg string) []string {
	base := strings.ToLower(pathpkg.Base(path))
	stem, _, _ := strings.Cut(base, ".")
	own := strings.ToLower(pathpkg.Base(pkg))
	entries := []string{stem, "index", "main", own, strings.TrimSuffix(strings.TrimSuffix(own, "-es"), "-js")}
	code := func(p string) bool {
		switch pathpkg.Ext(p) {
		case ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx":
			return true
		}
		return false
	}
	type cand struct {
		p           string
		depth, dist int
	}
	var same, near []cand
	for _, c := range cands {
		b := strings.ToLower(pathpkg.Base(c))
		cs, _, _ := strings.Cut(b, ".")
		depth := strings.Count(c, "/")
		switch {
		case cs != "" && slices.Contains(entries, cs):
			same = append(same, cand{c, depth, b2i(cs != stem)}) // the name asked for before an entry point's
		case code(c) == code(path) && depth == 0:
			near = append(near, cand{c, depth, closest.Distance(base, b, len(base)+len(b))})
		}
	}
	order := func(a, b cand) int {
		if a.depth != b.depth {
			return a.depth - b.depth
		}
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.p, b.p)
	}
	slices.SortFunc(same, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return order(a, b)
	})
	slices.SortFunc(near, order)
	var out []string
	for _, c := range slices.Concat(same, near) {
		if len(out) == maxSuggestions-1 {
			break
		}
		out = append(out, c.p)
	}
	if slices.Contains(cands, "package.json") {
		out = append(out, "package.json (its main, module and exports name the entry points)")
	}
	return out
}

// typeExt is a path's type as an agent means it: ".d.ts" for a
// declaration file, else its extension.
func typeExt(p string) string {
	if i := strings.Index(pathpkg.Base(p), ".d."); i >= 0 {
		return pathpkg.Base(p)[i:]
	}
	return pathpkg.Ext(p)
}
