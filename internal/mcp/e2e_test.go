package mcp_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/explore"
)

// e2eDir holds the TypeScript client and its pinned dependencies.
var e2eDir = filepath.Join("..", "..", "e2e", "mcp-client")

// e2eOutput is what e2e/mcp-client/client.mjs prints.
type e2eOutput struct {
	Server struct{ Name, Version string }
	Tools  []struct {
		Name        string
		Description string
		InputSchema struct {
			Properties map[string]struct{ Enum []string }
		}
	}
	Results []struct {
		Arguments         map[string]any
		IsError           bool
		StructuredContent json.RawMessage
		Text              string
	}
}

// TestE2ETypeScriptClient: the official TypeScript SDK client, which
// pkgscope did not write, lists the tools and calls every action over
// streamable HTTP (as mounted on the shared service, with a bearer token)
// and over stdio (spawning `mirror mcp`).
func TestE2ETypeScriptClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: install Node.js 20 or later, then run `npm ci --prefix e2e/mcp-client`")
	}
	if _, err := os.Stat(filepath.Join(e2eDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the TypeScript MCP SDK is not installed: run `npm ci --prefix e2e/mcp-client` (%v)", err)
	}
	m := newMirror(t, func(c *config.Config) { c.MaxLineWidth = 10 })
	m.publishFixtures()
	calls := filepath.Join(t.TempDir(), "calls.json")
	rewrite(t, calls, `[
		{"action":"list","packageName":"lib"},
		{"action":"glob","packageName":"lib","version":"^1","patterns":["dist/**/*.d.ts"]},
		{"action":"read","packageName":"lib","path":"a.txt","offset":2,"limit":1},
		{"action":"read","packageName":"lib","path":"min.js","offset":1,"column":11},
		{"action":"grep","packageName":"lib","pattern":"export","include":["dist/**"],"contextLines":1},
		{"action":"read","packageName":"lib","path":"missing.txt"},
		{"action":"list","packageName":"lib","bogus":true}
	]`)
	script, err := filepath.Abs(filepath.Join(e2eDir, "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, args ...string) e2eOutput {
		t.Helper()
		cmd := exec.Command(node, append([]string{script, "--calls", calls}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		for k, v := range m.env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("node client.mjs: %v\nstderr:\n%s", err, stderr.String())
		}
		var out e2eOutput
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("client output is not JSON: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
		return out
	}
	t.Run("streamable HTTP", func(t *testing.T) {
		checkE2E(t, run(t, "--url", m.srv.URL+"/mcp", "--header", "Authorization: Bearer e2e-token"))
	})
	t.Run("stdio", func(t *testing.T) {
		bin := mirrorBinary(t)
		checkE2E(t, run(t, "--", bin, "mcp", "--data-dir", t.TempDir(), "--max-line-width", "10", "--project", t.TempDir()))
	})
}

func checkE2E(t *testing.T, out e2eOutput) {
	t.Helper()
	if out.Server.Name != "pkgscope" {
		t.Errorf("server = %+v", out.Server)
	}
	// Both the shared service and `mirror mcp` offer explore_npm and
	// explore_web_docs.
	i := len(out.Tools) - 1
	for i >= 0 && out.Tools[i].Name != "explore_npm" {
		i--
	}
	if i < 0 || len(out.Tools) != 2 || out.Tools[1-i].Name != "explore_web_docs" ||
		!slices.Equal(out.Tools[i].InputSchema.Properties["action"].Enum, []string{"list", "glob", "read", "grep", "diff"}) {
		t.Fatalf("tools = %+v", out.Tools)
	}
	if len(out.Results) != 7 {
		t.Fatalf("%d results, want 7", len(out.Results))
	}
	var l struct {
		Version    string
		Entries    []explore.Entry
		TotalFiles int
	}
	var r struct {
		Content    string
		NextColumn int
		LineBytes  int
	}
	var e struct {
		Error struct{ Code, Message string }
	}
	res := out.Results
	for i, want := range []bool{false, false, false, false, false, true, true} {
		if res[i].IsError != want {
			t.Errorf("call %v: isError = %v (%s)", res[i].Arguments, res[i].IsError, res[i].Text)
		}
	}
	if json.Unmarshal(res[0].StructuredContent, &l); l.Version != "1.0.0" || l.TotalFiles != 7 || !slices.Contains(paths(l.Entries), "dist/index.d.ts") {
		t.Errorf("list = %s", res[0].StructuredContent)
	}
	if !strings.HasPrefix(res[0].Text, "lib@1.0.0 (latest: no version given) 7 files, 132 B\na.txt (14 B)\n") {
		t.Errorf("list text = %q", res[0].Text)
	}
	l.Entries = nil
	if json.Unmarshal(res[1].StructuredContent, &l); !slices.Equal(paths(l.Entries), []string{"dist/index.d.ts"}) {
		t.Errorf("glob = %s", res[1].StructuredContent)
	}
	if json.Unmarshal(res[2].StructuredContent, &r); r.Content != "     2\ttwo" {
		t.Errorf("read = %s", res[2].StructuredContent)
	}
	if json.Unmarshal(res[3].StructuredContent, &r); r.Content != "     1\t0123456789" || r.NextColumn != 21 || r.LineBytes != 32 {
		t.Errorf("read window = %s", res[3].StructuredContent)
	}
	var g struct {
		Matches []struct {
			File string
			Line int
			Text string
		}
	}
	if json.Unmarshal(res[4].StructuredContent, &g); len(g.Matches) != 2 || g.Matches[0].File != "dist/index.d.ts" || g.Matches[1].Text != "export const x = 1;" {
		t.Errorf("grep = %s", res[4].StructuredContent)
	}
	if !strings.Contains(res[4].Text, "dist/index.js:1:1:export const x = 1;") {
		t.Errorf("grep text = %q", res[4].Text)
	}
	if json.Unmarshal(res[5].StructuredContent, &e); e.Error.Code != "not_found" || !strings.Contains(e.Error.Message, "missing.txt") {
		t.Errorf("missing file = %s", res[5].StructuredContent)
	}
	if json.Unmarshal(res[6].StructuredContent, &e); e.Error.Code != "bad_request" || !strings.Contains(res[6].Text, "bogus") {
		t.Errorf("unknown field = %s %q", res[6].StructuredContent, res[6].Text)
	}
}
