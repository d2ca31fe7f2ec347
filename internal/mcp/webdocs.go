package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/strictjson"
	"github.com/pkgscope/pkgscope/internal/webdocs"
)

// WebDocs is what the explore_web_docs tool needs: *webdocs.Service.
type WebDocs interface {
	// Do runs one request and returns *webdocs.SearchResult,
	// *webdocs.Doc or *webdocs.Compat. Errors are classified with
	// explore.Classify: an *explore.InputError for a bad request, an
	// *explore.NotFoundError (naming the closest keys or pages) for an
	// unknown key or path.
	Do(ctx context.Context, r webdocs.Request) (any, error)
}

// WebDocsToolName is the name of the web docs tool, offered when
// Options.WebDocs is set.
const WebDocsToolName = "explore_web_docs"

// WebDocsInput is the explore_web_docs tool's arguments: exactly the
// POST /v1/webdocs body (webdocs.Request).
type WebDocsInput struct {
	Action string `json:"action" jsonschema:"What to do: 'search' MDN's pages for a query; 'get_doc' one page by path; 'get_compat' the browser support of one BCD feature key."`
	Query  string `json:"query,omitempty" jsonschema:"search: an API, element, property or topic, e.g. 'ResizeObserver', 'css gap', 'Element.append' or a BCD key like 'api.ResizeObserver'."`
	Limit  int    `json:"limit,omitempty" jsonschema:"search: number of documents to return (the server has a default and a maximum)."`
	Offset int    `json:"offset,omitempty" jsonschema:"search: documents to skip, to page through results."`
	Path   string `json:"path,omitempty" jsonschema:"get_doc: the page's path as search returns it ('/en-US/docs/Web/API/ResizeObserver') or a full MDN URL; old paths are redirected."`
	Key    string `json:"key,omitempty" jsonschema:"get_compat: a browser-compat-data key, as search and get_doc list them: 'api.ResizeObserver', 'api.ResizeObserver.observe', 'css.properties.gap'."`
}

func webDocsSchema() *jsonschema.Schema {
	s, err := jsonschema.For[WebDocsInput](nil)
	if err != nil {
		panic(fmt.Sprintf("explore_web_docs input schema: %v", err)) // a programming error in WebDocsInput
	}
	for _, a := range webdocs.Actions {
		s.Properties["action"].Enum = append(s.Properties["action"].Enum, a)
	}
	zero := 0.0
	for _, p := range s.Properties {
		if p.Type == "integer" {
			p.Minimum = &zero
		}
	}
	return s
}

const webDocsDescription = "Look up the web platform on MDN without guessing: which APIs, elements and CSS properties exist, " +
	"their exact Web IDL signatures, and which browsers support them. " +
	"'search' finds MDN pages by name or words (exact API names rank first) and gives each page's path and " +
	"browser-compat keys. 'get_doc' returns one page as markdown with its Web IDL, compat keys and spec links " +
	"(MDN's article text when MDN is reachable, else what the mirrored data packages say). " +
	"'get_compat' returns the browser-compat-data support table of a key and its sub-features, with the " +
	"Baseline status (widely or newly available, or limited) from web-features. An unknown key or path " +
	"answers with the closest valid ones. Data: @mdn/browser-compat-data, @webref/idl, web-features and " +
	"MDN's page inventory, pinned versions named in every answer."

// webDocsTool is explore_web_docs bound to a WebDocs.
type webDocsTool struct {
	wd       WebDocs
	opt      Options
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
}

func newWebDocsTool(wd WebDocs, opt Options) *webDocsTool {
	s := webDocsSchema()
	r, err := s.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("explore_web_docs input schema: %v", err))
	}
	return &webDocsTool{wd: wd, opt: opt, schema: s, resolved: r}
}

func (t *webDocsTool) definition() *sdk.Tool {
	openWorld := true
	return &sdk.Tool{
		Name:        WebDocsToolName,
		Title:       "Explore web platform docs",
		Description: webDocsDescription,
		InputSchema: t.schema,
		Annotations: &sdk.ToolAnnotations{
			Title:          "Explore web platform docs",
			ReadOnlyHint:   true,
			IdempotentHint: true,
			// It reaches the npm registry (cold data packages) and MDN.
			OpenWorldHint: &openWorld,
		},
	}
}

// handle answers one tools/call; failures are tool errors with the API's
// error body, as explore_npm's are.
func (t *webDocsTool) handle(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var in WebDocsInput
	if err := decodeArgs(req.Params.Arguments, t.resolved, &in); err != nil {
		return t.fail(err), nil
	}
	res, err := t.wd.Do(ctx, webdocs.Request{Action: in.Action, Query: in.Query, Limit: in.Limit, Offset: in.Offset, Path: in.Path, Key: in.Key})
	if err != nil {
		return t.fail(err), nil
	}
	var text string
	switch r := res.(type) {
	case *webdocs.SearchResult:
		text = renderSearch(r)
	case *webdocs.Doc:
		text = renderDoc(r)
	case *webdocs.Compat:
		text = renderCompat(r)
	default:
		b, _ := json.Marshal(res)
		text = string(b)
	}
	return ok(res, text), nil
}

// decodeArgs validates raw against the schema and decodes it strictly into
// out (strictjson, as the API's decoder: a key in another case than its
// field's is refused naming the field); JSON nulls are taken as "not
// given".
func decodeArgs(raw json.RawMessage, resolved *jsonschema.Resolved, out any) error {
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = json.RawMessage("{}")
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return &explore.InputError{Field: "arguments", Err: fmt.Errorf("want a JSON object: %v", err)}
	}
	for k, v := range m {
		if v == nil {
			delete(m, k)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return &explore.InputError{Field: "arguments", Err: err}
	}
	// Unknown keys first: the schema's "unexpected additional
	// properties" names no field to use instead.
	derr := strictjson.Unmarshal(b, out)
	var ue *strictjson.UnknownFieldError
	if errors.As(derr, &ue) {
		return &explore.InputError{Field: ue.Path(ue.Names[0]), Err: derr}
	}
	if err := resolved.Validate(m); err != nil {
		return schemaError(err)
	}
	if derr != nil {
		return &explore.InputError{Field: "arguments", Err: derr}
	}
	return nil
}

// fail is explore_npm's tool error for this tool: internal failures are
// logged once here and their message hidden.
func (t *webDocsTool) fail(err error) *sdk.CallToolResult {
	class := classify(err)
	body := ErrorBody{Error: ErrorDetail{Code: class.Code, Message: err.Error()}}
	var c classed
	if class.Status == http.StatusInternalServerError && class.Code == "internal" && !errors.As(err, &c) {
		t.opt.Logger.Error("explore_web_docs failed", "err", err)
		body.Error.Message = "internal error (logged by pkgscope)"
	}
	return toolError(body, class, "")
}

func renderSearch(r *webdocs.SearchResult) string {
	var b strings.Builder
	if r.Total == 0 {
		fmt.Fprintf(&b, "no MDN page matches %q; try other words or the API's exact name", r.Query)
		return b.String()
	}
	end := r.Offset + len(r.Documents)
	fmt.Fprintf(&b, "%s match %q", plural(r.Total, "page"), r.Query)
	if len(r.Documents) > 0 {
		fmt.Fprintf(&b, " (%d-%d shown)", r.Offset+1, end)
	}
	b.WriteString(":\n")
	for i, d := range r.Documents {
		fmt.Fprintf(&b, "%d. %s — %s", r.Offset+i+1, d.Title, d.Path)
		if d.PageType != "" {
			fmt.Fprintf(&b, " [%s]", d.PageType)
		}
		b.WriteString("\n")
		if d.Summary != "" {
			fmt.Fprintf(&b, "   %s\n", d.Summary)
		}
		if len(d.CompatKeys) > 0 {
			fmt.Fprintf(&b, "   compat: %s\n", strings.Join(d.CompatKeys, ", "))
		}
		if bl := d.Baseline; bl != nil {
			fmt.Fprintf(&b, "   Baseline: %s (%s)", bl.Status, webdocs.Phrase(bl.Status, bl.LowDate, bl.HighDate))
			if bl.Scope == "feature" {
				fmt.Fprintf(&b, ", the whole feature %q's", bl.Feature)
			}
			b.WriteString("\n")
		}
	}
	if end < r.Total {
		fmt.Fprintf(&b, "[%d more: search again with offset=%d]\n", r.Total-end, end)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func renderDoc(d *webdocs.Doc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (source: %s)\n", d.Path, d.Source)
	if d.Note != "" {
		fmt.Fprintf(&b, "[note: %s]\n", d.Note)
	}
	b.WriteString("\n")
	b.WriteString(d.Content)
	if d.Source == "mdn" && d.IDL != "" {
		fmt.Fprintf(&b, "\n\n## Web IDL (@webref/idl %s)\n\n```webidl\n%s```\n", d.Versions.IDL, d.IDL)
	}
	if len(d.BrowserCompat) > 0 {
		fmt.Fprintf(&b, "\ncompat keys (get_compat): %s\n", strings.Join(d.BrowserCompat, ", "))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// renderCompat prints the support table as "browser: since" lines, the
// key first, then each sub-feature.
func renderCompat(c *webdocs.Compat) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (@mdn/browser-compat-data %s)\n", c.Key, c.Versions.BCD)
	if bl := c.Baseline; bl != nil {
		fmt.Fprintf(&b, "Baseline: %s (%s)", bl.Status, webdocs.Phrase(bl.Status, bl.LowDate, bl.HighDate))
		if bl.Scope == "feature" {
			fmt.Fprintf(&b, ", the status of the whole web-features feature %q (none for this key alone)", bl.Feature)
		} else {
			fmt.Fprintf(&b, ", this key's own status in web-features %q", bl.Feature)
			if bl.FeatureStatus != "" {
				fmt.Fprintf(&b, "; the feature as a whole: %s (%s)", bl.FeatureStatus, webdocs.Phrase(bl.FeatureStatus, bl.FeatureLowDate, bl.FeatureHighDate))
			}
		}
		if bl.Discouraged {
			b.WriteString("; discouraged by web-features")
		}
		b.WriteString("\n")
	} else {
		b.WriteString("Baseline: not in web-features\n")
	}
	if c.DocPath != "" {
		fmt.Fprintf(&b, "MDN: %s\n", c.DocPath)
	}
	for i, r := range c.Rows() {
		label := r.Key
		if i == 0 && r.Key == c.Key {
			label = "support"
		}
		b.WriteString(supportLine(label, r))
	}
	if len(c.MoreChildren) > 0 {
		fmt.Fprintf(&b, "[%s, not shown: get_compat one of them, e.g. %s]\n", english.Count(len(c.MoreChildren), "more sub-feature"), c.MoreChildren[0])
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// supportLine prints one row: "label: chrome 64, firefox 69 (partial),
// ie no; experimental".
func supportLine(label string, r webdocs.SupportRow) string {
	parts := make([]string, len(r.Browsers))
	for i, b := range r.Browsers {
		parts[i] = b.Browser + " " + b.Since
	}
	line := label + ": " + strings.Join(parts, ", ")
	if r.Experimental {
		line += "; experimental"
	}
	if r.Deprecated {
		line += "; deprecated"
	}
	return line + "\n"
}

// instructionsFor is the server's instructions, naming explore_web_docs
// when it is offered.
func instructionsFor(opt Options) string {
	if opt.WebDocs == nil {
		return instructions
	}
	return instructions + " Use the explore_web_docs tool to check that a web platform API, element or CSS " +
		"property exists, its exact Web IDL signature, and which browsers support it (Baseline), instead of guessing."
}
