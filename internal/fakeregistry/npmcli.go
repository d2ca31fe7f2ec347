package fakeregistry

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RunNPM runs the real npm CLI in dir against r (`npm install`, `npm
// ci`, with --ignore-scripts, --no-audit and --no-fund added), isolated
// from the machine's npm configuration and cache: the oracle for what npm
// installs from this registry. It fails the test when npm is missing or
// fails.
func (r *Registry) RunNPM(t testing.TB, dir string, args ...string) {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal("this test needs the npm CLI on PATH")
	}
	user, global := filepath.Join(t.TempDir(), "npmrc"), filepath.Join(t.TempDir(), "npmrc")
	for _, f := range []string{user, global} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(npm, append(args, "--ignore-scripts", "--no-audit", "--no-fund")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_registry="+r.URL(), "npm_config_cache="+t.TempDir(),
		"NPM_CONFIG_USERCONFIG="+user, "NPM_CONFIG_GLOBALCONFIG="+global, "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
