package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/gendoc"
	"github.com/pkgscope/pkgscope/internal/warm"
)

var update = flag.Bool("update", false, "rewrite the generated indexer settings in docs/OPERATIONS.md")

// runHelp runs the indexer with args and returns its exit code and what
// it printed on stdout and stderr.
func runHelp(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	stdout, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	defer stderr.Close()
	code := run(t.Context(), args, func(string) string { return "" }, nil, stdout, stderr)
	out, _ := os.ReadFile(stdout.Name())
	errOut, _ := os.ReadFile(stderr.Name())
	return code, string(out), string(errOut)
}

// TestCommandHelp: each command's -h fits a screen and shows its usage
// and its own flags first, not every flag of every command.
func TestCommandHelp(t *testing.T) {
	for _, c := range commands {
		args := append(strings.Fields(c.name), "-h")
		code, out, errOut := runHelp(t, args...)
		if code != exitOK || errOut != "" {
			t.Errorf("%s -h: exit %d, stderr %q", c.name, code, errOut)
		}
		if !strings.HasPrefix(out, "Usage: pkgscope-indexer "+c.name) {
			t.Errorf("%s -h starts %q", c.name, out[:min(len(out), 60)])
		}
		if n := strings.Count(out, "\n"); n > 40 {
			t.Errorf("%s -h is %d lines, want at most 40", c.name, n)
		}
		for _, other := range commands {
			for _, f := range other.flags {
				has := strings.Contains(out, "\n  --"+f+" ")
				if want := slices.Contains(c.flags, f); has != want {
					t.Errorf("%s -h shows --%s: %v, want %v", c.name, f, has, want)
				}
			}
		}
		if c.queue != strings.Contains(out, "--workers") {
			t.Errorf("%s -h: queue settings shown %v, want %v", c.name, !c.queue, c.queue)
		}
		if !strings.Contains(out, "--help-all") {
			t.Errorf("%s -h does not say where the mirror's settings are", c.name)
		}
	}
	_, out, _ := runHelp(t, "warm", "--help-all")
	for _, w := range []string{"--lockfile", "--workers N", "--database-url URL", "--max-files N", "Store (--help store):"} {
		if !strings.Contains(out, w) {
			t.Errorf("warm --help-all lacks %q", w)
		}
	}
	_, out, _ = runHelp(t, "warm", "--help", "queue")
	if !strings.HasPrefix(out, "Queue: ") || !strings.Contains(out, "--job-timeout") || strings.Contains(out, "--addr") {
		t.Errorf("warm --help queue:\n%s", out)
	}
	if code, out, _ := runHelp(t, "-h"); code != exitOK || !strings.Contains(out, "Commands:") {
		t.Errorf("-h: exit %d:\n%s", code, out)
	}
	if code, _, errOut := runHelp(t, "wram"); code != exitUsage || !strings.Contains(errOut, "did you mean warm?") {
		t.Errorf("wram: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runHelp(t, "status", "--top", "3", "x"); code != exitUsage || !strings.Contains(errOut, "--top is not a flag of status") {
		t.Errorf("status --top: exit %d, %q", code, errOut)
	}
}

// TestEveryFlagHasAHome: every indexer flag is a queue setting (with a
// group and a usage) or some command's own flag, and every command's
// flag exists.
func TestEveryFlagHasAHome(t *testing.T) {
	s := settings{warm: warm.DefaultConfig()}
	fs, b := defineFlags(&s, "warm", func(string) string { return "" }, nil)
	home := map[string]bool{}
	for _, q := range b.Settings() {
		if q.Group == "" || q.Usage == "" {
			t.Errorf("queue setting %s: group %q, usage %q", q.Name, q.Group, q.Usage)
		}
		home[q.Name] = true
	}
	for _, c := range commands {
		for _, f := range c.flags {
			if fs.Lookup(f) == nil {
				t.Errorf("command %s lists --%s, which is not defined", c.name, f)
			}
			home[f] = true
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !home[f.Name] {
			t.Errorf("--%s is neither a queue setting nor any command's flag", f.Name)
		}
		if f.Usage == "" {
			t.Errorf("--%s has no usage", f.Name)
		}
	})
}

// TestOperationsDoc: docs/OPERATIONS.md's indexer settings are what the
// flag definitions generate.
func TestOperationsDoc(t *testing.T) {
	s := settings{warm: warm.DefaultConfig()}
	fs, b := defineFlags(&s, "warm", func(string) string { return "" }, nil)
	var gen bytes.Buffer
	config.WriteMarkdown(&gen, "pkgscope-indexer warm", b.Settings())
	gen.WriteString("\n")
	var own []config.Setting
	seen := map[string]bool{}
	for _, c := range commands {
		for _, f := range c.flags {
			if !seen[f] {
				seen[f] = true
				own = append(own, config.FlagSettings(fs, "Command flags", f)...)
			}
		}
	}
	config.WriteMarkdown(&gen, "", own)
	gendoc.Check(t, "../../docs/OPERATIONS.md", "pkgscope-indexer settings", gen.String(), "go test ./cmd/indexer -run TestOperationsDoc -update", *update)
}

// TestConfigFile: the indexer reads the mirror's settings from the top of
// the config file and its queue settings from its indexer section, below
// the environment and flags; a mistake in the section names its key.
func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/pkgscope.yaml"
	body := "data-dir: " + dir + "/data\nmax-files: 1234\nindexer:\n  workers: 3\n  queue: bulk\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	warmCmd, _ := commandNamed("warm")
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		workers int
		queue   string
	}{
		{"file", nil, []string{"react", "--config", path}, 3, "bulk"},
		{"file by environment", map[string]string{"PKGSCOPE_CONFIG": path}, []string{"react"}, 3, "bulk"},
		{"environment over file", map[string]string{"PKGSCOPE_CONFIG": path, "PKGSCOPE_WARM_WORKERS": "5"}, []string{"react"}, 5, "bulk"},
		{"flag over environment", map[string]string{"PKGSCOPE_CONFIG": path, "PKGSCOPE_WARM_WORKERS": "5"}, []string{"--workers", "6", "react"}, 6, "bulk"},
	} {
		s, err := parseSettings(warmCmd, tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if s.warm.Workers != tc.workers || s.warm.Queue != tc.queue || s.mirror.MaxFiles != 1234 || s.mirror.DataDir != dir+"/data" || !slices.Equal(s.args, []string{"react"}) {
			t.Errorf("%s: workers %d, queue %q, max-files %d, data-dir %s, args %q", tc.name, s.warm.Workers, s.warm.Queue, s.mirror.MaxFiles, s.mirror.DataDir, s.args)
		}
	}
	bad := dir + "/bad.yaml"
	if err := os.WriteFile(bad, []byte("indexer:\n  wrokers: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := parseSettings(warmCmd, []string{"--config", bad, "react"}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `line 2: unknown setting "indexer.wrokers"; did you mean "workers"?`) {
		t.Errorf("a typo in the indexer section: %v", err)
	}
	// The example in docs/ sets both.
	s, err := parseSettings(warmCmd, []string{"--config", "../../docs/pkgscope.example.yaml", "react"}, func(string) string { return "" }, io.Discard)
	if err != nil || s.warm.Workers != 8 || s.mirror.Addr != "0.0.0.0:7878" {
		t.Errorf("the example: workers %d, addr %s, %v", s.warm.Workers, s.mirror.Addr, err)
	}
}
