package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeConfig writes a config file and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pkgscope.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConfigPrecedence: defaults < file < environment < flags, for each
// kind of setting, with the file named by --config or $PKGSCOPE_CONFIG.
func TestConfigPrecedence(t *testing.T) {
	file := writeConfig(t, `
addr: 127.0.0.1:1001
max-files: 1001
fill-timeout: 1m
allowed-hosts: [a.example, b.example]
jsdelivr-fallback: true
database-url: postgres://file/db
`)
	def := Default()
	cases := []struct {
		name string
		env  map[string]string
		args []string
		// want
		addr     string
		maxFiles int
		fill     time.Duration
		hosts    string
		jsd      bool
		db       string
	}{
		{name: "defaults", args: nil,
			addr: def.Addr, maxFiles: def.MaxFiles, fill: def.FillTimeout, hosts: "", jsd: false, db: ""},
		{name: "file by flag", args: []string{"--config", file},
			addr: "127.0.0.1:1001", maxFiles: 1001, fill: time.Minute, hosts: "a.example,b.example", jsd: true, db: "postgres://file/db"},
		{name: "file by --config=", args: []string{"--config=" + file},
			addr: "127.0.0.1:1001", maxFiles: 1001, fill: time.Minute, hosts: "a.example,b.example", jsd: true, db: "postgres://file/db"},
		{name: "file by environment", env: map[string]string{"PKGSCOPE_CONFIG": file},
			addr: "127.0.0.1:1001", maxFiles: 1001, fill: time.Minute, hosts: "a.example,b.example", jsd: true, db: "postgres://file/db"},
		{name: "environment over file",
			env: map[string]string{
				"PKGSCOPE_CONFIG": file, "PKGSCOPE_ADDR": "127.0.0.1:2002", "PKGSCOPE_MAX_FILES": "2002",
				"PKGSCOPE_ALLOWED_HOSTS": "c.example", "PKGSCOPE_JSDELIVR_FALLBACK": "false", "DATABASE_URL": "postgres://env/db",
			},
			addr: "127.0.0.1:2002", maxFiles: 2002, fill: time.Minute, hosts: "c.example", jsd: false, db: "postgres://env/db"},
		{name: "flags over environment over file",
			env:  map[string]string{"PKGSCOPE_ADDR": "127.0.0.1:2002", "PKGSCOPE_FILL_TIMEOUT": "2m", "PKGSCOPE_DATABASE_URL": "postgres://env/db"},
			args: []string{"--addr", "127.0.0.1:3003", "--config", file, "--fill-timeout=3m", "--database-url", "postgres://flag/db"},
			addr: "127.0.0.1:3003", maxFiles: 1001, fill: 3 * time.Minute, hosts: "a.example,b.example", jsd: true, db: "postgres://flag/db"},
		{name: "the flag's file over the environment's",
			env:  map[string]string{"PKGSCOPE_CONFIG": writeConfig(t, "max-files: 7\n")},
			args: []string{"--config", file},
			addr: "127.0.0.1:1001", maxFiles: 1001, fill: time.Minute, hosts: "a.example,b.example", jsd: true, db: "postgres://file/db"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load("pkgscope", tc.args, envOf(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			got := []any{c.Addr, c.MaxFiles, c.FillTimeout, strings.Join(c.AllowedHosts, ","), c.JSDelivrFallback, c.DatabaseURL}
			want := []any{tc.addr, tc.maxFiles, tc.fill, tc.hosts, tc.jsd, tc.db}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("got addr, max-files, fill-timeout, allowed-hosts, jsdelivr-fallback, database-url = %v\nwant %v", got, want)
					break
				}
			}
		})
	}
}

// TestConfigFileErrors: a mistake in the file names the file, the line,
// the key and what to write instead; a secret's value is never echoed.
func TestConfigFileErrors(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string
	}{
		{"unknown key", "addr: 127.0.0.1:1\nmax-file: 10\n", []string{"line 2", `unknown setting "max-file"`, `did you mean "max-files"?`}},
		{"unknown key, nothing near", "frobnicate-everything: 1\n", []string{`unknown setting "frobnicate-everything"`, "--help-all"}},
		{"tokens in the file", "tokens: abc\n", []string{`unknown setting "tokens"; name a file of them with tokens-file`}},
		{"a registry", "registry: http://127.0.0.1:1/\n", []string{"npm's configuration"}},
		{"int", "max-files: many\n", []string{"line 1", "max-files", "want a whole number", `"many"`}},
		{"bytes", "max-file-bytes: 64MiB\n", []string{"max-file-bytes", "whole number of bytes"}},
		{"duration without unit", "fill-timeout: 300\n", []string{"fill-timeout", "duration such as", `"300"`}},
		{"bool", "jsdelivr-fallback: yes\n", []string{"jsdelivr-fallback", "true or false"}},
		{"list for a scalar", "addr: [a, b]\n", []string{"addr", "want a string, got a list"}},
		{"mapping for a list", "allowed-hosts: {a: b}\n", []string{"allowed-hosts", "got a mapping"}},
		{"not a mapping", "- addr\n", []string{"want a mapping of settings"}},
		{"set twice", "addr: a\naddr: b\n", []string{"line 2", "addr is set twice"}},
		{"names itself", "config: other.yaml\n", []string{"--config or $PKGSCOPE_CONFIG"}},
		{"not YAML", "addr: [\n", []string{"pkgscope.yaml"}},
		{"indexer section not a mapping", "indexer: 5\n", []string{"line 1", "indexer: want a mapping"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeConfig(t, tc.body)
			_, err := Load("pkgscope", []string{"--config", p}, envOf(nil))
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range append(tc.want, p) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := Load("pkgscope", []string{"--config", filepath.Join(t.TempDir(), "missing.yaml")}, envOf(nil)); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("a missing file: %v, want an error naming it", err)
	}
	// A secret of the wrong form is not printed (here a list where a
	// URL belongs is refused by form; a bad Redis URL by Validate, which
	// never shows it).
	p := writeConfig(t, "redis-url: http://:hunter2@r/0\n")
	if _, err := Load("pkgscope", []string{"--config", p}, envOf(nil)); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a bad redis-url: %v, want an error without its password", err)
	}
}

// TestConfigFileNullAndEmpty: a key without a value leaves the default;
// an empty file or one of comments sets nothing.
func TestConfigFileNullAndEmpty(t *testing.T) {
	for _, body := range []string{"", "# nothing\n", "max-files:\n"} {
		c, err := Load("pkgscope", []string{"--config", writeConfig(t, body)}, envOf(nil))
		if err != nil || c.MaxFiles != Default().MaxFiles {
			t.Errorf("%q: max-files %d, %v; want the default", body, c.MaxFiles, err)
		}
	}
}

// TestExampleConfig: docs/pkgscope.example.yaml loads (so every key in it
// is a setting of the right form) and sets the settings most users set.
func TestExampleConfig(t *testing.T) {
	p := filepath.Join("..", "..", "docs", "pkgscope.example.yaml")
	f, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load("pkgscope", []string{"--config", p}, envOf(nil)); err != nil {
		t.Fatalf("the example does not load: %v", err)
	}
	for _, k := range []string{"addr", "public-url", "data-dir", "tokens-file", "allowed-hosts", "fill-timeout", "max-fills", "answer-bytes"} {
		if _, ok := f.values[k]; !ok {
			t.Errorf("the example does not show %s", k)
		}
	}
	text, _ := os.ReadFile(p)
	for _, k := range []string{"database-url", "redis-url"} {
		if !strings.Contains(string(text), "# "+k+":") {
			t.Errorf("the example does not show %s (commented out)", k)
		}
	}
}

func TestConfigPath(t *testing.T) {
	env := envOf(map[string]string{"PKGSCOPE_CONFIG": "env.yaml"})
	for _, tc := range []struct {
		args string
		want string
	}{
		{"", "env.yaml"},
		{"--config a.yaml", "a.yaml"},
		{"-config=a.yaml", "a.yaml"},
		{"--addr 127.0.0.1:1 --config a.yaml", "a.yaml"},
		{"--jsdelivr-fallback --config a.yaml", "a.yaml"},
		{"stray --config a.yaml", "env.yaml"},
	} {
		if got := configPath(strings.Fields(tc.args), env); got != tc.want {
			t.Errorf("configPath(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
