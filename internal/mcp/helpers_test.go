package mcp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkgscope/pkgscope/internal/app"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/mcp"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// mirror is a wired pkgscope (embedded store) against a fake registry,
// served over HTTP too: /v1/explore and /mcp.
type mirror struct {
	t   *testing.T
	reg *fakeregistry.Registry
	app *app.App
	srv *httptest.Server
	// env is the npm configuration pointing at reg, for subprocesses.
	env map[string]string
}

func newMirror(t *testing.T, tweak ...func(*config.Config)) *mirror {
	t.Helper()
	reg := fakeregistry.New(t)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.ProjectDir = t.TempDir()
	for _, f := range tweak {
		f(&cfg)
	}
	env := reg.Env()
	a, err := app.New(t.Context(), cfg, slog.New(slog.DiscardHandler), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		srv.Close()
		a.Close()
	})
	return &mirror{t: t, reg: reg, app: a, srv: srv, env: env}
}

// publishFixtures publishes the packages most tests read:
//
//	lib 1.0.0: a.txt (3 lines), dist/*.js|d.ts, min.js (one 32-byte line),
//	           img.png (binary), empty
//	big 1.0.0: 5 files
//	grepme 1.0.0: a.js, b.md, many.js (5 x "foo"), bin.dat (binary)
//	down:      a package whose registry answers 500
func (m *mirror) publishFixtures() {
	t := m.t
	m.reg.Publish("lib", "1.0.0", tarballtest.TGZ(t,
		tarballtest.File("package/package.json", `{"name":"lib","version":"1.0.0"}`),
		tarballtest.File("package/a.txt", "one\ntwo\nthree\n"),
		tarballtest.File("package/dist/index.js", "export const x = 1;\n"),
		tarballtest.File("package/dist/index.d.ts", "export declare const x: 1;\n"),
		tarballtest.File("package/min.js", strings.Repeat("0123456789", 3)+"é"),
		tarballtest.Bytes("package/img.png", []byte("\x89PNG\x00\x00\x01")),
		tarballtest.File("package/empty", ""),
	))
	m.reg.Publish("big", "1.0.0", tarballtest.Package(t, map[string]string{
		"a.js": "", "b.js": "", "c.js": "", "d.js": "", "e.js": "",
	}))
	m.reg.Publish("grepme", "1.0.0", tarballtest.TGZ(t,
		tarballtest.File("package/a.js", "line1\nfoo here\nline3\nline4\nFOO again\n"),
		tarballtest.File("package/b.md", "foo\nfood\na.b\naxb\n"),
		tarballtest.File("package/many.js", strings.Repeat("foo\n", 5)),
		tarballtest.Bytes("package/bin.dat", []byte("foo\x00\x01\x02")),
	))
	m.reg.Publish("down", "1.0.0", tarballtest.Package(t, map[string]string{"a.js": "x"}))
	m.reg.Fail("down", 500, "")
}

// connect returns a client session on t, closed when the test ends.
func connect(t *testing.T, tr sdk.Transport) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "pkgscope-test", Version: "0"}, nil)
	cs, err := c.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// inMemory connects a client to an in-process server over ex, answering
// with structuredContent, which most tests check (structured_test.go
// checks that the default leaves it out).
func inMemory(t *testing.T, ex mcp.Explorer, opt mcp.Options) *sdk.ClientSession {
	t.Helper()
	opt.Structured = true
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mcp.NewServer(ex, opt).Run(ctx, st) }()
	cs := connect(t, ct)
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return cs
}

// call invokes explore_npm with args (a JSON object) and returns the
// result, failing the test on a protocol error.
func call(t *testing.T, cs *sdk.ClientSession, args string) *sdk.CallToolResult {
	t.Helper()
	var a map[string]any
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		t.Fatalf("test arguments %s: %v", args, err)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: mcp.ToolName, Arguments: a})
	if err != nil {
		t.Fatalf("calling %s: %v", args, err)
	}
	return res
}

// decode re-encodes a result's structured content into out, failing when
// the call was a tool error.
func decode(t *testing.T, res *sdk.CallToolResult, out any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

// toolError returns a failed call's error body.
func toolError(t *testing.T, res *sdk.CallToolResult) mcp.ErrorDetail {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want a tool error, got %s", text(res))
	}
	var body mcp.ErrorBody
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &body); err != nil || body.Error.Code == "" {
		t.Fatalf("error structured content %s is not the API's error body (%v); text: %s", b, err, text(res))
	}
	return body.Error
}

func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
)

// mirrorBinary builds cmd/mirror once per test process.
func mirrorBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pkgscope-mcp-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "mirror")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/pkgscope/pkgscope/cmd/mirror")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building cmd/mirror: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

// command returns `mirror mcp args...` with only the environment env
// (plus PATH), so the developer's own npm or pkgscope settings never leak
// into a test.
func (m *mirror) command(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.Command(mirrorBinary(t), append([]string{"mcp"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range m.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = &testLog{t: t}
	return cmd
}

// testLog forwards a subprocess's stderr to the test log.
type testLog struct {
	t  *testing.T
	mu sync.Mutex
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.t.Logf("mirror mcp: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
