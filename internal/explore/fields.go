package explore

import (
	"errors"
	"fmt"
	pathpkg "path"
	"reflect"
	"slices"
	"strings"

	"github.com/pkgscope/pkgscope/internal/closest"
	"github.com/pkgscope/pkgscope/internal/english"
)

// Fields of a Request: which action takes which, and the correction for
// one that it does not take. A field an action does not read used to be
// ignored silently, and a model then got a wrong scope or a huge answer
// (grep with limit: 2 answered 38 KB; grep with path searched all 8,698
// files of next; glob with path matched at the package root). Every field
// given must now be one the action reads, or the request is a 400 naming
// the field to use instead.

// sharedFields are read by every action on a package.
var sharedFields = []string{"action", "packageName", "version", "project", "maxBytes", "cursor"}

// actionFields are the fields each action reads besides the shared ones,
// as its code does (list.go, read.go, grep.go, diff.go).
var actionFields = map[string][]string{
	"list": {"path", "depth"},
	"glob": {"patterns"},
	"read": {"path", "offset", "limit", "column"},
	"grep": {"pattern", "outputMode", "sort", "caseInsensitive", "fixedStrings", "wholeWord",
		"include", "exclude", "contextLines", "maxMatches", "maxMatchesPerFile"},
	"diff": {"from", "to", "include", "exclude", "contextLines", "nameOnly", "ignoreAllSpace",
		"noPrefix", "srcPrefix", "dstPrefix", "text"},
}

// notTaken are the exceptions to sharedFields and actionFields: diff
// reads from and to, never version; over a project (project without
// packageName) every package is at the version the project installed,
// and grep orders by dependency, not by sort (internal/project).
var notTaken = map[string][]string{
	"diff":         {"version"},
	"project list": {"version"},
	"project glob": {"version"},
	"project read": {"version"},
	"project grep": {"version", "sort"},
}

// requestFields are the JSON names of Request's fields, in their order.
var requestFields = func() []string {
	t := reflect.TypeFor[Request]()
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}()

// Takes reports whether action reads field; project is a request over a
// project's tree (project given, packageName not).
func Takes(action, field string, project bool) bool {
	key := action
	if project {
		key = "project " + action
	}
	if slices.Contains(notTaken[key], field) {
		return false
	}
	return slices.Contains(sharedFields, field) || slices.Contains(actionFields[action], field)
}

// fieldsOf lists what action reads, shared fields last.
func fieldsOf(action string, project bool) []string {
	var out []string
	for _, f := range append(slices.Clone(actionFields[action]), sharedFields...) {
		if f != "action" && Takes(action, f, project) {
			out = append(out, f)
		}
	}
	return out
}

// checkFields refuses a request that gives a field its action does not
// read, naming what to use instead. An unknown action is left to Do.
func checkFields(r Request) error {
	if _, ok := actionFields[r.Action]; !ok {
		return nil
	}
	project := r.Project != "" && r.PackageName == ""
	if project && r.Action == "diff" {
		return nil // the project explorer says diff takes a packageName
	}
	v := reflect.ValueOf(r)
	var first string
	var msgs []string
	for i, name := range requestFields {
		if v.Field(i).IsZero() || Takes(r.Action, name, project) {
			continue
		}
		if first == "" {
			first = name
		}
		msgs = append(msgs, correction(r, name, project))
	}
	if first == "" {
		return nil
	}
	return &InputError{Field: first, Err: errors.New(strings.Join(msgs, "; "))}
}

// correction says what to send instead of field, which r's action does
// not read: the field meant, with r's own value moved into it when that
// is how it is meant.
func correction(r Request, field string, project bool) string {
	a := r.Action
	over := a
	if project {
		over = a + " over a project"
	}
	switch {
	case field == "version" && a == "diff":
		return fmt.Sprintf("diff takes from and to, not version: e.g. from:%q, to:'<newer version>'", r.Version)
	case field == "version":
		return "version needs packageName: a project's packages are at the versions it installed; give packageName (and version) to read another version"
	case field == "limit" && a == "grep":
		return "grep takes maxMatches, not limit"
	case field == "maxMatches" && a == "read":
		return "read takes limit (how many lines), not maxMatches"
	case field == "limit" || field == "maxMatches" || field == "maxMatchesPerFile":
		return fmt.Sprintf("%s has no %s: an answer is cut at maxBytes and its next continues it", a, field)
	case field == "path" && (a == "grep" || a == "diff"):
		return fmt.Sprintf("%s has no path: use include:['%s']", a, folderGlob(r.Path))
	case field == "path" && a == "glob":
		return fmt.Sprintf("glob patterns are relative to the package root: use %s", underPath(r.Path, r.Patterns))
	case field == "depth" && a == "glob":
		return "glob has no depth: '*' matches within one folder, '**' across folders (or list a folder with path and depth)"
	case field == "sort" && project:
		return "grep over a project has no sort: it answers direct dependencies first, then each package folder in path order"
	case field == "pattern" && a == "glob":
		return fmt.Sprintf("glob takes patterns (globs over paths), not pattern: e.g. patterns:[%q]; to search file contents use grep", r.Pattern)
	case field == "pattern" && a == "read":
		return fmt.Sprintf("read has no pattern: to find lines, use grep with pattern:%q and include:[%q]", r.Pattern, r.Path)
	case field == "pattern":
		return fmt.Sprintf("%s has no pattern: grep searches file contents, glob matches paths", a)
	case field == "patterns" && a == "grep":
		return "grep takes pattern (one RE2 regular expression; join alternatives with |), not patterns; to choose files use include"
	case field == "patterns":
		return fmt.Sprintf("%s has no patterns: use action glob to match paths", a)
	case (field == "include" || field == "exclude") && a == "glob":
		return fmt.Sprintf("glob takes patterns, not %s: a leading '!' in patterns excludes", field)
	case field == "include" || field == "exclude":
		return fmt.Sprintf("%s has no %s: use glob with patterns to select paths, grep with %s to search only some files", a, field, field)
	case field == "contextLines" && a == "read":
		return "read has no contextLines: give offset (the first line) and limit (how many lines)"
	case field == "depth":
		return fmt.Sprintf("%s has no depth: use list with path and depth", a)
	case field == "offset" || field == "column":
		return fmt.Sprintf("%s has no %s: %s is read's; follow an answer's next to continue it", a, field, field)
	}
	return fmt.Sprintf("%s has no %s (it is %s's); %s takes %s", over, field, strings.Join(takers(field), " and "), a, strings.Join(fieldsOf(a, project), ", "))
}

// takers lists the actions that read field.
func takers(field string) []string {
	var out []string
	for _, a := range Actions {
		if Takes(a, field, false) {
			out = append(out, a)
		}
	}
	return out
}

// folderGlob is the include glob for a path given as a scope: the folder's
// files, or the file itself when the path names one (its last part has an
// extension).
func folderGlob(p string) string {
	p = strings.Trim(p, "/")
	if p == "" || p == "." {
		return "**"
	}
	if strings.Contains(pathpkg.Base(p), ".") || strings.ContainsAny(p, "*?[") {
		return p
	}
	return p + "/**"
}

// underPath joins path before each glob pattern, as a glob at the package
// root would name the same files.
func underPath(p string, patterns []string) string {
	p = strings.Trim(p, "/")
	if len(patterns) == 0 {
		return fmt.Sprintf("patterns:['%s/**']", p)
	}
	var out []string
	for _, pat := range patterns {
		neg := strings.HasPrefix(pat, "!")
		pat = strings.TrimPrefix(pat, "!")
		if neg {
			out = append(out, "'!"+pathpkg.Join(p, pat)+"'")
		} else {
			out = append(out, "'"+pathpkg.Join(p, pat)+"'")
		}
	}
	return strings.Join(out, ", ")
}

// aliases are the names models send for Request's fields, normalized
// (lower case, no '_' or '-'): other tools' parameter names (ripgrep's,
// an agent's own grep and read tools'). The names under "" mean a field
// that depends on the action; aliasFor settles them.
var aliases = map[string][]string{
	"packageName":     {"package", "pkg", "pkgname", "name", "module", "library"},
	"version":         {"ver", "tag", "disttag", "spec", "range", "packageversion"},
	"offset":          {"line", "startline", "start", "linenumber", "skip"},
	"limit":           {"lines", "numlines", "maxlines"},
	"caseInsensitive": {"ignorecase", "i", "nocase", "casesensitive"},
	"contextLines":    {"context", "c", "a", "b", "after", "before", "aftercontext", "beforecontext"},
	"fixedStrings":    {"literal", "fixed", "fixedstring", "f"},
	"wholeWord":       {"word", "words", "wordregexp", "w"},
	"include":         {"includes", "type"},
	"exclude":         {"ignore", "excludes"},
	"outputMode":      {"output", "mode", "format"},
	"cursor":          {"page", "next", "pagetoken", "token"},
	"from":            {"old", "oldversion", "fromversion", "base"},
	"to":              {"new", "newversion", "toversion"},
	"nameOnly":        {"namesonly", "filesonly"},
	"maxBytes":        {"bytes", "maxsize", "maxchars"},
	// the pattern to search: grep's pattern, glob's patterns
	"": {"query", "regex", "regexp", "search", "q", "expression", "re", "e"},
	// a path as a scope: read's and list's path, grep's and diff's include
	"path": {"file", "files", "filepath", "filename", "dir", "directory", "folder"},
	// a count: grep's maxMatches, read's limit, else the answer's bytes
	"max": {"max", "maxresults", "maxcount", "headlimit", "n", "m", "top"},
	// globs: grep's and diff's include, glob's patterns
	"glob": {"glob", "globs"},
}

// aliasFor is the Request field a model most likely meant by name, for
// action (may be ""), or "" when none is close.
func aliasFor(name, action string) string {
	key := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(name))
	for _, f := range requestFields {
		if strings.ToLower(f) == key {
			return f
		}
	}
	for f, names := range aliases {
		if !slices.Contains(names, key) {
			continue
		}
		scope := action == "grep" || action == "diff"
		switch {
		case f == "" && action == "glob", f == "glob" && !scope, f == "path" && action == "glob":
			return "patterns"
		case f == "":
			return "pattern"
		case f == "glob", f == "path" && scope:
			return "include"
		case f == "max" && action == "grep":
			return "maxMatches"
		case f == "max" && action == "read":
			return "limit"
		case f == "max":
			return "maxBytes"
		}
		return f
	}
	// A misspelling ("patern", "maxMatch"): the nearest field the action
	// takes, else the nearest of all, within closest's edit distance.
	cands := requestFields
	if action != "" {
		cands = fieldsOf(action, false)
	}
	if near := closest.Strings(name, cands, 1); len(near) == 1 {
		return near[0]
	}
	if near := closest.Strings(name, requestFields, 1); len(near) == 1 {
		return near[0]
	}
	return ""
}

// UnknownFields is the error for fields that are not Request's, named as
// sent (the API's JSON decoder and the MCP tool's arguments alike): each
// with the field meant, when a model's usual name for it is known, else
// the fields the action takes.
// At most MaxNamedFields are named; the rest are counted (MoreUnknown).
func UnknownFields(names []string, action string) *InputError {
	if _, ok := actionFields[action]; !ok {
		action = ""
	}
	more := max(0, len(names)-MaxNamedFields)
	names = names[:len(names)-more]
	var msgs []string
	for _, n := range names {
		msg := fmt.Sprintf("unknown field %q", n)
		if f := aliasFor(n, action); f != "" {
			msg += fmt.Sprintf(": did you mean %s?", f)
			if action != "" && !Takes(action, f, false) {
				msg += fmt.Sprintf(" (%s is %s's)", f, strings.Join(takers(f), " and "))
			}
		}
		msgs = append(msgs, msg)
	}
	if action != "" {
		msgs = append(msgs, fmt.Sprintf("%s takes %s", action, strings.Join(fieldsOf(action, false), ", ")))
	} else {
		msgs = append(msgs, "the fields are "+strings.Join(requestFields, ", "))
	}
	err := errors.New(strings.Join(msgs, "; "))
	if more > 0 {
		err = &MoreUnknown{Err: err, More: more}
	}
	return &InputError{Field: names[0], Err: err}
}

// MaxNamedFields is how many unknown fields a refusal names, each matched
// against the action's fields for a did-you-mean: a body (or MCP
// arguments) of 60,000 made-up keys was refused with every one named, a
// 1.5 MB answer (3.1 MB over MCP) and 0.9 s of CPU for a 1 MB request.
const MaxNamedFields = 10

// MoreUnknown is a refusal that names the first MaxNamedFields unknown
// fields and counts the More it leaves out.
type MoreUnknown struct {
	Err  error
	More int
}

func (m *MoreUnknown) Error() string {
	return fmt.Sprintf("%v; and %d more %s", m.Err, m.More, english.Noun(m.More, "unknown field"))
}

// Unwrap returns the refusal naming the first fields.
func (m *MoreUnknown) Unwrap() error { return m.Err }

// IsField reports whether name is a Request field's JSON name, exactly.
func IsField(name string) bool { return slices.Contains(requestFields, name) }
