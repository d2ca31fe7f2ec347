package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// installed is a project npm installed from the fake registry.
type installed struct {
	dir      string
	lock     string
	manifest string
}

// npmInstall publishes pkgs (name@version → dependencies) with a few text
// files each, installs root with the real npm CLI (`npm install`, then
// `npm ci --ignore-scripts` from the lockfile it wrote) and returns the
// project folder.
func npmInstall(t *testing.T, reg *fakeregistry.Registry, pkgs map[string]map[string]string, root map[string]string) installed {
	t.Helper()
	for _, nv := range slices.Sorted(func(yield func(string) bool) {
		for k := range pkgs {
			if !yield(k) {
				return
			}
		}
	}) {
		i := strings.LastIndexByte(nv, '@')
		name, version := nv[:i], nv[i+1:]
		deps := pkgs[nv]
		manifest, _ := json.Marshal(map[string]any{"name": name, "version": version, "dependencies": deps})
		reg.Publish(name, version, tarballtest.Package(t, map[string]string{
			"package.json":  string(manifest),
			"index.js":      fmt.Sprintf("// %s\nexport function hello() {\n  return %q;\n}\nexport const HELLO = 1;\n", nv, nv),
			"lib/util.d.ts": "export declare function hello(): string;\n// no match here\nexport type Hello = string;\n",
			"README.md":     "# " + name + "\n\nSay hello with `hello()`.\n",
		}), fakeregistry.WithDependencies(deps))
	}
	dir := t.TempDir()
	manifest, _ := json.Marshal(map[string]any{"name": "app", "version": "1.0.0", "private": true, "dependencies": root})
	if err := os.WriteFile(filepath.Join(dir, "package.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	reg.RunNPM(t, dir, "install")
	reg.RunNPM(t, dir, "ci")
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	return installed{dir: dir, lock: string(lock), manifest: string(manifest)}
}

// files lists the installed tree's files as project paths, without npm's
// own bookkeeping (node_modules/.package-lock.json, .bin links).
func (in installed) files(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(in.dir, "node_modules"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".bin" {
			return fs.SkipDir
		}
		rel, _ := filepath.Rel(in.dir, p)
		if !d.IsDir() && rel != filepath.Join("node_modules", ".package-lock.json") {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// rg returns the "file:line" pairs ripgrep prints for pattern in the
// installed tree.
func (in installed) rg(t *testing.T, pattern string) []string {
	t.Helper()
	cmd := exec.Command("rg", "-n", "--no-heading", "--hidden", "--no-ignore", "-g", "!node_modules/.package-lock.json", "-g", "!.bin", pattern, "node_modules")
	cmd.Dir = in.dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rg %s: %v", pattern, err)
	}
	var pairs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		pairs = append(pairs, parts[0]+":"+parts[1])
	}
	slices.Sort(pairs)
	return pairs
}

// exploreProject posts a project request and decodes the answer.
func (m *mirror) exploreProject(req map[string]any, out any) {
	m.t.Helper()
	status, b := m.do(http.MethodPost, "/v1/explore", "", req)
	if status != http.StatusOK {
		m.t.Fatalf("explore %v: %d %s", req, status, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		m.t.Fatal(err)
	}
}

// registerWarm registers a project and waits until its warm request ends.
func (m *mirror) registerWarm(up project.Upload) project.Registered {
	m.t.Helper()
	status, b := m.do(http.MethodPost, "/v1/projects", "", up)
	var reg project.Registered
	if err := json.Unmarshal(b, &reg); status != http.StatusCreated || err != nil {
		m.t.Fatalf("register: %d %s", status, b)
	}
	if _, err := m.app.Warm.Wait(m.t.Context(), reg.WarmRequest, nil); err != nil {
		m.t.Fatal(err)
	}
	return reg
}

// projectGraph nests: ms@2.1.3 below a and c, a@2 below @scope/x.
var (
	projectGraph = map[string]map[string]string{
		"a@1.0.0": {"ms": "2.1.3"}, "a@2.0.0": {"ms": "2.0.0"}, "b@1.0.0": {"c": "1.0.0"},
		"c@1.0.0": {"ms": "2.1.3"}, "ms@2.0.0": nil, "ms@2.1.3": nil, "@scope/x@1.0.0": {"a": "2.0.0"},
	}
	projectRoot = map[string]string{"a": "1.0.0", "b": "1.0.0", "ms": "2.0.0", "@scope/x": "1.0.0"}
)

// TestProjectIsTheInstalledTree registers what npm installed and checks
// the project's files are exactly the installed tree, and that a project
// grep finds exactly the (file, line) pairs rg -n finds there, following
// next through small pages.
func TestProjectIsTheInstalledTree(t *testing.T) {
	m := newMirror(t, embedded)
	in := npmInstall(t, m.reg, projectGraph, projectRoot)
	reg := m.registerWarm(project.Upload{
		Lockfile: project.File{Name: "package-lock.json", Content: in.lock}, PackageJSON: in.manifest})

	var list project.ListAnswer
	m.exploreProject(map[string]any{"project": reg.ID, "action": "list", "maxBytes": 1 << 20}, &list)
	var files []string
	for _, e := range list.Entries {
		files = append(files, e.Path)
	}
	if want := in.files(t); !list.Complete || !slices.Equal(files, want) {
		t.Fatalf("project list (complete %v):\n%v\ninstalled:\n%v", list.Complete, files, want)
	}

	for _, pattern := range []string{"hello", `^export (const|type) \w+`, "2\\.1\\.3"} {
		want := in.rg(t, pattern)
		var got []string
		req := map[string]any{"project": reg.ID, "action": "grep", "pattern": pattern, "maxBytes": 4096, "maxMatches": 3}
		for pages := 0; ; pages++ {
			var ans project.GrepAnswer
			m.exploreProject(req, &ans)
			for _, mt := range ans.Matches {
				got = append(got, fmt.Sprintf("%s:%d", mt.File, mt.Line))
			}
			if ans.Next == nil {
				break
			}
			if pages > 100 {
				t.Fatal("next never ends")
			}
			nb, _ := json.Marshal(ans.Next)
			req = map[string]any{}
			_ = json.Unmarshal(nb, &req)
		}
		if len(got) != len(slices.Compact(slices.Clone(got))) {
			t.Errorf("%s: a page repeated matches: %v", pattern, got)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("grep %s:\nproject %v\nrg      %v", pattern, got, want)
		}
	}

	// Direct dependencies rank first; count is per package; include
	// selects packages by path.
	var counts project.GrepAnswer
	m.exploreProject(map[string]any{"project": reg.ID, "action": "grep", "pattern": "hello", "outputMode": "count"}, &counts)
	if len(counts.Counts) != 8 || !counts.Counts[3].Direct || counts.Counts[4].Direct || counts.Counts[0].Matches != 3 {
		t.Errorf("counts %+v: want 8 folders of 3 matches, the 4 direct ones first", counts.Counts)
	}
	var scoped project.GrepAnswer
	m.exploreProject(map[string]any{"project": reg.ID, "action": "grep", "pattern": "hello", "outputMode": "files_with_matches",
		"include": []string{"node_modules/@scope/**"}}, &scoped)
	for _, f := range scoped.Files {
		if !strings.HasPrefix(f.Path, "node_modules/@scope/") {
			t.Errorf("include node_modules/@scope/** answered %s", f.Path)
		}
	}
	if len(scoped.Files) != 6 { // @scope/x and its nested a@2: index.js, README.md, lib/util.d.ts each
		t.Errorf("include node_modules/@scope/**: %v", scoped.Files)
	}

	var read struct {
		Content string `json:"content"`
	}
	m.exploreProject(map[string]any{"project": reg.ID, "action": "read", "path": "node_modules/@scope/x/node_modules/a/index.js"}, &read)
	if !strings.Contains(read.Content, `"a@2.0.0"`) {
		t.Errorf("read of the nested a: %q", read.Content)
	}
}

// TestProjectNotYetWarm: a package not in the store is named as pending,
// and the answer says it is not complete.
func TestProjectNotYetWarm(t *testing.T) {
	m := newMirror(t, embedded, func(c *config.Config) { c.ProjectWait = 0 })
	publishProject(t, m.reg)
	lock := strings.Replace(projectLock, `"node_modules/ms": {"version": "2.0.0"}`,
		`"node_modules/ms": {"version": "2.0.0"}, "node_modules/ghost": {"version": "1.0.0"}`, 1)
	reg := m.registerWarm(lockUpload(lock))
	var ans project.GrepAnswer
	m.exploreProject(map[string]any{"project": reg.ID, "action": "grep", "pattern": "module"}, &ans)
	if ans.Complete || !slices.Equal(ans.Pending, []string{"node_modules/ghost"}) || len(ans.Matches) != 3 {
		t.Errorf("grep with a missing package: %+v, want 3 matches, complete false, pending ghost", ans)
	}
	if status, b := m.do(http.MethodPost, "/v1/explore", "", map[string]any{"project": strings.Repeat("0", 64), "action": "list"}); status != http.StatusNotFound {
		t.Errorf("unknown project: %d %s", status, b)
	}
	// Listing inside the pending folder says it is pending, not that the
	// path is wrong.
	status, b := m.do(http.MethodPost, "/v1/explore", "", map[string]any{"project": reg.ID, "action": "list", "path": "node_modules/ghost/lib"})
	if status != http.StatusNotFound || !strings.Contains(string(b), "node_modules/ghost") || !strings.Contains(string(b), "pending") {
		t.Errorf("list inside a pending folder: %d %s; want 404 saying node_modules/ghost is pending", status, b)
	}
}

// TestProjectFailedIsNotWaitedFor: a package whose ingest failed, or one
// that is not from the registry (a git dependency), will not turn warm
// while a grep waits: the grep waits only for pending packages (here
// none, under a project-wait of an hour) and names the others apart from
// pending ones, each with its reason.
func TestProjectFailedIsNotWaitedFor(t *testing.T) {
	m := newMirror(t, embedded, func(c *config.Config) { c.ProjectWait = time.Hour })
	publishProject(t, m.reg)
	lock := strings.Replace(projectLock, `"node_modules/ms": {"version": "2.0.0"}`,
		`"node_modules/ms": {"version": "2.0.0"}, "node_modules/broken": {"version": "1.0.0"},
		 "node_modules/fromgit": {"version": "git+ssh://git@example.invalid/x.git#0123456789abcdef0123456789abcdef01234567", "resolved": "git+ssh://git@example.invalid/x.git#0123456789abcdef0123456789abcdef01234567"}`, 1)
	reg := m.registerWarm(lockUpload(lock))
	if err := m.app.Store.MarkFailed(t.Context(), "broken", "1.0.0", "tarball integrity mismatch"); err != nil {
		t.Fatal(err) // whatever the warm job recorded, it failed for this reason
	}
	var ans project.GrepAnswer
	m.exploreProject(map[string]any{"project": reg.ID, "action": "grep", "pattern": "module"}, &ans)
	if ans.Complete || len(ans.Pending) != 0 || ans.PendingCount != 0 || len(ans.Matches) != 3 {
		t.Errorf("grep: complete %v, pending %v (%d), %d matches; want incomplete, nothing pending, 3 matches", ans.Complete, ans.Pending, ans.PendingCount, len(ans.Matches))
	}
	if ans.FailedCount != 2 || len(ans.Failed) != 2 ||
		ans.Failed[0].Path != "node_modules/broken" || !strings.Contains(ans.Failed[0].Reason, "tarball integrity mismatch") ||
		ans.Failed[1].Path != "node_modules/fromgit" || !strings.Contains(ans.Failed[1].Reason, "git") {
		t.Errorf("failed %+v (%d): want broken (its ingest's reason) and fromgit (a git dependency)", ans.Failed, ans.FailedCount)
	}
	var list project.ListAnswer
	m.exploreProject(map[string]any{"project": reg.ID, "action": "list"}, &list)
	if list.Complete || list.FailedCount != 2 || list.PendingCount != 0 {
		t.Errorf("list: complete %v, failed %d, pending %d; want false, 2, 0", list.Complete, list.FailedCount, list.PendingCount)
	}
}
