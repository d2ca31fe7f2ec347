package mcp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/mcp"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// maxToolsListBytes is what tools/list may cost an agent's context by
// default (issue 28: it was 25.5 KB, 16 KB of it the output schema).
const maxToolsListBytes = 10 << 10

// maxExploreToolBytes bounds explore_npm's description and input schema.
const maxExploreToolBytes = 5 << 10

// TestTextOnlyByDefault: over HTTP, answers carry the text alone and
// tools/list no output schema, unless the connection asks with
// ?structured=1; the wire carries at most 1.2x the text a model reads.
func TestTextOnlyByDefault(t *testing.T) {
	m, _ := boundMirror(t)
	var src strings.Builder
	for i := range 200 {
		fmt.Fprintf(&src, "export declare function f%d(a: string, b: number): Promise<\"x\" | null>;\n", i)
	}
	m.reg.Publish("wide", "1.0.0", tarballtest.Package(t, map[string]string{"index.d.ts": src.String()}))
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	callLib := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"explore_npm","arguments":{"action":"read","packageName":"wide","path":"index.d.ts"}}}`
	callBad := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"explore_npm","arguments":{"action":"read","packageName":"lib","path":"nope.js"}}}`

	_, tools := post(t, m.srv.URL+"/mcp", nil, list)
	if strings.Contains(tools, "outputSchema") || len(tools) > maxToolsListBytes {
		t.Errorf("tools/list: %d bytes (want ≤ %d), output schema %v", len(tools), maxToolsListBytes, strings.Contains(tools, "outputSchema"))
	}
	var l struct {
		Result struct {
			Tools []struct {
				Name        string
				Description string
				InputSchema json.RawMessage
			}
		}
	}
	if err := json.Unmarshal([]byte(tools), &l); err != nil {
		t.Fatal(err)
	}
	for _, tool := range l.Result.Tools {
		if n := len(tool.Description) + len(tool.InputSchema); tool.Name == mcp.ToolName && n > maxExploreToolBytes {
			t.Errorf("explore_npm's description and input schema: %d bytes, want ≤ %d", n, maxExploreToolBytes)
		}
	}
	for _, args := range []string{callLib, callBad} {
		_, body := post(t, m.srv.URL+"/mcp", nil, args)
		txt := resultText(t, body)
		if strings.Contains(body, "structuredContent") {
			t.Errorf("structuredContent without ?structured=1: %s", body)
		}
		// The error's text is a line: the JSON-RPC envelope is most of it.
		if args == callLib && float64(len(body)) > 1.2*float64(len(txt)) {
			t.Errorf("%d bytes on the wire for %d of text, want ≤ 1.2x", len(body), len(txt))
		}
	}

	_, tools = post(t, m.srv.URL+"/mcp?structured=1", nil, list)
	if !strings.Contains(tools, "outputSchema") {
		t.Error("?structured=1: tools/list has no output schema")
	}
	for _, args := range []string{callLib, callBad} {
		if _, body := post(t, m.srv.URL+"/mcp?structured=1", nil, args); !strings.Contains(body, "structuredContent") {
			t.Errorf("?structured=1: no structuredContent: %s", body)
		}
	}
}

// resultText is a tools/call response's text.
func resultText(t *testing.T, body string) string {
	t.Helper()
	var r struct {
		Result struct {
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Result.Content) == 0 {
		t.Fatalf("tools/call answer %s: %v", body, err)
	}
	var parts []string
	for _, c := range r.Result.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// TestDiffFormattingOptionsRESTOnly: npm diff's formatting options are not
// in the tool's schema, and a call giving one is told where they live.
func TestDiffFormattingOptionsRESTOnly(t *testing.T) {
	m := newMirror(t)
	cs := inMemory(t, m.app.Service, mcp.Options{})
	for _, f := range []string{`"noPrefix":true`, `"srcPrefix":"x/"`, `"dstPrefix":"y/"`, `"text":true`, `"ignoreAllSpace":true`} {
		res := call(t, cs, `{"action":"diff","packageName":"lib","from":"1.0.0","to":"2.0.0",`+f+`}`)
		if e := toolError(t, res); e.Code != "bad_request" || !strings.Contains(e.Message, "REST API") {
			t.Errorf("%s: %+v, want a bad_request naming the REST API", f, e)
		}
	}
}

// TestWebPageLinkOncePerVersion: the "[web page: …]" line comes with a
// session's first answer for a version on stdio, never in HTTP text; the
// JSON keeps browse on every answer.
func TestWebPageLinkOncePerVersion(t *testing.T) {
	m, _ := boundMirror(t, func(c *config.Config) { c.PublicURL = "https://pkgscope.example.internal" })
	cs := inMemory(t, m.app.Service, mcp.Options{})
	for i, want := range []bool{true, false, false} {
		res := call(t, cs, `{"action":"read","packageName":"lib","version":"1.0.0","path":"index.js"}`)
		var r explore.ReadResult
		decode(t, res, &r)
		if got := strings.Contains(text(res), "[web page: "); got != want || r.Browse == "" {
			t.Errorf("call %d: web page line %v, want %v (browse %q)", i+1, got, want, r.Browse)
		}
	}
	if res := call(t, cs, `{"action":"read","packageName":"lib","version":"2.0.0","path":"index.js"}`); !strings.Contains(text(res), "[web page: ") {
		t.Errorf("another version's first answer has no web page line:\n%s", text(res))
	}
	http := connect(t, &sdk.StreamableClientTransport{Endpoint: m.srv.URL + "/mcp"})
	if res := call(t, http, `{"action":"read","packageName":"lib","version":"1.0.0","path":"index.js"}`); strings.Contains(text(res), "[web page: ") {
		t.Errorf("HTTP text has the web page line:\n%s", text(res))
	}
}

// TestUnknownActionNamesTheOthers: an unknown action is told the
// actions, which one searches, and the web docs tool when it is offered.
func TestUnknownActionNamesTheOthers(t *testing.T) {
	m := webDocsMirror(t)
	cs := connect(t, &sdk.StreamableClientTransport{Endpoint: m.srv.URL + "/mcp"})
	res := call(t, cs, `{"action":"search","packageName":"lodash","pattern":"debounce"}`)
	if got := text(res); !res.IsError || !strings.Contains(got, "grep searches file contents") || !strings.Contains(got, mcp.WebDocsToolName) {
		t.Errorf("action search = %q, want the actions and %s named", got, mcp.WebDocsToolName)
	}
}

// TestEmptyPackageGetsClosestNames: a misspelling that is an empty
// placeholder on the registry ("lodahs") is told so, with the closest
// popular names; so is a made-up name.
func TestEmptyPackageGetsClosestNames(t *testing.T) {
	m := newMirror(t)
	m.reg.SetRawPackument("lodahs", []byte(`{"name":"lodahs","versions":{},"dist-tags":{},"time":{}}`))
	cs := inMemory(t, m.app.Service, mcp.Options{})
	for _, name := range []string{"lodahs", "expresss"} {
		res := call(t, cs, `{"action":"list","packageName":"`+name+`"}`)
		want := map[string]string{"lodahs": "lodash", "expresss": "express"}[name]
		if e := toolError(t, res); e.Code != "not_found" || !strings.Contains(e.Message, "closest published names: "+want) {
			t.Errorf("list %s = %+v, want a not_found naming %s", name, e, want)
		}
	}
}
