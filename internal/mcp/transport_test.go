package mcp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/mcp"
)

// TestStreamableHTTP drives /mcp as the shared service mounts it (through
// internal/api, behind the same middleware as /v1/explore).
func TestStreamableHTTP(t *testing.T) {
	m := newMirror(t, func(c *config.Config) { c.MaxLineWidth = 10 })
	m.publishFixtures()
	cs := connect(t, &sdk.StreamableClientTransport{Endpoint: m.srv.URL + "/mcp?structured=1"})
	tools, err := cs.ListTools(t.Context(), nil)
	// explore_npm, and explore_web_docs, which the shared service offers
	// too (webdocs_test.go tests it).
	if err != nil || len(tools.Tools) != 2 || tools.Tools[0].Name != mcp.ToolName && tools.Tools[1].Name != mcp.ToolName {
		t.Fatalf("tools = %v, %v", tools, err)
	}
	checkActions(t, cs)
	checkErrors(t, cs)
}

// TestStreamableHTTPIsStateless: no session is kept, so a GET for a
// server stream is refused and a replica needs no state from another.
func TestStreamableHTTPIsStateless(t *testing.T) {
	m := newMirror(t)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, m.srv.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /mcp = %d, want 405", resp.StatusCode)
	}
	// One POST, no initialize before it, answers a tools/list.
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, m.srv.URL+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"explore_npm"`) {
		t.Errorf("stateless tools/list = %d %s", resp.StatusCode, body)
	}
}

// TestStdio runs the built `mirror mcp` on the embedded store, as an agent
// would spawn it, and drives it over stdin/stdout.
func TestStdio(t *testing.T) {
	m := newMirror(t)
	m.publishFixtures()
	cmd := m.command(t, "--data-dir", t.TempDir(), "--max-line-width=10", "--project", t.TempDir(), "--structured")
	cs := connect(t, &sdk.CommandTransport{Command: cmd})
	checkActions(t, cs)
	checkErrors(t, cs)

	// --project: a call without a version gets the one the project locks.
	publishVersions(m)
	dir, err := filepath.Abs(filepath.Join("testdata", "projects", "pnpm"))
	if err != nil {
		t.Fatal(err)
	}
	cs = connect(t, &sdk.CommandTransport{Command: m.command(t, "--data-dir", t.TempDir(), "--project", dir)})
	// Without --structured, the text alone.
	res := call(t, cs, `{"action":"list","packageName":"pad"}`)
	if res.StructuredContent != nil || !strings.HasPrefix(text(res), "pad@1.0.0 (locked by pnpm-lock.yaml)") {
		t.Errorf("pad in the pnpm project = %q (structuredContent %v, want none)", text(res), res.StructuredContent)
	}
}

// TestStdioRemote runs `mirror mcp --remote` against a shared pkgscope:
// results are the remote's, and its errors keep their code, message and
// retry time through internal/client.
func TestStdioRemote(t *testing.T) {
	m := newMirror(t, func(c *config.Config) { c.MaxLineWidth = 10 })
	m.publishFixtures()
	// A token reaches the remote as a bearer header.
	auth := make(chan string, 100)
	shared := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/explore" {
			select {
			case auth <- r.Header.Get("Authorization"):
			default:
			}
		}
		m.app.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(shared.Close)
	cmd := m.command(t, "--remote", shared.URL, "--project", t.TempDir(), "--structured")
	cmd.Env = append(cmd.Env, "PKGSCOPE_TOKEN=s3cret")
	cs := connect(t, &sdk.CommandTransport{Command: cmd})
	checkActions(t, cs)
	checkErrors(t, cs)
	if got := <-auth; got != "Bearer s3cret" {
		t.Errorf("Authorization at the remote = %q", got)
	}
	// The remote's own message, not a local re-wording.
	res := call(t, cs, `{"action":"read","packageName":"lib","path":"nope.txt"}`)
	if e := toolError(t, res); e.Code != "not_found" || !strings.Contains(e.Message, `no such file "nope.txt" in lib@1.0.0`) {
		t.Errorf("remote not_found = %+v", e)
	}
}

// TestHTTPHostGuard: on a loopback address, a foreign Host header is
// refused (DNS rebinding) unless AllowAnyHost says a proxy forwards it.
func TestHTTPHostGuard(t *testing.T) {
	m := newMirror(t)
	post := func(url string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
		req.Host = "pkgscope.example.internal"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(m.srv.URL + "/mcp"); got != http.StatusForbidden {
		t.Errorf("mounted /mcp with a foreign Host = %d, want 403", got)
	}
	open := httptest.NewServer(mcp.HTTPHandler(m.app.Service, mcp.Options{AllowAnyHost: true}))
	defer open.Close()
	if got := post(open.URL); got != http.StatusOK {
		t.Errorf("AllowAnyHost with a foreign Host = %d, want 200", got)
	}
}

// countingExplorer counts the calls that reach the service.
type countingExplorer struct {
	explore.Explorer
	lists int
}

func (c *countingExplorer) List(ctx context.Context, r explore.Request) (*explore.ListResult, error) {
	c.lists++
	return c.Explorer.List(ctx, r)
}

// TestHTTPRefusesBatches: a JSON-RPC batch would run every call in it on
// one HTTP request, which rate limits count once; /mcp answers it 400
// and runs none, and a single call still works.
func TestHTTPRefusesBatches(t *testing.T) {
	m := newMirror(t)
	m.publishFixtures()
	ex := &countingExplorer{Explorer: m.app.Service}
	srv := httptest.NewServer(mcp.HTTPHandler(ex, mcp.Options{AllowAnyHost: true}))
	t.Cleanup(srv.Close)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"explore_npm","arguments":{"action":"list","packageName":"lib"}}}`
	for _, batch := range []string{"[" + call + "," + call + "]", " \n\t[" + call + "]"} {
		if code, body := post(t, srv.URL, nil, batch); code != http.StatusBadRequest || !strings.Contains(body, "batches are not accepted") {
			t.Errorf("batch: %d %s, want 400", code, body)
		}
	}
	if ex.lists != 0 {
		t.Fatalf("a refused batch ran %d calls", ex.lists)
	}
	if code, body := post(t, srv.URL, nil, "\n"+call); code != http.StatusOK || !strings.Contains(body, "lib@1.0.0") || ex.lists != 1 {
		t.Errorf("single call: %d %s (%d calls)", code, body, ex.lists)
	}
}
