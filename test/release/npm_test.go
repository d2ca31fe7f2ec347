package release

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// testVersion is the version the test stamps, so it can check that every
// surface reports the build it installed.
const testVersion = "0.0.0-test"

// npmNames are npm's names for Go's GOOS and GOARCH.
var npmNames = map[string]string{"windows": "win32", "amd64": "x64"}

func npmName(goName string) string {
	if n, ok := npmNames[goName]; ok {
		return n
	}
	return goName
}

func TestNPMInstallOffline(t *testing.T) {
	for _, tool := range []string{"git", "node", "npm", "npx"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: the release test builds with git and installs with npm (Debian: apt-get install git nodejs npm)", tool)
		}
	}
	client, err := filepath.Abs(filepath.Join("..", "..", "e2e", "mcp-client", "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(client), "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the TypeScript MCP SDK is not installed: run `npm ci --prefix e2e/mcp-client` (%v)", err)
	}
	tmp := t.TempDir()
	dist := filepath.Join(tmp, "dist")
	build := exec.Command("bash", filepath.Join("..", "..", "scripts", "release.sh"), "--local", "--out", dist)
	build.Env = append(os.Environ(), "PKGSCOPE_VERSION="+testVersion)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release.sh --local: %v\n%s", err, out)
	}

	// The tarballs: the main package and this platform's.
	platform := npmName(runtime.GOOS) + "-" + npmName(runtime.GOARCH)
	tarballs := []string{
		filepath.Join(dist, "npm", "pkgscope-"+testVersion+".tgz"),
		filepath.Join(dist, "npm", "pkgscope-"+platform+"-"+testVersion+".tgz"),
	}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tarballs {
		if !bytes.Contains(sums, []byte("  npm/"+filepath.Base(tb)+"\n")) {
			t.Errorf("SHA256SUMS does not list npm/%s:\n%s", filepath.Base(tb), sums)
		}
	}

	// No registry: npm's is a loopback port nothing listens on, its cache
	// an empty folder, its user config empty, and --offline on top.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	noRegistry := "http://" + ln.Addr().String() + "/"
	ln.Close()
	project := filepath.Join(tmp, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "package.json"), []byte(`{"name":"empty","version":"1.0.0","private":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	userconfig := filepath.Join(tmp, "npmrc")
	if err := os.WriteFile(userconfig, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + tmp,
		"npm_config_registry=" + noRegistry,
		"npm_config_cache=" + filepath.Join(tmp, "npm-cache"),
		"npm_config_userconfig=" + userconfig,
		"npm_config_update_notifier=false",
		"PKGSCOPE_DATA_DIR=" + filepath.Join(tmp, "data"),
	}
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = project, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	installed := run("npm", append([]string{"install", "--offline", "--no-audit", "--no-fund"}, tarballs...)...)
	t.Logf("$ npm install --offline %s\n%s", strings.Join(tarballs, " "), installed)

	version := run("npx", "--no-install", "pkgscope", "--version")
	t.Logf("$ npx --no-install pkgscope --version\n%s", version)
	if first, _, _ := strings.Cut(version, "\n"); first != "pkgscope v"+testVersion {
		t.Errorf("npx --no-install pkgscope --version printed\n%s\nwant its first line to be %q", version, "pkgscope v"+testVersion)
	}
	if !strings.Contains(version, runtime.Version()) {
		t.Errorf("--version does not name the Go release (%s):\n%s", runtime.Version(), version)
	}

	// MCP over stdio through the installed bin, by the official SDK's
	// client: initialize, then tools/list (no calls).
	calls := filepath.Join(tmp, "calls.json")
	if err := os.WriteFile(calls, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Server struct{ Name, Version string }
		Tools  []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(run("node", client, "--calls", calls, "--cwd", project, "--", "npx", "--no-install", "pkgscope", "mcp")), &out); err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, tool := range out.Tools {
		tools = append(tools, tool.Name)
	}
	t.Logf("$ node client.mjs -- npx --no-install pkgscope mcp\nserverInfo %+v, tools %v", out.Server, tools)
	if out.Server.Name != "pkgscope" || out.Server.Version != "v"+testVersion || !slices.Contains(tools, "explore_npm") {
		t.Errorf("initialize + tools/list through npx: server %+v, tools %v; want pkgscope v%s with explore_npm", out.Server, tools, testVersion)
	}
}
