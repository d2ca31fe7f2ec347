package mcp_test

import (
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/mcp"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// TestDeprecatedVersionNoteInText: the tool's text says the version is
// deprecated right under its first line, as the JSON's notes do; asked
// without a version, the answer is the version npm install picks, which
// passes over a deprecated latest.
func TestDeprecatedVersionNoteInText(t *testing.T) {
	m := newMirror(t)
	tgz := tarballtest.Package(t, map[string]string{"index.js": "module.exports = 1;\n"})
	m.reg.Publish("left", "1.0.0", tgz)
	m.reg.Publish("left", "1.1.0", tgz, fakeregistry.Deprecated("broken build, use 1.0.0"))
	cs := inMemory(t, m.app.Service, mcp.Options{})
	txt := text(call(t, cs, `{"action":"list","packageName":"left","version":"latest"}`))
	if want := "left@1.1.0 (dist-tag latest) "; !strings.HasPrefix(txt, want) {
		t.Errorf("text = %q, want it to start %q", txt, want)
	}
	if want := "\n[note: left@1.1.0 is deprecated: broken build, use 1.0.0]\n"; !strings.Contains(txt, want) {
		t.Errorf("text = %q, want %q", txt, want)
	}
	// Not latest: the first line says why, a note how to read latest.
	want := "left@1.0.0 (no version given; latest 1.1.0 is deprecated, so the newest version that is not (as npm picks)) 1 file, 20 B\n" +
		"[note: dist-tag latest is 1.1.0, deprecated (\"broken build, use 1.0.0\"): to read it anyway, give version \"1.1.0\"]\n"
	if txt := text(call(t, cs, `{"action":"list","packageName":"left"}`)); !strings.HasPrefix(txt, want) || strings.Contains(txt, "left@1.0.0 is deprecated") {
		t.Errorf("no version given: %q, want it to start\n%q", txt, want)
	}
}

// TestProjectKeepsThePassedOverLatest: in a project that does not depend
// on the package, the version is left to latest, and the first line
// still says that latest was deprecated and passed over.
func TestProjectKeepsThePassedOverLatest(t *testing.T) {
	m := newMirror(t)
	tgz := tarballtest.Package(t, map[string]string{"index.js": "module.exports = 1;\n"})
	m.reg.Publish("left", "1.0.0", tgz)
	m.reg.Publish("left", "1.1.0", tgz, fakeregistry.Deprecated("broken build, use 1.0.0"))
	m.reg.Publish("right", "1.0.0", tgz)
	cs := inMemory(t, m.app.Service, mcp.Options{Project: project(t, t.TempDir())})
	want := "left@1.0.0 (no project found; latest 1.1.0 is deprecated, so the newest version that is not (as npm picks)) "
	if txt := text(call(t, cs, `{"action":"list","packageName":"left"}`)); !strings.HasPrefix(txt, want) {
		t.Errorf("text = %q, want it to start %q", txt, want)
	}
	if txt := text(call(t, cs, `{"action":"list","packageName":"right"}`)); !strings.HasPrefix(txt, "right@1.0.0 (latest: no project found) ") {
		t.Errorf("text = %q, want latest: no project found", txt)
	}
}
