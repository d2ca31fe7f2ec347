package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/project"
)

// Input is the explore_npm tool's arguments: exactly the /v1/explore body.
type Input = explore.Request

// restOnly are npm diff's formatting options, which /v1/explore and the
// REST diff take and the tool does not: a model reads npm diff's default
// format, and their descriptions were 530 bytes of the schema every
// agent holds in its context.
var restOnly = []string{"ignoreAllSpace", "noPrefix", "srcPrefix", "dstPrefix", "text"}

// Actions are the values of Input.Action.
var Actions = explore.Actions

// inputSchema infers the schema from Input's tags and adds the action
// enum, non-negative integers and string-or-array lists.
func inputSchema(projectAware bool) *jsonschema.Schema {
	s, err := jsonschema.For[Input](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[explore.StringList](): {AnyOf: []*jsonschema.Schema{
			{Type: "array", Items: &jsonschema.Schema{Type: "string"}},
			{Type: "string"},
		}},
	}})
	if err != nil {
		panic(fmt.Sprintf("explore_npm input schema: %v", err)) // a programming error in Input
	}
	for _, a := range Actions {
		s.Properties["action"].Enum = append(s.Properties["action"].Enum, a)
	}
	for _, f := range restOnly {
		delete(s.Properties, f)
	}
	zero := 0.0
	for _, p := range s.Properties {
		// An optional count (*int, such as contextLines, whose absence
		// means the action's default) is an integer to the caller: null
		// is taken as absent anyway.
		if len(p.Types) == 2 && p.Types[0] == "null" && p.Types[1] == "integer" {
			p.Type, p.Types = "integer", nil
		}
		if p.Type == "integer" {
			p.Minimum = &zero
		}
	}
	if projectAware {
		s.Properties["version"].Description = strings.Replace(s.Properties["version"].Description,
			"Omit for the default version.", "Omit for the project's version (see the description).", 1)
	} else {
		s.Properties["version"].Description = strings.Replace(s.Properties["version"].Description,
			"Omit for the default version.", "Omit for latest.", 1)
	}
	return s
}

// outputSchema is the structuredContent of every explore_npm answer: the
// properties of the list, read and grep results together (they share the
// Answer header, and no property has two meanings), or of a tool error's
// body (clients validate that too). Nothing is required, since an error
// body has none of an answer's fields.
func outputSchema() *jsonschema.Schema {
	opt := &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[explore.StringList](): {AnyOf: []*jsonschema.Schema{
			{Type: "array", Items: &jsonschema.Schema{Type: "string"}},
			{Type: "string"},
		}},
	}}
	out := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for _, s := range []*jsonschema.Schema{
		must(jsonschema.For[ErrorBody](opt)),
		must(jsonschema.For[explore.ListResult](opt)),
		must(jsonschema.For[explore.ReadResult](opt)),
		must(jsonschema.For[explore.GrepResult](opt)),
		must(jsonschema.For[explore.DiffResult](opt)),
		must(jsonschema.For[project.ListAnswer](opt)),
		must(jsonschema.For[project.GrepAnswer](opt)),
	} {
		for k, p := range s.Properties {
			if prev, ok := out.Properties[k]; ok && !sameSchema(prev, p) {
				// grep's files and diff's files: either shape.
				p = &jsonschema.Schema{AnyOf: []*jsonschema.Schema{prev, p}}
			}
			out.Properties[k] = p
		}
	}
	return out
}

func sameSchema(a, b *jsonschema.Schema) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func must(s *jsonschema.Schema, err error) *jsonschema.Schema {
	if err != nil {
		panic(fmt.Sprintf("explore_npm output schema: %v", err)) // a programming error in the results
	}
	return s
}

// description teaches a model which action to use when; it is the text
// an agent reads to decide whether and how to call the tool.
func description(projectAware bool) string {
	version := "When version is omitted, latest is used."
	if projectAware {
		version = "When version is omitted, the version this project locks is used (else its package.json's range, else latest)."
	}
	return "Read the files of any published npm package version without installing it: the tarball npm installs " +
		"(dist bundles, .d.ts types, package.json, README), not the git repository. Actions: " +
		"'list' the files and folders (a big package answers a tree summary; list a folder with path and depth); start " +
		"with it when you do not know the layout. " +
		"'glob' finds files and folders by name or path ('**/*.d.ts'); to find a file by name, glob, do not grep. " +
		"'grep' searches contents with a regular expression, file:line:column matches, type declarations (.d.ts) first; " +
		"outputMode 'files_with_matches' or 'count' answers files only; narrow it with include/exclude globs. " +
		"'read' numbered lines of one file; a minified line too long to show whole continues with offset plus column. " +
		"'diff' what changed between versions from and to, as npm diff prints it; narrow it with include or nameOnly. " +
		"version may be exact, a semver range or a dist-tag. " + version +
		" Every answer names the exact version it read and why; a cut answer ends with the next request, which continues it."
}

// tool is explore_npm bound to an Explorer.
type tool struct {
	ex       Explorer
	opt      Options
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved

	mu    sync.Mutex
	pages map[string]bool // versions whose web page link the text has given
}

// maxPagesRemembered bounds tool.pages: a session explores tens of
// versions; past it the set starts again, and a link is given once more.
const maxPagesRemembered = 4096

// pageOnce leaves the answer's web page link ("[web page: …]", 65 bytes
// on average, 30% of the smallest answers) out of the text unless this is
// the first answer for its version on this server: once per version on
// stdio, whose server serves one session, and never over HTTP, whose
// requests each make a session of their own (the JSON keeps browse).
// The deferred func it returns puts the link back for structuredContent:
// it runs after the text is rendered.
func (t *tool) pageOnce(ctx context.Context, a *explore.Answer) (restore func()) {
	browse := a.Browse
	if browse == "" {
		return func() {}
	}
	if !overHTTP(ctx) {
		key := a.PackageName + "@" + a.Version
		t.mu.Lock()
		first := !t.pages[key]
		if first {
			if len(t.pages) >= maxPagesRemembered {
				clear(t.pages)
			}
			t.pages[key] = true
		}
		t.mu.Unlock()
		if first {
			return func() {}
		}
	}
	a.Browse = ""
	return func() { a.Browse = browse }
}

func newTool(ex Explorer, opt Options) *tool {
	s := inputSchema(opt.projectAware())
	r, err := s.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("explore_npm input schema: %v", err))
	}
	return &tool{ex: ex, opt: opt, schema: s, resolved: r, pages: map[string]bool{}}
}

func (t *tool) definition() *sdk.Tool {
	openWorld := true
	def := &sdk.Tool{
		Name:        ToolName,
		Title:       "Explore npm packages",
		Description: description(t.opt.projectAware()),
		InputSchema: t.schema,
		Annotations: &sdk.ToolAnnotations{
			Title:          "Explore npm packages",
			ReadOnlyHint:   true,
			IdempotentHint: true,
			// It reaches the npm registry on a miss.
			OpenWorldHint: &openWorld,
		},
	}
	// Only when answers carry structuredContent: it was 16 KB of the
	// 25.5 KB tools/list, which every agent holds in its context, and
	// described JSON no model was shown.
	if t.opt.Structured {
		def.OutputSchema = outputSchema()
	}
	return def
}

// handle answers one tools/call. Failures are tool errors (isError) with
// the API's error body, never protocol errors: a model reads a tool error
// and can correct its call.
func (t *tool) handle(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	in, err := t.decode(req.Params.Arguments)
	if err != nil {
		return t.fail(err, ""), nil
	}
	var proj defaulter
	if t.opt.Project != nil {
		proj = t.opt.Project
	}
	if b := connectionFrom(ctx, t.opt).project; b != nil {
		proj = b
		b.bindTo(in)
	}
	if in.PackageName == "" && in.Project == "" && t.opt.LocalProject != nil && in.Action != "diff" && in.Action != "" {
		id, err := t.opt.LocalProject(ctx)
		if err != nil {
			return t.fail(err, ""), nil
		}
		in.Project = id
	}
	var note, why string
	var locked *Default // the project's lock on the package, when it has one
	// Not for diff: it reads from and to, never version.
	if proj != nil && in.PackageName != "" && in.Action != "diff" {
		name, _ := explore.Scoped(in.PackageName) // the name explore reads "types/node" as
		d := proj.Default(name)
		if d.Warning != nil && t.opt.Project != nil {
			t.opt.Logger.Warn("project versions", "project", t.opt.Project.Dir(), "err", d.Warning)
		}
		if in.Version == "" {
			in.Version, note, why = d.Spec, d.Note(), d.Reason()
		} else if d.Locked {
			locked = &d
		}
	}
	res, err := explore.Do(ctx, t.ex, *in)
	if err != nil {
		return t.fail(err, note), nil
	}
	// The project's reason for the version is the answer's: the hook
	// project-aware callers fill (lockfile, package.json range, latest).
	set := func(a *explore.Answer) {
		setWhy(a, why)
		if locked != nil && a.Version != locked.Spec {
			a.Notes = append(a.Notes, fmt.Sprintf("the project uses %s (%s); this answer is for %s, as asked", locked.Spec, locked.Reason(), a.Version))
		}
	}
	switch res := res.(type) {
	case *explore.ListResult:
		set(&res.Answer)
		defer t.pageOnce(ctx, &res.Answer)()
		return ok(res, fromSource(res.Source, renderList(res, in.Action))), nil
	case *explore.ReadResult:
		set(&res.Answer)
		defer t.pageOnce(ctx, &res.Answer)()
		return ok(res, fromSource(res.Source, renderRead(res))), nil
	case *explore.GrepResult:
		set(&res.Answer)
		defer t.pageOnce(ctx, &res.Answer)()
		text := renderGrep(res)
		if res.Complete != nil && !*res.Complete {
			text += fmt.Sprintf("\n[incomplete: %s not searched (%s)]", english.Count(res.FilesNotSearched, "file"), res.IncompleteReason)
		}
		return ok(res, fromSource(res.Source, text)), nil
	case *explore.DiffResult:
		return ok(res, renderDiff(res, note, in.NameOnly)), nil
	case *project.ListAnswer:
		return ok(res, renderProjectList(res, in.Action)), nil
	case *project.GrepAnswer:
		return ok(res, renderProjectGrep(res)), nil
	}
	return t.fail(fmt.Errorf("explore_npm: no text for a %T answer", res), note), nil
}

// setWhy records why the project chose the version, when it did. A
// project that left the version to latest ("latest: no project found")
// keeps the answer's word that latest was deprecated and passed over.
func setWhy(a *explore.Answer, why string) {
	if why == "" {
		return
	}
	if rest, ok := strings.CutPrefix(why, "latest: "); ok {
		if passed, ok := strings.CutPrefix(a.ResolvedFrom, explore.NoVersionGiven+"; "); ok {
			a.ResolvedFrom = rest + "; " + passed
			return
		}
	}
	a.ResolvedFrom = why
}

// fromSource says so when an answer did not come from the registry's
// verified bytes, so a model knows why it may differ on a retry.
func fromSource(source, text string) string {
	if source == "" || source == explore.SourceRegistry {
		return text
	}
	return text + "\n[answered from " + source + " because the registry could not serve this version in time]"
}

// decode validates the arguments against the schema, then decodes them
// strictly. A JSON null is taken as "not given", as the API's decoder
// does: models often send null for optional fields.
func (t *tool) decode(raw json.RawMessage) (*Input, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, &explore.InputError{Field: "arguments", Err: fmt.Errorf("want a JSON object: %v", err)}
	}
	var unknown []string
	for k, v := range m {
		if v == nil {
			delete(m, k)
		} else if slices.Contains(restOnly, k) {
			return nil, &explore.InputError{Field: k, Err: errors.New("a formatting option of the REST API's diff (GET /v1/npm/{name}/-/diff); the tool prints npm diff's default format: leave it out")}
		} else if !explore.IsField(k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		// Before the schema, whose "unexpected additional properties"
		// names no field to use instead; the API's decoder says the same.
		slices.Sort(unknown)
		action, _ := m["action"].(string)
		return nil, explore.UnknownFields(unknown, action)
	}
	if a, ok := m["action"].(string); ok && !slices.Contains(Actions, a) {
		return nil, t.unknownAction(a)
	}
	if err := t.resolved.Validate(m); err != nil {
		return nil, schemaError(err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, &explore.InputError{Field: "arguments", Err: err}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var in Input
	if err := dec.Decode(&in); err != nil {
		return nil, &explore.InputError{Field: "arguments", Err: err}
	}
	return &in, nil
}

// unknownAction names the actions, which one does what an unknown one
// ("search", "find", "cat") likely meant, and the other tool: an agent
// that wanted MDN called explore_npm with action "search".
func (t *tool) unknownAction(a string) error {
	msg := fmt.Sprintf("unknown action %q: use list, glob, read, grep or diff (grep searches file contents, glob finds files by name, read shows a file)", a)
	if t.opt.WebDocs != nil {
		msg += "; web platform docs (MDN pages, browser support) are the " + WebDocsToolName + " tool's"
	}
	return &explore.InputError{Field: "action", Err: errors.New(msg)}
}

// schemaError turns the validator's message, which names the schema's
// location, into the field and what to fix, as the API's errors do.
func schemaError(err error) *explore.InputError {
	msg := strings.TrimPrefix(err.Error(), "validating root: ")
	if m := propertyError.FindStringSubmatch(msg); m != nil {
		field, why := m[1], m[2]
		if strings.HasPrefix(why, "minimum:") {
			why = "must not be negative"
		}
		return &explore.InputError{Field: field, Err: errors.New(why)}
	}
	if rest, ok := strings.CutPrefix(msg, "unexpected additional properties "); ok {
		msg = "unknown field " + rest + " (see the tool's input schema)"
	}
	return &explore.InputError{Field: "arguments", Err: errors.New(msg)}
}

var propertyError = regexp.MustCompile(`^validating /properties/(\w+): (.*)$`)

func ok(structured any, text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: text}},
		StructuredContent: structured,
	}
}
