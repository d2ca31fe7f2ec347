package mcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/mcp"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// publishVersions publishes the versions the project fixtures under
// testdata/projects lock or declare, so each default is distinguishable:
//
//	pad:         1.0.0 (pnpm locks), 1.0.1 (yarn), 1.1.0 (npm), 1.2.0 (^1 resolves here), 2.0.0 (latest)
//	@scope/util: 3.0.0 (npm locks), 3.0.5 (~3.0.0 resolves here), 3.1.0 (latest)
//	other:       1.5.0 (latest; no fixture names it)
//	local:       9.0.0 (latest; the bare fixture names it as file:../local)
func publishVersions(m *mirror) {
	for name, versions := range map[string][]string{
		"pad":         {"1.0.0", "1.0.1", "1.1.0", "1.2.0", "2.0.0"},
		"@scope/util": {"3.0.0", "3.0.5", "3.1.0"},
		"other":       {"1.5.0"},
		"local":       {"9.0.0"},
	} {
		for _, v := range versions {
			m.reg.Publish(name, v, tarballtest.Package(m.t, map[string]string{"version.txt": v}))
		}
	}
}

func project(t *testing.T, dir string) *mcp.Project {
	t.Helper()
	p, err := mcp.NewProject(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProjectDefaultVersions: a call without a version reads the version
// the project locks (package-lock.json, pnpm-lock.yaml, yarn.lock), else
// the range package.json declares, else latest; an explicit version wins.
func TestProjectDefaultVersions(t *testing.T) {
	m := newMirror(t)
	publishVersions(m)
	cases := []struct {
		fixture, pkg, version string
		want, note            string
	}{
		{"npm", "pad", "", "1.1.0", "(locked by package-lock.json)"},
		{"npm", "@scope/util", "", "3.0.0", "(locked by package-lock.json)"},
		{"npm", "other", "", "1.5.0", "(latest: the project does not depend on it)"},
		{"npm", "pad", "2", "2.0.0", "(range 2)"},
		{"pnpm", "pad", "", "1.0.0", "(locked by pnpm-lock.yaml)"},
		{"yarn", "pad", "", "1.0.1", "(locked by yarn.lock)"},
		{"bare", "pad", "", "1.2.0", "(range ^1.0.0 from package.json)"},
		{"bare", "@scope/util", "", "3.0.5", "(range ~3.0.0 from package.json)"},
		{"bare", "local", "", "9.0.0", `names "file:../local", which is not a registry version`},
		{"bare", "other", "", "1.5.0", "does not depend"},
	}
	sessions := map[string]*mcp.Project{}
	for _, tc := range cases {
		t.Run(tc.fixture+"/"+tc.pkg+"@"+tc.version, func(t *testing.T) {
			p := sessions[tc.fixture]
			if p == nil {
				p = project(t, filepath.Join("testdata", "projects", tc.fixture))
				sessions[tc.fixture] = p
			}
			cs := inMemory(t, m.app.Service, mcp.Options{Project: p})
			args := `{"action":"list","packageName":"` + tc.pkg + `"`
			if tc.version != "" {
				args += `,"version":"` + tc.version + `"`
			}
			res := call(t, cs, args+"}")
			var l explore.ListResult
			decode(t, res, &l)
			if l.Version != tc.want {
				t.Errorf("version = %s, want %s (%s)", l.Version, tc.want, text(res))
			}
			first, _, _ := strings.Cut(text(res), "\n")
			if tc.note == "" && strings.Contains(first, "(") || !strings.Contains(first, tc.note) {
				t.Errorf("first line %q, want the note %q", first, tc.note)
			}
		})
	}
}

// TestProjectSeesLockfileChanges: an `npm install` during the session is
// seen on the next call, without restarting the server.
func TestProjectSeesLockfileChanges(t *testing.T) {
	m := newMirror(t)
	publishVersions(m)
	dir := t.TempDir()
	copyFile(t, filepath.Join("testdata", "projects", "npm", "package.json"), filepath.Join(dir, "package.json"))
	cs := inMemory(t, m.app.Service, mcp.Options{Project: project(t, dir)})
	version := func() string {
		var l explore.ListResult
		decode(t, call(t, cs, `{"action":"list","packageName":"pad"}`), &l)
		return l.Version
	}
	if v := version(); v != "1.2.0" {
		t.Fatalf("no lockfile yet: %s, want the declared ^1.0.0 = 1.2.0", v)
	}
	lock := filepath.Join(dir, "package-lock.json")
	copyFile(t, filepath.Join("testdata", "projects", "npm", "package-lock.json"), lock)
	if v := version(); v != "1.1.0" {
		t.Fatalf("lockfile written: %s, want 1.1.0", v)
	}
	// Same size, new content: the modification time tells.
	b, _ := os.ReadFile(lock)
	rewrite(t, lock, strings.Replace(string(b), `"version": "1.1.0"`, `"version": "1.0.1"`, 1))
	if v := version(); v != "1.0.1" {
		t.Fatalf("lockfile changed: %s, want 1.0.1", v)
	}
	os.Remove(lock)
	if v := version(); v != "1.2.0" {
		t.Fatalf("lockfile removed: %s, want 1.2.0", v)
	}
}

// TestProjectBrokenLockfile: a lockfile that does not parse is reported
// with the answer, which falls back to the declared range.
func TestProjectBrokenLockfile(t *testing.T) {
	m := newMirror(t)
	publishVersions(m)
	dir := t.TempDir()
	copyFile(t, filepath.Join("testdata", "projects", "npm", "package.json"), filepath.Join(dir, "package.json"))
	rewrite(t, filepath.Join(dir, "package-lock.json"), `{"lockfileVersion": 3, "packages": `)
	cs := inMemory(t, m.app.Service, mcp.Options{Project: project(t, dir)})
	res := call(t, cs, `{"action":"list","packageName":"pad"}`)
	var l explore.ListResult
	decode(t, res, &l)
	if l.Version != "1.2.0" || !strings.Contains(text(res), "warning: ") || !strings.Contains(text(res), "package-lock.json") {
		t.Errorf("broken lockfile: %s %q", l.Version, text(res))
	}
}

// TestProjectLockedVersionGone: when the locked version is not in the
// registry, the error says where the version came from.
func TestProjectLockedVersionGone(t *testing.T) {
	m := newMirror(t)
	m.reg.Publish("pad", "2.0.0", tarballtest.Package(t, map[string]string{"a": ""}))
	cs := inMemory(t, m.app.Service, mcp.Options{Project: project(t, filepath.Join("testdata", "projects", "npm"))})
	res := call(t, cs, `{"action":"list","packageName":"pad"}`)
	if e := toolError(t, res); e.Code != "no_matching_version" || !strings.Contains(text(res), "locked by package-lock.json") {
		t.Errorf("got %+v %q", e, text(res))
	}
}

func TestNewProjectRejects(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	rewrite(t, file, "")
	for _, dir := range []string{filepath.Join(t.TempDir(), "missing"), file} {
		if _, err := mcp.NewProject(dir, 0); err == nil {
			t.Errorf("NewProject(%s) accepted", dir)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	rewrite(t, to, string(b))
}

// rewrite writes body to path and moves its modification time forward by
// a second, so a change is seen even on a file system with coarse times.
func rewrite(t *testing.T, path, body string) {
	t.Helper()
	var next time.Time
	if st, err := os.Stat(path); err == nil {
		next = st.ModTime().Add(time.Second)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if !next.IsZero() {
		if err := os.Chtimes(path, next, next); err != nil {
			t.Fatal(err)
		}
	}
}

// TestProjectWorkspacePackage: started in a workspace package (or a folder
// below it), the project is the package and the lockfile its workspace
// root's, for each tool's workspaces; the version is the one of the root
// lockfile's that the package's own range picks (is-number ^6 beside the
// root's ^7), as the tool installed it for the package.
func TestProjectWorkspacePackage(t *testing.T) {
	for _, fixture := range []string{"package-lock-v3", "pnpm-v9", "pnpm-v6", "yarn-v1", "yarn-berry-v10", "bun-v2"} {
		t.Run(fixture, func(t *testing.T) {
			dir := filepath.Join("..", "lockfile", "testdata", fixture, "packages", "app")
			p := project(t, dir)
			abs, _ := filepath.Abs(dir)
			if p.Dir() != abs {
				t.Errorf("Dir = %s, want the package's %s", p.Dir(), abs)
			}
			d := p.Default("is-number")
			if d.Spec != "6.0.0" || !d.Locked || !d.Workspace || !strings.HasPrefix(d.Reason(), "locked by the workspace root's ") {
				t.Errorf("is-number: %+v (%s), want 6.0.0 locked by the workspace root's lockfile", d, d.Reason())
			}
		})
	}
	// The root itself keeps its own direct dependency.
	root := project(t, filepath.Join("..", "lockfile", "testdata", "package-lock-v3"))
	if d := root.Default("is-number"); d.Spec != "7.0.0" || d.Reason() != "locked by package-lock.json" {
		t.Errorf("root is-number: %+v (%s), want 7.0.0", d, d.Reason())
	}
	// Outside any project: latest, saying so.
	if d := project(t, t.TempDir()).Default("is-number"); d.Spec != "" || d.Reason() != "latest: no project found" {
		t.Errorf("no project: %+v (%s)", d, d.Reason())
	}
}
