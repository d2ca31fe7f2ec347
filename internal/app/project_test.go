package app

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// projectLock is a package-lock v3 of a, nested ms@2.1.3 under a, and
// ms@2.0.0 at the top.
const projectLock = `{
  "name": "app", "lockfileVersion": 3, "requires": true,
  "packages": {
    "": {"name": "app", "dependencies": {"a": "1.0.0", "ms": "2.0.0"}},
    "node_modules/a": {"version": "1.0.0", "dependencies": {"ms": "2.1.3"}},
    "node_modules/a/node_modules/ms": {"version": "2.1.3"},
    "node_modules/ms": {"version": "2.0.0"}
  }
}`

func publishProject(t *testing.T, reg *fakeregistry.Registry) {
	for _, nv := range [][2]string{{"a", "1.0.0"}, {"ms", "2.0.0"}, {"ms", "2.1.3"}} {
		reg.Publish(nv[0], nv[1], tarballtest.Package(t, map[string]string{
			"package.json": `{"name":"` + nv[0] + `","version":"` + nv[1] + `"}`,
			"index.js":     "module.exports = '" + nv[0] + "@" + nv[1] + "';\n",
		}))
	}
}

// do sends method path body with token ("" for none) and returns the
// status and body.
func (m *mirror) do(method, path, token string, body any) (int, []byte) {
	m.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, m.srv.URL+path, r)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func lockUpload(content string) project.Upload {
	return project.Upload{Lockfile: project.File{Name: "package-lock.json", Content: content}}
}

// TestProjectRegistration: registering warms every locked version and
// answers an id; registering again answers the same id without new work;
// GET says ready once all are warm.
func TestProjectRegistration(t *testing.T) {
	forEachStore(t, func(t *testing.T, kind storeKind) {
		// With Postgres, warm jobs run in `indexer worker` unless asked.
		m := newMirror(t, kind, func(c *config.Config) { c.WarmInProcess = true })
		publishProject(t, m.reg)
		status, b := m.do(http.MethodPost, "/v1/projects", "", lockUpload(projectLock))
		if status != http.StatusCreated {
			t.Fatalf("POST: %d %s", status, b)
		}
		var reg project.Registered
		if err := json.Unmarshal(b, &reg); err != nil {
			t.Fatal(err)
		}
		if len(reg.ID) != 64 || reg.Packages != 3 || reg.WarmRequest == "" || reg.Format != "package-lock@3" {
			t.Fatalf("registered %+v", reg)
		}
		if _, err := m.app.Warm.Wait(t.Context(), reg.WarmRequest, nil); err != nil {
			t.Fatal(err)
		}
		status, b = m.do(http.MethodGet, reg.Status, "", nil)
		var st project.Status
		if err := json.Unmarshal(b, &st); status != http.StatusOK || err != nil {
			t.Fatalf("GET: %d %s", status, b)
		}
		if !st.Ready || st.Warm != 3 || st.Total != 3 || st.Packages[1].Path != "node_modules/a/node_modules/ms" || st.Packages[1].Version != "2.1.3" {
			t.Fatalf("status %s", b)
		}

		downloads := m.reg.TarballDownloads("a", "1.0.0")
		status, b = m.do(http.MethodPost, "/v1/projects", "", lockUpload(projectLock))
		var again project.Registered
		if err := json.Unmarshal(b, &again); status != http.StatusOK || err != nil || again.ID != reg.ID || !again.Existing || again.WarmRequest != "" {
			t.Fatalf("second POST: %d %s, want 200 with id %s", status, b, reg.ID)
		}
		if n := m.reg.TarballDownloads("a", "1.0.0"); n != downloads {
			t.Errorf("registering again downloaded a again (%d → %d)", downloads, n)
		}
	})
}

// TestProjectBadInput: each refusal has its status and says what to fix.
func TestProjectBadInput(t *testing.T) {
	m := newMirror(t, embedded, func(c *config.Config) {
		c.MaxProjectPackages = 2
		c.MaxProjectLockfileBytes = 1000
	})
	cases := []struct {
		name   string
		upload any
		status int
		want   string
	}{
		{"unparsable", lockUpload("{\n  \"lockfileVersion\": 3,\n  \"packages\": {\n    \"\": [\n}"), 400, "line 5"},
		{"over the package limit", lockUpload(projectLock), 422, "max-project-packages"},
		{"over the byte limit", lockUpload(projectLock + strings.Repeat(" ", 1000)), 413, "max-project-lockfile-bytes"},
		{"no lockfile", project.Upload{PackageJSON: "{}"}, 400, "needs \\\"name\\\""},
		// encoding/json alone takes names in another case.
		{"a field in another case", json.RawMessage(`{"LockFile":{"name":"package-lock.json","content":"{}"}}`), 400,
			`unknown field \"LockFile\": did you mean \"lockfile\"?`},
		{"a nested field in another case", json.RawMessage(`{"lockfile":{"Name":"package-lock.json","content":"{}"}}`), 400,
			`unknown field \"lockfile.Name\": did you mean \"name\"?`},
	}
	for _, tc := range cases {
		status, b := m.do(http.MethodPost, "/v1/projects", "", tc.upload)
		if status != tc.status || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %d %s, want %d naming %q", tc.name, status, b, tc.status, tc.want)
		}
	}
	for _, id := range []string{strings.Repeat("0", 64), "nope"} {
		if status, b := m.do(http.MethodGet, "/v1/projects/"+id, "", nil); status != http.StatusNotFound || !strings.Contains(string(b), "POST /v1/projects") {
			t.Errorf("GET unknown %s: %d %s, want 404 saying how to register", id, status, b)
		}
	}
}

// TestProjectNeedsEveryPackage: a token sees a project only if it may
// read every package in it; the refusal names the package.
func TestProjectNeedsEveryPackage(t *testing.T) {
	priv := fakeregistry.New(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".npmrc"), []byte("@priv:registry="+priv.URL()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := newMirror(t, embedded, func(c *config.Config) {
		c.ProjectDir = dir
		c.Tokens = "pub-token,priv-token:@priv"
	})
	lock := strings.Replace(projectLock, `"node_modules/ms": {"version": "2.0.0"}`,
		`"node_modules/ms": {"version": "2.0.0"}, "node_modules/@priv/x": {"version": "1.0.0"}`, 1)
	status, b := m.do(http.MethodPost, "/v1/projects", "pub-token", lockUpload(lock))
	if status != http.StatusForbidden || !strings.Contains(string(b), "@priv/x") {
		t.Fatalf("pub-token registering: %d %s, want 403 naming @priv/x", status, b)
	}
	privLock := `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/@priv/x": {"version": "1.0.0"}}}`
	status, b = m.do(http.MethodPost, "/v1/projects", "priv-token", lockUpload(privLock))
	var reg project.Registered
	if err := json.Unmarshal(b, &reg); status != http.StatusCreated || err != nil {
		t.Fatalf("priv-token registering: %d %s", status, b)
	}
	if status, b := m.do(http.MethodGet, reg.Status, "pub-token", nil); status != http.StatusForbidden || !strings.Contains(string(b), "@priv/x") {
		t.Errorf("pub-token reading the project: %d %s, want 403 naming @priv/x", status, b)
	}
}

// TestProjectInvalidEntry: a lockfile entry whose name is not a package's
// (or holds a NUL byte) refuses the upload whole with 400
// naming the entry, and nothing is stored: the project's id is unknown
// afterwards and a second upload is refused again, not answered
// "existing".
func TestProjectInvalidEntry(t *testing.T) {
	forEachStore(t, func(t *testing.T, kind storeKind) {
		m := newMirror(t, kind, func(c *config.Config) { c.WarmInProcess = true })
		xss := `<img src=x onerror=alert(1)>`
		cases := []struct {
			name   string
			upload project.Upload
			entry  string // what the message must name
		}{
			{"package-lock name", lockUpload(`{"lockfileVersion": 3, "packages": {"": {},
				"node_modules/ms": {"version": "2.0.0"},
				"node_modules/` + xss + `": {"version": "1.0.0"}}}`), "node_modules/" + xss},
			{"package-lock NUL", lockUpload(`{"lockfileVersion": 3, "packages": {"": {},
				"node_modules/m\u0000s": {"version": "2.0.0"}}}`), "node_modules/m"},
			{"yarn name", project.Upload{
				Lockfile:    project.File{Name: "yarn.lock", Content: "# yarn lockfile v1\n\n\"" + xss + "@^1.0.0\":\n  version \"1.0.0\"\n"},
				PackageJSON: `{"name":"app","dependencies":{"` + xss + `":"^1.0.0"}}`,
			}, xss},
			{"pnpm name", project.Upload{Lockfile: project.File{Name: "pnpm-lock.yaml", Content: "lockfileVersion: '9.0'\n" +
				"importers:\n  .:\n    dependencies:\n      '" + xss + "':\n        specifier: ^1.0.0\n        version: 1.0.0\n" +
				"packages:\n  '" + xss + "@1.0.0':\n    resolution: {integrity: sha512-x}\n" +
				"snapshots:\n  '" + xss + "@1.0.0': {}\n"}}, xss},
		}
		for _, tc := range cases {
			for try := range 2 {
				status, b := m.do(http.MethodPost, "/v1/projects", "", tc.upload)
				var e struct{ Error struct{ Message string } }
				_ = json.Unmarshal(b, &e)
				if status != http.StatusBadRequest || !strings.Contains(e.Error.Message, tc.entry) {
					t.Errorf("%s, upload %d: %d %s, want 400 naming %q", tc.name, try+1, status, b, tc.entry)
				}
			}
			if status, b := m.do(http.MethodGet, "/v1/projects/"+project.ID(tc.upload), "", nil); status != http.StatusNotFound {
				t.Errorf("%s: GET after the refusal: %d %s, want 404 (nothing stored)", tc.name, status, b)
			}
		}
	})
}
