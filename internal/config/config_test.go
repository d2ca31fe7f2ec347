package config

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadPrecedence(t *testing.T) {
	env := envOf(map[string]string{
		"PKGSCOPE_ADDR":           "127.0.0.1:1",
		"DATABASE_URL":            "postgres://x/y",
		"PKGSCOPE_MAX_LINE_WIDTH": "100",
		"PKGSCOPE_FILL_TIMEOUT":   "1m",
	})
	c, err := Load("mirror", []string{"--addr", "127.0.0.1:2"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:2" {
		t.Errorf("flag should win over env: Addr = %q", c.Addr)
	}
	if c.DatabaseURL != "postgres://x/y" {
		t.Errorf("DATABASE_URL not honoured: %q", c.DatabaseURL)
	}
	if c.MaxLineWidth != 100 || c.FillTimeout != time.Minute {
		t.Errorf("env not applied: width %d, fill %s", c.MaxLineWidth, c.FillTimeout)
	}
	if c.MaxReadLimit != Default().MaxReadLimit {
		t.Errorf("default lost: %d", c.MaxReadLimit)
	}
}

func TestLoadErrorsNameTheSetting(t *testing.T) {
	cases := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"PKGSCOPE_MAX_FILES": "many"}, nil, "PKGSCOPE_MAX_FILES"},
		{nil, []string{"--max-line-width", "0"}, "max-line-width must be positive"},
		{nil, []string{"--default-read-limit", "50", "--max-read-limit", "10"}, "default-read-limit (50) is above max-read-limit (10)"},
		{nil, []string{"--fill-timeout", "10m"}, "write-timeout"},
		{map[string]string{"PKGSCOPE_BLOB_GC_GRACE": "10m"}, nil, "blob-gc-grace (10m0s) must be longer than twice fill-timeout (5m0s)"},
		{nil, []string{"--blob-gc-batch", "0"}, "blob-gc-batch (0) must be positive"},
		{nil, []string{"--max-fills", "0"}, "max-fills must be positive"},
		{map[string]string{"PKGSCOPE_MAX_FILL_WAITERS": "-1"}, nil, "max-fill-waiters must not be negative"},
		{map[string]string{"DATABASE_URL": "postgres://db/x", "PKGSCOPE_MIGRATION_LOCK_TIMEOUT": "500ms"}, nil, "migration-lock-timeout (500ms) must be at least 1s"},
		{nil, []string{"stray"}, "unexpected arguments"},
	}
	for _, tc := range cases {
		_, err := Load("mirror", tc.args, envOf(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%v, %v) = %v, want an error mentioning %q", tc.env, tc.args, err, tc.want)
		}
	}
}

// TestSecretsNotPrintedAsDefaults: --help (and every flag error) prints
// flag defaults; a database or Redis URL from the environment may carry a
// password and must not appear there.
func TestSecretsNotPrintedAsDefaults(t *testing.T) {
	env := envOf(map[string]string{
		"PKGSCOPE_DATABASE_URL": "postgres://u:hunter2-db@db/x",
		"PKGSCOPE_REDIS_URL":    "redis://:hunter2-redis@r:6379/0",
	})
	c, err := Load("mirror", nil, env)
	if err != nil || c.DatabaseURL != "postgres://u:hunter2-db@db/x" || c.RedisURL != "redis://:hunter2-redis@r:6379/0" {
		t.Fatalf("env not applied: %+v, %v", c.DatabaseURL, err)
	}
	var out strings.Builder
	fs := flag.NewFlagSet("mirror", flag.ContinueOnError)
	b := NewBinder(fs, env, EnvPrefix)
	var db, rd string
	b.Secret(&db, "database-url", "Postgres URL")
	b.Secret(&rd, "redis-url", "Redis URL")
	fs.SetOutput(&out)
	fs.PrintDefaults()
	if strings.Contains(out.String(), "hunter2") || db == "" {
		t.Errorf("help shows a secret or lost it (%q):\n%s", db, out.String())
	}
}

// TestIndexCacheSettings: the local index cache's bounds are settings
// (a config refactor once dropped their flags while README listed them).
func TestIndexCacheSettings(t *testing.T) {
	c, err := Load("mirror", []string{"--index-cache-bytes", "67108864"}, envOf(map[string]string{"PKGSCOPE_MAX_INDEX_BYTES": "536870912"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.IndexCacheBytes != 64<<20 || c.MaxIndexBytes != 512<<20 {
		t.Errorf("index-cache-bytes %d, max-index-bytes %d; want %d and %d", c.IndexCacheBytes, c.MaxIndexBytes, 64<<20, 512<<20)
	}
	if _, err := Load("mirror", []string{"--index-cache-bytes", "-1"}, envOf(nil)); err == nil || !strings.Contains(err.Error(), "index-cache-bytes") {
		t.Errorf("a negative index-cache-bytes: %v, want an error naming it", err)
	}
	c, err = Load("mirror", nil, envOf(map[string]string{"PKGSCOPE_INDEX_TEXT_CACHE_BYTES": "1048576"}))
	if err != nil || c.Search().TextCacheBytes != 1<<20 {
		t.Errorf("index-text-cache-bytes from the environment: %v, %v; want %d", c.Search().TextCacheBytes, err, 1<<20)
	}
	if _, err := Load("mirror", []string{"--index-text-cache-bytes", "-1"}, envOf(nil)); err == nil || !strings.Contains(err.Error(), "index-text-cache-bytes") {
		t.Errorf("a negative index-text-cache-bytes: %v, want an error naming it", err)
	}
}

// TestSessionAndUploadSettings: the web session's bounds and the lockfile
// pool's share and minimum rate are settings, checked at load.
func TestSessionAndUploadSettings(t *testing.T) {
	c, err := Load("mirror", []string{"--session-idle-timeout", "1h", "--session-lifetime", "24h", "--max-lockfile-bytes-per-caller", "67108864"},
		envOf(map[string]string{"PKGSCOPE_MIN_UPLOAD_BYTES_PER_SECOND": "1024"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.SessionIdleTimeout != time.Hour || c.SessionLifetime != 24*time.Hour || c.MaxLockfileBytesPerCaller != 64<<20 || c.MinUploadBytesPerSecond != 1024 {
		t.Errorf("loaded %s, %s, %d, %d", c.SessionIdleTimeout, c.SessionLifetime, c.MaxLockfileBytesPerCaller, c.MinUploadBytesPerSecond)
	}
	for _, tc := range []struct{ flag, value string }{
		{"session-idle-timeout", "0s"},
		{"session-lifetime", "-1h"},
		{"max-lockfile-bytes-per-caller", "1024"},       // under max-warm-body-bytes
		{"max-lockfile-bytes-per-caller", "1073741824"}, // over max-lockfile-bytes-in-flight
		{"min-upload-bytes-per-second", "-1"},
	} {
		if _, err := Load("mirror", []string{"--" + tc.flag, tc.value}, envOf(nil)); err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("--%s %s: %v, want an error naming it", tc.flag, tc.value, err)
		}
	}
}
