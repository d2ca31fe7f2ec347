package mcp_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/mcp"
	"github.com/pkgscope/pkgscope/internal/webdocs"
	"github.com/pkgscope/pkgscope/internal/webdocs/webdocstest"
)

// webDocsMirror is a mirror whose web docs read the fixture data packages,
// with MDN off (the packages answer get_doc).
func webDocsMirror(t *testing.T) *mirror {
	t.Helper()
	v := webdocstest.Versions()
	m := newMirror(t, func(c *config.Config) {
		c.WebDocsBCDVersion, c.WebDocsInventoryVersion, c.WebDocsIDLVersion, c.WebDocsFeaturesVersion = v.BCD, v.Inventory, v.IDL, v.Features
		c.MDNBaseURL = ""
	})
	webdocstest.Publish(t, m.reg)
	return m
}

func callTool(t *testing.T, cs *sdk.ClientSession, name, args string) *sdk.CallToolResult {
	t.Helper()
	var a map[string]any
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		t.Fatalf("test arguments %s: %v", args, err)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: a})
	if err != nil {
		t.Fatalf("calling %s %s: %v", name, args, err)
	}
	return res
}

func TestWebDocsToolDefinition(t *testing.T) {
	m := webDocsMirror(t)
	cs := inMemory(t, m.app.Service, mcp.Options{WebDocs: m.app.WebDocs})
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var tool *sdk.Tool
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Name == mcp.WebDocsToolName {
			tool = tl
		}
	}
	if !slices.Equal(names, []string{"explore_npm", "explore_web_docs"}) && !slices.Equal(names, []string{"explore_web_docs", "explore_npm"}) {
		t.Fatalf("tools = %v", names)
	}
	if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
		t.Errorf("annotations = %+v", tool.Annotations)
	}
	for _, want := range []string{"'search'", "'get_doc'", "'get_compat'", "Baseline", "Web IDL", "closest"} {
		if !strings.Contains(tool.Description, want) {
			t.Errorf("description lacks %s: %s", want, tool.Description)
		}
	}
	var schema struct {
		Required             []string
		AdditionalProperties *bool `json:"additionalProperties"`
		Properties           map[string]struct {
			Enum        []string
			Description string
			Minimum     *float64
			Type        string
		}
	}
	b, _ := json.Marshal(tool.InputSchema)
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	// Exactly the /v1/webdocs fields (webdocs.Request).
	var props []string
	for k, p := range schema.Properties {
		props = append(props, k)
		if p.Description == "" {
			t.Errorf("property %s has no description", k)
		}
		if p.Type == "integer" && (p.Minimum == nil || *p.Minimum != 0) {
			t.Errorf("integer %s has no minimum 0", k)
		}
	}
	slices.Sort(props)
	if !slices.Equal(props, []string{"action", "key", "limit", "offset", "path", "query"}) {
		t.Errorf("properties = %v", props)
	}
	if !slices.Equal(schema.Properties["action"].Enum, webdocs.Actions) || !slices.Equal(schema.Required, []string{"action"}) {
		t.Errorf("action enum %v, required %v", schema.Properties["action"].Enum, schema.Required)
	}
	if schema.AdditionalProperties == nil || *schema.AdditionalProperties {
		t.Error("additional properties are allowed; a misspelt field must be an error")
	}
	init := cs.InitializeResult()
	if init == nil || !strings.Contains(init.Instructions, "explore_web_docs") {
		t.Errorf("instructions do not mention explore_web_docs: %+v", init)
	}
}

func TestWebDocsToolActions(t *testing.T) {
	m := webDocsMirror(t)
	cs := inMemory(t, m.app.Service, mcp.Options{WebDocs: m.app.WebDocs})

	res := callTool(t, cs, mcp.WebDocsToolName, `{"action":"search","query":"ResizeObserver","limit":2}`)
	var sr webdocs.SearchResult
	decode(t, res, &sr)
	if len(sr.Documents) != 2 || sr.Documents[0].Path != "/en-US/docs/Web/API/ResizeObserver" {
		t.Errorf("search = %+v", sr)
	}
	txt := text(res)
	if bl := sr.Documents[0].Baseline; bl == nil || bl.Status != "high" {
		t.Errorf("search's first document has Baseline %+v, want high", bl)
	}
	for _, want := range []string{"1. ResizeObserver — /en-US/docs/Web/API/ResizeObserver [web-api-interface]", "compat: api.ResizeObserver",
		"Baseline: high (widely available since 2023-01-28)\n",
		"IDL: constructor(ResizeObserverCallback callback);", "search again with offset=2"} {
		if !strings.Contains(txt, want) {
			t.Errorf("search text lacks %q:\n%s", want, txt)
		}
	}

	res = callTool(t, cs, mcp.WebDocsToolName, `{"action":"get_compat","key":"api.ResizeObserver"}`)
	var c webdocs.Compat
	decode(t, res, &c)
	if c.Key != "api.ResizeObserver" || c.Baseline == nil || c.Baseline.Status != "high" {
		t.Errorf("get_compat = %+v", c)
	}
	txt = text(res)
	for _, want := range []string{"Baseline: high (widely available since 2023-01-28)", "support: chrome 64, chrome_android 64, edge 79, firefox 69",
		"ie no", "api.ResizeObserver.observe: chrome 64", "MDN: /en-US/docs/Web/API/ResizeObserver"} {
		if !strings.Contains(txt, want) {
			t.Errorf("get_compat text lacks %q:\n%s", want, txt)
		}
	}

	// A key whose own status differs from its feature's says both, and
	// which is which.
	res = callTool(t, cs, mcp.WebDocsToolName, `{"action":"get_compat","key":"api.ResizeObserver.observe.options_box_parameter"}`)
	if txt := text(res); !strings.Contains(txt, "Baseline: low (newly available since 2022-03-14), this key's own status in web-features \"resize-observer\"; the feature as a whole: high (widely available since 2023-01-28)") {
		t.Errorf("get_compat of a key with its own status:\n%s", txt)
	}

	res = callTool(t, cs, mcp.WebDocsToolName, `{"action":"get_doc","path":"/en-US/docs/Web/API/ResizeObserver/ResizeObserver"}`)
	var d webdocs.Doc
	decode(t, res, &d)
	if d.Source != "packages" || !strings.Contains(d.IDL, "constructor(ResizeObserverCallback callback);") {
		t.Errorf("get_doc = %+v", d)
	}
	if txt := text(res); !strings.Contains(txt, "(source: packages)") || !strings.Contains(txt, "[note: MDN's article text was unavailable") ||
		!strings.Contains(txt, "```webidl") {
		t.Errorf("get_doc text:\n%s", txt)
	}
}

func TestWebDocsToolErrors(t *testing.T) {
	m := webDocsMirror(t)
	cs := inMemory(t, m.app.Service, mcp.Options{WebDocs: m.app.WebDocs})
	for _, tc := range []struct{ args, code, want string }{
		{`{"action":"get_compat","key":"api.ResizeObserverr"}`, "not_found", "closest valid keys: api.ResizeObserver"},
		{`{"action":"get_doc","path":"/en-US/blog/x"}`, "bad_request", "outside /docs"},
		{`{"action":"browse"}`, "bad_request", "action"},
		{`{"action":"search","query":"x","pattern":"y"}`, "bad_request", "pattern"},
		{`{"action":"search","Query":"x"}`, "bad_request", `unknown field "Query": did you mean "query"?`},
		{`{"action":"search","query":"x","limit":-1}`, "bad_request", "negative"},
		{`{"action":"search"}`, "bad_request", "missing"},
	} {
		e := toolError(t, callTool(t, cs, mcp.WebDocsToolName, tc.args))
		if e.Code != tc.code || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s: %+v, want %s with %q", tc.args, e, tc.code, tc.want)
		}
	}
}

// The shared service's /mcp offers the tool, over streamable HTTP.
func TestWebDocsToolOverHTTP(t *testing.T) {
	m := webDocsMirror(t)
	cs := connect(t, &sdk.StreamableClientTransport{Endpoint: m.srv.URL + "/mcp?structured=1"})
	res := callTool(t, cs, mcp.WebDocsToolName, `{"action":"get_compat","key":"css.properties.gap"}`)
	var c webdocs.Compat
	decode(t, res, &c)
	if c.Key != "css.properties.gap" || c.Baseline == nil || c.Baseline.Feature != "grid" {
		t.Errorf("get_compat over HTTP = %+v", c)
	}
}
