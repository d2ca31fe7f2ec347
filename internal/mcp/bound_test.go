package mcp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/mcp"
	pkgproject "github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// headers adds fixed headers to every request a client sends.
type headers map[string]string

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// boundMirror publishes lib 1.0.0 and 2.0.0 (latest) and registers a
// project locking lib 1.0.0; it returns the project's id.
func boundMirror(t *testing.T, tweak ...func(*config.Config)) (*mirror, string) {
	t.Helper()
	m := newMirror(t, tweak...)
	for _, v := range []string{"1.0.0", "2.0.0"} {
		m.reg.Publish("lib", v, tarballtest.Package(t, map[string]string{
			"package.json": `{"name":"lib","version":"` + v + `"}`, "index.js": "export const v = '" + v + "';\n",
		}))
	}
	lock := `{"lockfileVersion": 3, "packages": {"": {"dependencies": {"lib": "^1.0.0"}}, "node_modules/lib": {"version": "1.0.0"}}}`
	reg, err := m.app.Projects.Register(t.Context(), pkgproject.Upload{Lockfile: pkgproject.File{Name: "package-lock.json", Content: lock}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.app.Warm.Wait(t.Context(), reg.WarmRequest, nil); err != nil {
		t.Fatal(err)
	}
	return m, reg.ID
}

// TestHTTPSessionBoundToProject: /mcp?project=<id>, or the
// Pkgscope-Project header, answers a call without a version with the
// version the project locks, as stdio does, and says so on the first
// line; a call naming no package explores the project's tree; the
// description words the default as stdio's does.
func TestHTTPSessionBoundToProject(t *testing.T) {
	m, id := boundMirror(t)
	for name, tr := range map[string]*sdk.StreamableClientTransport{
		"url":    {Endpoint: m.srv.URL + "/mcp?project=" + id},
		"header": {Endpoint: m.srv.URL + "/mcp", HTTPClient: &http.Client{Transport: headers{mcp.ProjectHeader: id}}},
	} {
		t.Run(name, func(t *testing.T) {
			cs := connect(t, tr)
			first := strings.SplitN(text(call(t, cs, `{"action":"read","packageName":"lib","path":"index.js"}`)), "\n", 2)[0]
			if want := "lib@1.0.0 (locked by project " + id[:12] + " (package-lock@3))"; !strings.HasPrefix(first, want) {
				t.Errorf("first line %q, want it to start %q", first, want)
			}
			if got := text(call(t, cs, `{"action":"read","packageName":"lib","version":"2","path":"index.js"}`)); !strings.Contains(got, "the project uses 1.0.0") {
				t.Errorf("an explicit version other than the lock's says nothing of the lock:\n%s", got)
			}
			tree := text(call(t, cs, `{"action":"list"}`))
			if !strings.HasPrefix(tree, "project "+id+" (lockfile package-lock@3)") || strings.Count(strings.SplitN(tree, "\n", 2)[0], id[:12]) != 1 {
				t.Errorf("a list without a package: want the project's tree, its id once:\n%s", tree)
			}
			tools, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range tools.Tools {
				if tool.Name == mcp.ToolName && !strings.Contains(tool.Description, "this project locks") {
					t.Errorf("a bound session's description does not say the project's lock is used: %s", tool.Description)
				}
			}
		})
	}
	// Unbound, the same call answers latest.
	cs := connect(t, &sdk.StreamableClientTransport{Endpoint: m.srv.URL + "/mcp"})
	if got := text(call(t, cs, `{"action":"read","packageName":"lib","path":"index.js"}`)); !strings.HasPrefix(got, "lib@2.0.0") {
		t.Errorf("unbound: want latest:\n%s", got)
	}
}

// TestHTTPBoundProjectRefused: an unknown project, one the token may not
// read, and a URL and header that disagree are refused before any tool
// runs — the initialize request fails — with the API's status.
func TestHTTPBoundProjectRefused(t *testing.T) {
	m, id := boundMirror(t, func(c *config.Config) { c.Tokens = "all-token,scoped-token:@s" })
	other := strings.Repeat("0", 64)
	for _, c := range []struct {
		name, url string
		hdr       headers
		status    int
		says      string
	}{
		{"unknown", "/mcp?project=" + other, headers{"Authorization": "Bearer all-token"}, http.StatusNotFound, "POST /v1/projects"},
		{"not an id", "/mcp?project=lodash", headers{"Authorization": "Bearer all-token"}, http.StatusNotFound, "64 hex digits"},
		{"forbidden", "/mcp?project=" + id, headers{"Authorization": "Bearer scoped-token"}, http.StatusForbidden, "lib"},
		{"disagree", "/mcp?project=" + id, headers{"Authorization": "Bearer all-token", mcp.ProjectHeader: other}, http.StatusBadRequest, "differ"},
		{"structured=maybe", "/mcp?structured=maybe", headers{"Authorization": "Bearer all-token"}, http.StatusBadRequest, "structured"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := post(t, m.srv.URL+c.url, c.hdr, initialize)
			if status != c.status || !strings.Contains(body, c.says) || !strings.Contains(body, `"jsonrpc":"2.0"`) {
				t.Errorf("initialize = %d %s, want %d naming %q", status, body, c.status, c.says)
			}
		})
	}
	if status, body := post(t, m.srv.URL+"/mcp?project="+id, headers{"Authorization": "Bearer all-token"}, initialize); status != http.StatusOK {
		t.Errorf("a token that may read the project: initialize = %d %s", status, body)
	}
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

// post sends one JSON-RPC message to url and returns the status and body.
func post(t *testing.T, url string, hdr headers, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
