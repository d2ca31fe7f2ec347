// Package npmrc reads npm's own configuration: which registry to use (for
// all packages and per scope) and which credentials to send to it. pkgscope
// never names a registry itself; whatever npm on this machine would use is
// what pkgscope uses.
//
// Sources, highest precedence first, as npm applies them key by key:
//
//  1. the environment: npm_config_registry / NPM_CONFIG_REGISTRY
//  2. the project .npmrc in the project directory
//  3. the user npmrc: $npm_config_userconfig, else $HOME/.npmrc
//  4. the global npmrc: $npm_config_globalconfig, else {prefix}/etc/npmrc
//     where prefix is $npm_config_prefix, the user npmrc's prefix, $PREFIX,
//     or two levels above the node binary on $PATH (best effort)
//  5. when none of those sets registry: `npm config get registry`
//
// Files are decoded with the rules of npm's ini package, and ${VAR} is
// expanded in keys and values as npm does.
package npmrc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Options holds the limits Load works within.
type Options struct {
	// NPMCommandTimeout bounds `npm config get registry`, the last resort.
	// npm starts in about 0.3 s on a warm machine; 10 s allows a cold disk
	// without hanging a start-up forever.
	NPMCommandTimeout time.Duration
	// MaxFileBytes caps the size of one npmrc. Real ones are a few hundred
	// bytes; 1 MiB means a wrong path (a log file, a device) fails fast.
	MaxFileBytes int64
}

// DefaultOptions returns the limits Load uses.
func DefaultOptions() Options {
	return Options{NPMCommandTimeout: 10 * time.Second, MaxFileBytes: 1 << 20}
}

// Config is npm's resolved configuration. It is immutable after Load and
// safe for concurrent use.
type Config struct {
	registry string            // normalized, with a trailing slash
	scopes   map[string]string // "@scope" → normalized registry URL
	kv       map[string]string // merged settings, highest precedence wins
	sources  []string          // where settings came from, for String
	warnings []string          // what Load worked around, for the log
}

// Load resolves npm's configuration for a project directory. env looks up
// environment variables (os.Getenv in production, a map in tests); an empty
// value counts as unset, as npm skips empty npm_config_* variables.
//
// It fails when no source names a registry, when a setting names a registry
// that is not an http(s) URL, or when an npmrc exists but cannot be read.
// A missing npmrc is not an error.
func Load(projectDir string, env func(string) string) (*Config, error) {
	return LoadWithOptions(projectDir, env, DefaultOptions())
}

// LoadWithOptions is Load with explicit limits.
func LoadWithOptions(projectDir string, env func(string) string, opts Options) (*Config, error) {
	l := loader{env: env, opts: opts, kv: map[string]string{}, origin: map[string]string{}}

	userFile := envConfig(env, "userconfig")
	if userFile == "" && env("HOME") != "" {
		userFile = filepath.Join(env("HOME"), ".npmrc")
	}
	user, err := l.read(userFile, true)
	if err != nil {
		return nil, err
	}

	globalFile := envConfig(env, "globalconfig")
	if globalFile == "" {
		if prefix := l.globalPrefix(user); prefix != "" {
			globalFile = filepath.Join(prefix, "etc", "npmrc")
		}
	}
	// Best effort, like npm: an unreadable global npmrc is skipped.
	global, _ := l.read(globalFile, false)

	var project []entry
	if projectDir != "" {
		projectFile := filepath.Join(projectDir, ".npmrc")
		// npm skips the project file when it is the user file, so that
		// running in $HOME does not read ~/.npmrc twice.
		if !sameFile(projectFile, userFile) {
			if project, err = l.read(projectFile, true); err != nil {
				return nil, err
			}
		}
	}

	l.apply(globalFile, global)
	l.apply(userFile, user)
	if projectDir != "" {
		l.apply(filepath.Join(projectDir, ".npmrc"), project)
	}
	for _, name := range []string{"npm_config_registry", "NPM_CONFIG_REGISTRY"} {
		if v := env(name); v != "" {
			l.set("registry", v, "$"+name)
			break
		}
	}

	c := &Config{scopes: map[string]string{}, kv: l.kv, sources: l.sources}
	if raw, ok := l.kv["registry"]; ok {
		if c.registry, err = normalizeRegistry(raw); err != nil {
			return nil, fmt.Errorf("npm registry from %s: %w", l.origin["registry"], err)
		}
	} else {
		raw, warning, err := askNPM(env, opts.NPMCommandTimeout)
		if err != nil {
			return nil, err
		}
		if warning != "" {
			c.warnings = append(c.warnings, warning)
		}
		if c.registry, err = normalizeRegistry(raw); err != nil {
			return nil, fmt.Errorf("npm registry from `npm config get registry`: %w", err)
		}
		c.sources = append(c.sources, "npm config get registry")
	}
	for k, v := range l.kv {
		scope, ok := strings.CutSuffix(k, ":registry")
		if !ok || !strings.HasPrefix(scope, "@") || len(scope) < 2 {
			continue
		}
		u, err := normalizeRegistry(v)
		if err != nil {
			return nil, fmt.Errorf("npm setting %s from %s: %w", k, l.origin[k], err)
		}
		c.scopes[strings.ToLower(scope)] = u
	}
	return c, nil
}

// ErrNoRegistry is returned by Load when no source names a registry.
var ErrNoRegistry = errors.New("no npm registry configured: set npm_config_registry, or registry= in an .npmrc")

// Registry is the default registry URL, with a trailing slash.
func (c *Config) Registry() string { return c.registry }

// RegistryFor is the registry URL (with a trailing slash) that serves pkg:
// its scope's registry when pkg is "@scope/name" and "@scope:registry" is
// set, the default registry otherwise. Scopes match in any case, so that a
// name spelt "@MyOrg/x" (which npmspec.ValidateName refuses) could not
// reach the default registry instead of @myorg's.
func (c *Config) RegistryFor(pkg string) string {
	if strings.HasPrefix(pkg, "@") {
		if scope, _, ok := strings.Cut(pkg, "/"); ok {
			if u, ok := c.scopes[strings.ToLower(scope)]; ok {
				return u
			}
		}
	}
	return c.registry
}

// String describes the configuration without any credential: the
// registries, which URL prefixes have credentials, and the files read.
func (c *Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "registry=%s", redactURL(c.registry))
	for _, s := range slices.Sorted(maps.Keys(c.scopes)) {
		fmt.Fprintf(&b, " %s:registry=%s", s, redactURL(c.scopes[s]))
	}
	for _, p := range c.authPrefixes() {
		fmt.Fprintf(&b, " auth[%s]", p)
	}
	if len(c.sources) > 0 {
		fmt.Fprintf(&b, " from %s", strings.Join(c.sources, ", "))
	}
	return b.String()
}

// loader merges npmrc files into one map, key by key.
type loader struct {
	env     func(string) string
	opts    Options
	kv      map[string]string
	origin  map[string]string // key → file or variable that set it
	sources []string
}

// read decodes the top-level entries of file. A missing file yields
// nothing; any other failure is an error when required.
func (l *loader) read(file string, required bool) ([]entry, error) {
	if file == "" {
		return nil, nil
	}
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading npmrc: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, l.opts.MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading npmrc %s: %w", file, err)
	}
	if int64(len(data)) > l.opts.MaxFileBytes {
		return nil, fmt.Errorf("reading npmrc %s: larger than %d bytes (npmrc.Options.MaxFileBytes)", file, l.opts.MaxFileBytes)
	}
	return parseINI(string(data)), nil
}

// apply sets every usable entry of one source, over lower sources.
func (l *loader) apply(source string, entries []entry) {
	if len(entries) == 0 {
		return
	}
	l.sources = append(l.sources, source)
	for _, e := range entries {
		if e.str && e.value != "" {
			l.set(envReplace(e.key, l.env), envReplace(e.value, l.env), source)
		}
	}
}

func (l *loader) set(key, value, source string) {
	l.kv[key] = strings.TrimSpace(value)
	l.origin[key] = source
}

// globalPrefix finds npm's global prefix the way npm does, minus the
// builtin npmrc: $npm_config_prefix, the user npmrc's prefix, $PREFIX, or
// the folder two levels above node (/usr/local/bin/node → /usr/local).
func (l *loader) globalPrefix(user []entry) string {
	if p := envConfig(l.env, "prefix"); p != "" {
		return p
	}
	for _, e := range slices.Backward(user) {
		if e.key == "prefix" && e.str && e.value != "" {
			return envReplace(e.value, l.env)
		}
	}
	if p := l.env("PREFIX"); p != "" {
		return p
	}
	node := lookPath(l.env("PATH"), "node")
	if node == "" {
		return ""
	}
	if real, err := filepath.EvalSymlinks(node); err == nil {
		node = real
	}
	prefix := filepath.Dir(filepath.Dir(node))
	if d := l.env("DESTDIR"); d != "" {
		prefix = filepath.Join(d, prefix)
	}
	return prefix
}

// envConfig reads npm_config_<key> or NPM_CONFIG_<KEY>.
func envConfig(env func(string) string, key string) string {
	if v := env("npm_config_" + key); v != "" {
		return v
	}
	return env("NPM_CONFIG_" + strings.ToUpper(key))
}

// askNPM runs `npm config get registry --workspaces=false` when npm is on
// env's PATH. npm's own environment is this process's, so it sees what
// npm would see. Inside a workspace package npm refuses `config get`
// (ENOWORKSPACES) unless told workspaces are off, which changes nothing
// about the registry. Should npm still fail in the working directory, it
// is asked once more from the system's temporary directory, outside any
// project (the user and global npmrc still apply), and warning says so.
func askNPM(env func(string) string, timeout time.Duration) (reg, warning string, err error) {
	npm := lookPath(env("PATH"), "npm")
	if npm == "" {
		return "", "", ErrNoRegistry
	}
	run := func(dir string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "config", "get", "registry", "--workspaces=false")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("%w (`npm config get registry` failed: %v)", ErrNoRegistry, err)
		}
		reg := strings.TrimSpace(string(out))
		if reg == "" || reg == "undefined" || reg == "null" {
			return "", ErrNoRegistry
		}
		return reg, nil
	}
	reg, err = run("")
	if err == nil {
		return reg, "", nil
	}
	reg, err2 := run(os.TempDir())
	if err2 != nil {
		return "", "", err
	}
	return reg, fmt.Sprintf("%v in the working directory; used its answer from outside the project", err), nil
}

// Warnings are what Load worked around (npm failing in the working
// directory); the caller logs them.
func (c *Config) Warnings() []string { return c.warnings }

// lookPath finds an executable named file in a PATH-style list.
func lookPath(path, file string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// sameFile reports whether a and b name the same existing file, or the
// same path when neither exists.
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

// normalizeRegistry checks that raw is an absolute http(s) URL and gives
// it a trailing slash, as npm-registry-fetch joins registry + "/" + name.
func normalizeRegistry(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("not a URL: %q", redactURL(raw))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("not an http(s) URL: %q", redactURL(raw))
	}
	u.RawQuery, u.Fragment = "", ""
	s := u.String()
	if !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s, nil
}

// redactURL hides the user info of a URL, so that a registry written as
// https://user:secret@host/ (or https://token@host/) never reaches a log.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.Contains(raw, "@") {
			return "(unparseable URL with user info)"
		}
		return raw
	}
	if u.User != nil {
		u.User = url.User("REDACTED")
	}
	return u.String()
}
