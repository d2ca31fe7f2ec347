package npmrc

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Registry URLs in these tests use the reserved .invalid top-level domain;
// nothing here resolves or is contacted.

// fakeEnv is an environment made of a map: no PATH, so npm is never run
// unless a test puts one there.
func fakeEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// layout is one test machine: files under a temp dir, with placeholders
// {home}, {proj}, {prefix} and {dir} replaced in file bodies and env values.
// $PREFIX is set, so the global npmrc is {prefix}/etc/npmrc.
type layout struct {
	project, user, global string            // npmrc contents; "" = no file
	files                 map[string]string // more files, by path under {dir}
	env                   map[string]string
}

func (l layout) load(t *testing.T) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	home, proj, prefix := filepath.Join(dir, "home"), filepath.Join(dir, "proj"), filepath.Join(dir, "prefix")
	for _, d := range []string{home, proj, filepath.Join(prefix, "etc")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := strings.NewReplacer("{home}", home, "{proj}", proj, "{prefix}", prefix, "{dir}", dir)
	write := func(path, body string) {
		if body == "" {
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(r.Replace(body)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proj, ".npmrc"), l.project)
	write(filepath.Join(home, ".npmrc"), l.user)
	write(filepath.Join(prefix, "etc", "npmrc"), l.global)
	for name, body := range l.files {
		write(filepath.Join(dir, name), body)
	}
	env := map[string]string{"HOME": home, "PREFIX": prefix}
	for k, v := range l.env {
		env[k] = r.Replace(v)
	}
	return Load(proj, fakeEnv(env))
}

func TestLoadRegistryPrecedence(t *testing.T) {
	tests := []struct {
		name string
		l    layout
		want string
	}{
		{"env lower case beats every file",
			layout{project: "registry=http://proj.invalid/", user: "registry=http://user.invalid/",
				env: map[string]string{"npm_config_registry": "http://env.invalid/r"}},
			"http://env.invalid/r/"},
		{"env upper case",
			layout{project: "registry=http://proj.invalid/", env: map[string]string{"NPM_CONFIG_REGISTRY": "http://env.invalid/"}},
			"http://env.invalid/"},
		{"project beats user and global",
			layout{project: "registry=http://proj.invalid/", user: "registry=http://user.invalid/", global: "registry=http://global.invalid/"},
			"http://proj.invalid/"},
		{"user beats global",
			layout{user: "registry=http://user.invalid/", global: "registry=http://global.invalid/"},
			"http://user.invalid/"},
		{"global from $PREFIX/etc/npmrc",
			layout{global: "registry=http://global.invalid/"},
			"http://global.invalid/"},
		{"global from the user npmrc's prefix",
			layout{user: "prefix={dir}/userprefix", files: map[string]string{"userprefix/etc/npmrc": "registry=http://userprefix.invalid/"}},
			"http://userprefix.invalid/"},
		{"user config moved by NPM_CONFIG_USERCONFIG",
			layout{project: "; nothing here", global: "registry=http://global.invalid/",
				env: map[string]string{"NPM_CONFIG_USERCONFIG": "{proj}/.npmrc"}},
			"http://global.invalid/"},
		{"global config named by npm_config_globalconfig",
			layout{global: "registry=http://default-global.invalid/",
				files: map[string]string{"custom-npmrc": "registry=http://global.invalid/"},
				env:   map[string]string{"npm_config_globalconfig": "{dir}/custom-npmrc"}},
			"http://global.invalid/"},
		{"an empty value does not override a lower file",
			layout{project: "registry=", user: "registry=http://user.invalid/"},
			"http://user.invalid/"},
		{"quoted, commented and indented",
			layout{project: "# top\r\n  registry = \"http://q.invalid/path\"\r\n; why\n"},
			"http://q.invalid/path/"},
		{"keys inside a section are not settings",
			layout{project: "[other]\nregistry=http://section.invalid/\n", user: "registry=http://user.invalid/"},
			"http://user.invalid/"},
		{"value expanded from the environment",
			layout{project: "registry=http://${REG_HOST}/", env: map[string]string{"REG_HOST": "expanded.invalid:8080"}},
			"http://expanded.invalid:8080/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.l.load(t)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got := c.Registry(); got != tc.want {
				t.Errorf("Registry() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLoadWithoutRegistryFailsNamingTheVariable(t *testing.T) {
	_, err := layout{project: "; no registry", user: "//x.invalid/:_authToken=secret-token"}.load(t)
	if !errors.Is(err, ErrNoRegistry) {
		t.Fatalf("Load error = %v, want ErrNoRegistry", err)
	}
	if !strings.Contains(err.Error(), "npm_config_registry") {
		t.Errorf("error %q does not say to set npm_config_registry", err)
	}
	if strings.Contains(err.Error(), "secret-token") {
		t.Errorf("error %q leaks a token", err)
	}
}

func TestLoadAsksNPMWhenNoFileSetsRegistry(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\n[ \"$*\" = 'config get registry --workspaces=false' ] && echo 'http://from-npm.invalid/sub'\n"
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := layout{env: map[string]string{"PATH": bin}}.load(t)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got, want := c.Registry(), "http://from-npm.invalid/sub/"; got != want {
		t.Errorf("Registry() = %q, want %q", got, want)
	}
}

// TestNPMInsideAWorkspaceDoesNotStopLoad: npm refuses `config get`
// inside a workspace package (ENOWORKSPACES) unless workspaces are off;
// and an npm that fails in the working directory for any other reason is
// asked again from outside the project, with a warning.
func TestNPMInsideAWorkspaceDoesNotStopLoad(t *testing.T) {
	bin := t.TempDir()
	// Like npm 11 in a workspace package: only --workspaces=false answers.
	script := "#!/bin/sh\ncase \"$*\" in *--workspaces=false*) echo 'http://from-npm.invalid/';; *) echo 'npm error code ENOWORKSPACES' >&2; exit 1;; esac\n"
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := layout{env: map[string]string{"PATH": bin}}.load(t)
	if err != nil || c.Registry() != "http://from-npm.invalid/" || len(c.Warnings()) != 0 {
		t.Fatalf("Load in a workspace package: %v, %v, warnings %q", c, err, c.Warnings())
	}

	// An npm that fails anywhere but outside the project.
	script = "#!/bin/sh\n[ \"$(pwd -P)\" = \"$(cd \"${TMPDIR:-/tmp}\" && pwd -P)\" ] && echo 'http://outside.invalid/' && exit 0\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err = layout{env: map[string]string{"PATH": bin}}.load(t)
	if err != nil || c.Registry() != "http://outside.invalid/" || len(c.Warnings()) != 1 || !strings.Contains(c.Warnings()[0], "outside the project") {
		t.Fatalf("Load with npm failing in the project: %v, %v, warnings %q", c, err, c.Warnings())
	}
}

func TestLoadRejectsBadRegistry(t *testing.T) {
	for _, reg := range []string{"ftp://x.invalid/", "not a url", "//x.invalid/", "http://"} {
		_, err := layout{project: "registry=" + reg}.load(t)
		if err == nil || !strings.Contains(err.Error(), ".npmrc") {
			t.Errorf("registry=%q: err = %v, want an error naming the file", reg, err)
		}
	}
	_, err := layout{project: "@s:registry=file:///etc/", user: "registry=http://ok.invalid/"}.load(t)
	if err == nil || !strings.Contains(err.Error(), "@s:registry") {
		t.Errorf("bad scope registry: err = %v, want an error naming @s:registry", err)
	}
}

func TestLoadUnreadableUserConfigFails(t *testing.T) {
	_, err := layout{project: "registry=http://p.invalid/", env: map[string]string{"NPM_CONFIG_USERCONFIG": "{dir}"}}.load(t)
	if err == nil {
		t.Fatal("Load with a directory as user config: want an error")
	}
}

func TestLoadRejectsHugeNpmrc(t *testing.T) {
	_, err := layout{project: "registry=http://p.invalid/\n" + strings.Repeat(";", 1<<20)}.load(t)
	if err == nil || !strings.Contains(err.Error(), "MaxFileBytes") {
		t.Fatalf("err = %v, want the MaxFileBytes limit named", err)
	}
}

func TestRegistryFor(t *testing.T) {
	c, err := layout{
		project: "registry=http://main.invalid/\n@corp:registry=http://corp.invalid/npm\n",
		user:    "@other:registry=http://other.invalid/\n@corp:registry=http://shadowed.invalid/\n",
	}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		"lodash":         "http://main.invalid/",
		"@corp/tool":     "http://corp.invalid/npm/",
		"@CORP/tool":     "http://corp.invalid/npm/", // never the default registry
		"@Corp/tool":     "http://corp.invalid/npm/",
		"@other/x":       "http://other.invalid/",
		"@unknown/x":     "http://main.invalid/",
		"@corp":          "http://main.invalid/", // not a scoped package name
		"corp/lookalike": "http://main.invalid/",
	}
	for pkg, want := range tests {
		if got := c.RegistryFor(pkg); got != want {
			t.Errorf("RegistryFor(%q) = %q, want %q", pkg, got, want)
		}
	}
}

func TestAuthHeader(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	npmrc := strings.Join([]string{
		"registry=https://reg.invalid/npm/",
		"//reg.invalid/npm/:_authToken=${NPM_TOKEN}",
		"//reg.invalid/npm/private/:_authToken=deeper-token",
		"//basic.invalid/:_auth=" + b64("u:p"),
		"//userpass.invalid:8443/:username=alice",
		"//userpass.invalid:8443/:_password=" + b64("s3cret"),
		"//unset.invalid/:_authToken=${NOT_SET}",
		"//optional.invalid/:_authToken=${NOT_SET?}",
		"//escaped.invalid/:_authToken=\\${NPM_TOKEN}",
		"//noslash.invalid/base:_authToken=noslash-token",
		"//both.invalid/:_authToken=token-wins",
		"//both.invalid/:_auth=" + b64("x:y"),
		"//halfuser.invalid/:username=bob",
	}, "\n")
	c, err := layout{user: npmrc, env: map[string]string{"NPM_TOKEN": "tok-123"}}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ url, want string }{
		{"https://reg.invalid/npm/lodash", "Bearer tok-123"},
		{"https://reg.invalid:443/npm/lodash/-/lodash-1.0.0.tgz", "Bearer tok-123"},
		{"https://REG.invalid/npm/@s%2fx", "Bearer tok-123"},
		{"https://reg.invalid/npm/private/pkg", "Bearer deeper-token"},
		{"https://reg.invalid/other/", ""},
		{"https://reg.invalid:8443/npm/x", ""},
		{"https://basic.invalid/a/b/c", "Basic " + b64("u:p")},
		{"http://userpass.invalid:8443/x", "Basic " + b64("alice:s3cret")},
		{"https://userpass.invalid/x", ""},
		{"https://unset.invalid/x", "Bearer ${NOT_SET}"}, // npm leaves the literal
		{"https://optional.invalid/x", ""},
		{"https://escaped.invalid/x", "Bearer ${NPM_TOKEN}"},
		{"https://noslash.invalid/base/pkg", "Bearer noslash-token"},
		{"https://noslash.invalid/basement", ""},
		{"https://both.invalid/", "Bearer token-wins"},
		{"https://halfuser.invalid/", ""},
		{"https://nothing.invalid/", ""},
		{"not a url", ""},
	}
	for _, tc := range tests {
		if got := c.AuthHeader(tc.url); got != tc.want {
			t.Errorf("AuthHeader(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
	s := c.String()
	for _, secret := range []string{"tok-123", "deeper-token", b64("u:p"), "s3cret", b64("s3cret"), "noslash-token", "token-wins"} {
		if strings.Contains(s, secret) {
			t.Errorf("String() = %q leaks %q", s, secret)
		}
	}
	if !strings.Contains(s, "auth[//reg.invalid/npm/]") || !strings.Contains(s, "registry=https://reg.invalid/npm/") {
		t.Errorf("String() = %q, want the registry and credentialed prefixes", s)
	}
}

func TestRegistryUserInfoIsRedacted(t *testing.T) {
	c, err := layout{project: "registry=https://user:hunter2@reg.invalid/"}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.String(); strings.Contains(s, "hunter2") || strings.Contains(s, "user") {
		t.Errorf("String() = %q leaks registry user info", s)
	}
	_, err = layout{project: "registry=ftp://user:hunter2@reg.invalid/"}.load(t)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("err = %v, want an error without the password", err)
	}
}

func TestEnvReplace(t *testing.T) {
	env := fakeEnv(map[string]string{"A": "x", "B": "y"})
	tests := []struct{ in, want string }{
		{"${A}", "x"},
		{"a${A}b${B}c", "axbyc"},
		{"${MISSING}", "${MISSING}"},
		{"${MISSING?}", ""},
		{"${A?}", "x"},
		{`\${A}`, "${A}"},
		{`\\${A}`, `\x`},
		{`\\\${A}`, `\${A}`},
		{`\\\\${A}`, `\\x`},
		{"$${A}", "$x"},
		{"${}", "${}"},
		{"${A?B}", "${A?B}"},
		{"${A", "${A"},
		{"${${A}}", "${x}"},
		{`a\b${A}`, `a\bx`},
	}
	for _, tc := range tests {
		if got := envReplace(tc.in, env); got != tc.want {
			t.Errorf("envReplace(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
