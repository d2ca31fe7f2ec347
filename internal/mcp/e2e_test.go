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
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/explore"
	pkgproject "github.com/pkgscope/pkgscope/internal/project"
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
		if args[0] != "--calls" {
			args = append([]string{"--calls", calls}, args...)
		}
		cmd := exec.Command(node, append([]string{script}, args...)...)
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
		checkE2E(t, run(t, "--url", m.srv.URL+"/mcp?structured=1", "--header", "Authorization: Bearer e2e-token"))
	})
	t.Run("stdio", func(t *testing.T) {
		bin := mirrorBinary(t)
		checkE2E(t, run(t, "--", bin, "mcp", "--structured", "--data-dir", t.TempDir(), "--max-line-width", "10", "--project", t.TempDir()))
	})

	// Issue 13: `mirror mcp --remote` explores the local project too: a
	// call naming no package registers the lockfile with the shared
	// pkgscope (POST /v1/projects) and explores it there.
	t.Run("stdio --remote explores the local project", func(t *testing.T) {
		r := newMirror(t, func(c *config.Config) { c.ProjectWait = 2 * time.Minute }) // the grep waits for the warm
		r.publishFixtures()
		dir := t.TempDir()
		rewrite(t, filepath.Join(dir, "package.json"), `{"name":"app","version":"1.0.0","dependencies":{"grepme":"1.0.0"}}`)
		rewrite(t, filepath.Join(dir, "package-lock.json"), `{"name":"app","lockfileVersion":3,"requires":true,"packages":{
			"":{"name":"app","version":"1.0.0","dependencies":{"grepme":"1.0.0"}},
			"node_modules/grepme":{"version":"1.0.0"}}}`)
		projCalls := filepath.Join(t.TempDir(), "project.json")
		rewrite(t, projCalls, `[{"action":"grep","pattern":"foo","outputMode":"files_with_matches"},
			{"action":"read","path":"node_modules/grepme/a.js"}]`)
		out := run(t, "--calls", projCalls, "--", mirrorBinary(t), "mcp", "--remote", r.srv.URL, "--project", dir)
		if len(out.Results) != 2 || out.Results[0].IsError || out.Results[1].IsError {
			t.Fatalf("project calls through --remote: %+v", out.Results)
		}
		if grep := out.Results[0].Text; !strings.Contains(grep, "node_modules/grepme/many.js") || strings.Contains(grep, "[incomplete") {
			t.Errorf("project grep through --remote:\n%s", grep)
		}
		if read := out.Results[1].Text; !strings.Contains(read, "foo here") {
			t.Errorf("project read through --remote:\n%s", read)
		}
		u, err := pkgproject.ReadDir(dir, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.app.Projects.Status(t.Context(), pkgproject.ID(u)); err != nil {
			t.Errorf("the shared pkgscope has no project registered by mirror mcp --remote: %v", err)
		}
	})

	// Issue 12: `mirror mcp` started where an agent starts it, without
	// --project, finds the project as npm does.
	publishVersions(m)
	padCalls := filepath.Join(t.TempDir(), "pad.json")
	rewrite(t, padCalls, `[{"action":"list","packageName":"pad"},{"action":"list","packageName":"pad","version":"2.0.0"}]`)
	pad := func(t *testing.T, cwd string) e2eOutput {
		t.Helper()
		return run(t, "--calls", padCalls, "--cwd", cwd, "--", mirrorBinary(t), "mcp", "--structured", "--data-dir", t.TempDir())
	}
	t.Run("stdio in a project subfolder", func(t *testing.T) {
		root := t.TempDir()
		copyFile(t, filepath.Join("testdata", "projects", "npm", "package.json"), filepath.Join(root, "package.json"))
		copyFile(t, filepath.Join("testdata", "projects", "npm", "package-lock.json"), filepath.Join(root, "package-lock.json"))
		sub := filepath.Join(root, "src", "deep")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		out := pad(t, sub)
		checkPad(t, out, "1.1.0", "pad@1.1.0 (locked by package-lock.json)")
	})
	t.Run("stdio in a workspace package", func(t *testing.T) {
		// The root lockfile pins pad 1.0.1; the package declares ^1.0.0,
		// which alone would pick 1.2.0: npm installs 1.0.1.
		root := t.TempDir()
		app := filepath.Join(root, "packages", "app")
		if err := os.MkdirAll(filepath.Join(app, "src"), 0o755); err != nil {
			t.Fatal(err)
		}
		rewrite(t, filepath.Join(root, "package.json"), `{"name":"ws","private":true,"workspaces":["packages/*"]}`)
		rewrite(t, filepath.Join(app, "package.json"), `{"name":"app","version":"1.0.0","dependencies":{"pad":"^1.0.0"}}`)
		rewrite(t, filepath.Join(root, "package-lock.json"), `{"name":"ws","lockfileVersion":3,"requires":true,"packages":{
			"":{"name":"ws","workspaces":["packages/*"]},
			"node_modules/app":{"resolved":"packages/app","link":true},
			"node_modules/pad":{"version":"1.0.1","resolved":"http://registry.example.invalid/pad/-/pad-1.0.1.tgz"},
			"packages/app":{"name":"app","version":"1.0.0","dependencies":{"pad":"^1.0.0"}}}}`)
		out := pad(t, filepath.Join(app, "src"))
		checkPad(t, out, "1.0.1", "pad@1.0.1 (locked by the workspace root's package-lock.json)")
	})
}

// checkPad checks the two pad calls: the default version and its reason
// on the first line, then an explicit 2.0.0 with a one-line note naming
// the project's version.
func checkPad(t *testing.T, out e2eOutput, version, first string) {
	t.Helper()
	if len(out.Results) != 2 {
		t.Fatalf("%d results, want 2", len(out.Results))
	}
	var l explore.ListResult
	if json.Unmarshal(out.Results[0].StructuredContent, &l); l.Version != version || !strings.HasPrefix(out.Results[0].Text, first+" ") {
		t.Errorf("default pad = %s %q, want %s and first line %q", l.Version, out.Results[0].Text, version, first)
	}
	want := "[note: the project uses " + version + " ("
	if txt := out.Results[1].Text; !strings.HasPrefix(txt, "pad@2.0.0 (exact)") || !strings.Contains(txt, want) || !strings.Contains(txt, "this answer is for 2.0.0, as asked]") {
		t.Errorf("explicit pad@2.0.0 = %q, want a note %q", txt, want)
	}
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
	if !strings.HasPrefix(res[0].Text, "lib@1.0.0 (latest: ") || !strings.Contains(res[0].Text, ") 7 files, 132 B\na.txt (14 B)\n") {
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
