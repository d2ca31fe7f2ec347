package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Request is the explore_npm tool's input: one object for every action,
// the body of POST /v1/explore and the MCP tool's arguments alike. Each
// action reads the fields it needs; Do refuses the others (fields.go). The jsonschema
// tags are the property descriptions a model reads.
type Request struct {
	Action      string `json:"action" jsonschema:"What to do (the tool's description says which when)."`
	PackageName string `json:"packageName,omitempty" jsonschema:"npm package name, e.g. 'react', '@types/node'. Required, except over a whole project (see project)."`
	Version     string `json:"version,omitempty" jsonschema:"Exact version ('18.3.1'), semver range ('^18') or dist-tag ('next'). Omit for the default version."`
	// list
	Depth int `json:"depth,omitempty" jsonschema:"list: folder levels below path to show, folders with file count and bytes. Omit: every file, or the deepest tree that fits."`
	// glob
	Patterns StringList `json:"patterns,omitempty" jsonschema:"glob: globs over paths, OR-ed; a leading '!' excludes; '**' crosses folders: ['**/*.d.ts', '!**/internal/**']. A string is one pattern."`
	// read, list
	Path   string `json:"path,omitempty" jsonschema:"read: a file's path as list prints it, e.g. 'dist/index.d.ts'. list: the folder to list."`
	Offset int    `json:"offset,omitempty" jsonschema:"read: first line to return, 1-based (default 1)."`
	Limit  int    `json:"limit,omitempty" jsonschema:"read: number of lines to return."`
	Column int    `json:"column,omitempty" jsonschema:"read: with offset, one window of that long line from this 1-based byte column (minified files), maxBytes wide if given; nextColumn continues it."`
	// grep
	Pattern           string     `json:"pattern,omitempty" jsonschema:"grep: RE2 regular expression (no look-around or backreferences), or a literal with fixedStrings."`
	OutputMode        string     `json:"outputMode,omitempty" jsonschema:"grep: 'content' (default), 'files_with_matches' (like rg -l) or 'count' (like rg -c)."`
	Sort              string     `json:"sort,omitempty" jsonschema:"grep: 'relevance' (default: .d.ts first, then sources, bundles and docs, source maps last) or 'path' (ripgrep's order)."`
	CaseInsensitive   bool       `json:"caseInsensitive,omitempty" jsonschema:"grep: ignore case."`
	FixedStrings      bool       `json:"fixedStrings,omitempty" jsonschema:"grep: pattern is a literal string, not a regular expression."`
	WholeWord         bool       `json:"wholeWord,omitempty" jsonschema:"grep: match whole words only."`
	Include           StringList `json:"include,omitempty" jsonschema:"grep: only files matching these globs, as rg -g: '*.d.ts' matches in any folder, 'dist/**/*.js' the path. diff: only these paths, as npm diff's path arguments."`
	Exclude           StringList `json:"exclude,omitempty" jsonschema:"grep and diff: skip files matching these globs (as include), e.g. ['*.min.js', '*.map']."`
	ContextLines      *int       `json:"contextLines,omitempty" jsonschema:"grep: lines before and after each match, like grep -C (default 0). diff: lines around each change (default 3)."`
	MaxMatches        int        `json:"maxMatches,omitempty" jsonschema:"grep: most matching lines on one page (default: what maxBytes holds); next continues."`
	MaxMatchesPerFile int        `json:"maxMatchesPerFile,omitempty" jsonschema:"grep: most matching lines of one file on the first pass when several files match; next brings the rest."`
	// diff
	From           string `json:"from,omitempty" jsonschema:"diff: the old version (exact, range or dist-tag)."`
	To             string `json:"to,omitempty" jsonschema:"diff: the new version (exact, range or dist-tag)."`
	NameOnly       bool   `json:"nameOnly,omitempty" jsonschema:"diff: only the changed paths, like --diff-name-only."`
	IgnoreAllSpace bool   `json:"ignoreAllSpace,omitempty" jsonschema:"diff: compare lines ignoring whitespace, like --diff-ignore-all-space."`
	NoPrefix       bool   `json:"noPrefix,omitempty" jsonschema:"diff: no a/ and b/ before paths, like --diff-no-prefix."`
	SrcPrefix      string `json:"srcPrefix,omitempty" jsonschema:"diff: prefix of old paths instead of a/, like --diff-src-prefix."`
	DstPrefix      string `json:"dstPrefix,omitempty" jsonschema:"diff: prefix of new paths instead of b/, like --diff-dst-prefix."`
	Text           bool   `json:"text,omitempty" jsonschema:"diff: show the lines of files npm deems binary by extension (npm 11 accepts --diff-text but ignores it)."`
	// project
	Project string `json:"project,omitempty" jsonschema:"A project id from POST /v1/projects (stdio and a session bound to a project use theirs when omitted): without packageName, list, glob, read and grep work over its node_modules tree ('node_modules/react/index.js')."`
	// every action
	MaxBytes int    `json:"maxBytes,omitempty" jsonschema:"Most bytes of the answer (default 32 KiB, read 100 KiB; the server has a maximum); next continues a cut one."`
	Cursor   string `json:"cursor,omitempty" jsonschema:"Set by a cut answer's next request; send that as is, do not write a cursor yourself."`
}

// StringList accepts a JSON string or an array of strings: models often
// send one glob bare.
type StringList []string

// UnmarshalJSON implements json.Unmarshaler.
func (l *StringList) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte(`"`)) {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = []string{s}
		return nil
	}
	var ss []string
	if err := json.Unmarshal(b, &ss); err != nil {
		return errors.New("want a string or an array of strings")
	}
	*l = ss
	return nil
}

// Actions are the values of Request.Action.
var Actions = []string{"list", "glob", "read", "grep", "diff"}

// Explorer is the four actions. *Service answers them from the store;
// internal/client forwards them to a remote pkgscope. Each answer fits
// its byte budget and continues through Answer.Next (page.go).
type Explorer interface {
	// List returns the files and folders of the version (or of the
	// folder r.Path), to r.Depth levels.
	List(ctx context.Context, r Request) (*ListResult, error)
	// Glob returns the file and folder paths r.Patterns select (OR-ed;
	// "!p" excludes); empty patterns is an *InputError.
	Glob(ctx context.Context, r Request) (*ListResult, error)
	// Read returns numbered lines of one file, or what a folder holds.
	Read(ctx context.Context, r Request) (*ReadResult, error)
	// Grep searches the contents of the version's files;
	// ErrGrepUnavailable when no search engine is wired.
	Grep(ctx context.Context, r Request) (*GrepResult, error)
	// Diff answers what changed between r.From and r.To of
	// r.PackageName as npm diff prints it, one page per call (r.Cursor);
	// a side that resolves to nothing is a *NotFoundError naming it.
	Diff(ctx context.Context, r Request) (*DiffResult, error)
}

// Do runs r's action on ex. The result is a *ListResult (list, glob), a
// *ReadResult, a *GrepResult or a *DiffResult.
//
// A field r's action does not read is an *InputError naming the field to
// use instead (fields.go), and so is a grep pattern in another engine's
// syntax that RE2 would read differently (re2.go): never a silently wider
// or emptier answer.
func Do(ctx context.Context, ex Explorer, r Request) (any, error) {
	if err := checkFields(r); err != nil {
		return nil, err
	}
	if r.Action == "grep" && !r.FixedStrings {
		if err := checkRE2(r.Pattern); err != nil {
			return nil, err
		}
	}
	if r.Project != "" && r.PackageName == "" {
		if pe, ok := ex.(projectExplorer); ok {
			return pe.ExploreProject(ctx, r)
		}
		return nil, &InputError{Field: "project", Err: errors.New("this server does not explore projects; give packageName")}
	}
	switch r.Action {
	case "list":
		return ex.List(ctx, r)
	case "glob":
		return ex.Glob(ctx, r)
	case "read":
		return ex.Read(ctx, r)
	case "grep":
		return ex.Grep(ctx, r)
	case "diff":
		return ex.Diff(ctx, r)
	case "":
		return nil, &InputError{Field: "action", Err: errors.New(`missing: give "list", "glob", "read", "grep" or "diff"`)}
	}
	return nil, &InputError{Field: "action", Err: fmt.Errorf("unknown action %q: use list, glob, read, grep or diff", r.Action)}
}

// ProjectExplorer answers a Request whose Project is set and PackageName
// is not: the actions over a registered project's node_modules tree
// (internal/project). Do hands such a request to an Explorer that is also
// a ProjectExplorer (WithProjects composes one).
type ProjectExplorer interface {
	ExploreProject(ctx context.Context, r Request) (any, error)
}

type projectExplorer = ProjectExplorer

// WithProjects returns ex answering project requests through p as well:
// the project explorer reads its packages through ex, so the two are
// composed where the chain is wired, after both exist.
func WithProjects(ex Explorer, p ProjectExplorer) Explorer {
	if p == nil {
		return ex
	}
	return withProjects{ex, p}
}

type withProjects struct {
	Explorer
	ProjectExplorer
}

// deref is *p, 0 for nil: a count the caller may leave out.
func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
