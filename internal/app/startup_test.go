package app

import (
	"bytes"
	"context"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/pgtest"
	"github.com/pkgscope/pkgscope/internal/redistest"
)

// lineLog is a logger that keeps its text and closes listening when Serve
// logs its start-up line.
type lineLog struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	text      slog.Handler
	once      sync.Once
	listening chan struct{}
}

func newLineLog() *lineLog {
	l := &lineLog{listening: make(chan struct{})}
	l.text = slog.NewTextHandler(&l.buf, nil)
	return l
}

func (l *lineLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *lineLog) WithAttrs([]slog.Attr) slog.Handler       { return l } // Serve's logger has none
func (l *lineLog) WithGroup(string) slog.Handler            { return l }
func (l *lineLog) Handle(ctx context.Context, r slog.Record) error {
	l.mu.Lock()
	err := l.text.Handle(ctx, r)
	l.mu.Unlock()
	if r.Message == "pkgscope listening" {
		l.once.Do(func() { close(l.listening) })
	}
	return err
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestStartupLine: Serve's start-up line names the build, the store, the
// registry, Redis, the web and MCP addresses and the token mode, and no
// log line carries a credential of the database, Redis, the registry or
// the tokens.
func TestStartupLine(t *testing.T) {
	reg := fakeregistry.New(t)
	for k, v := range reg.Env() {
		t.Setenv(k, v)
	}
	ru, _ := url.Parse(reg.URL())
	ru.User = url.UserPassword("npmuser", "hunter2-npm")
	t.Setenv("npm_config_registry", ru.String())
	db, _ := url.Parse(pgtest.URL(t))
	db.User = url.UserPassword(db.User.Username(), "hunter2-db") // the test server trusts local connections
	rd, _ := url.Parse(redistest.URL(t))
	rd.User = url.UserPassword("default", "hunter2-redis") // the default user without a password takes any

	cfg := config.Default()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir, cfg.ProjectDir = t.TempDir(), t.TempDir()
	cfg.DatabaseURL, cfg.RedisURL, cfg.RedisPrefix = db.String(), rd.String(), redistest.Prefix(t)
	cfg.PublicURL = "https://pkgscope.example.internal/"
	cfg.Tokens = "hunter2-token-1,hunter2-token-2:@myorg"
	cfg.ConfigFile = "/etc/pkgscope/pkgscope.yaml"
	l := newLineLog()
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, cfg, slog.New(l)) }()
	select {
	case <-l.listening:
	case err := <-served:
		t.Fatalf("Serve: %v\n%s", err, l)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	out := l.String()
	var line string
	for _, s := range strings.Split(out, "\n") {
		if strings.Contains(s, `msg="pkgscope listening"`) {
			line = s
		}
	}
	for _, want := range []string{
		"version=", "addr=http://127.0.0.1:",
		"web=https://pkgscope.example.internal/ ", "mcp=https://pkgscope.example.internal/mcp ",
		"store=\"postgres 127.0.0.1:5432/" + strings.TrimPrefix(db.Path, "/") + "\"",
		"registry=" + ru.Host + " ", "redis=" + rd.Host + " ", `tokens="required (2)"`,
		"config=/etc/pkgscope/pkgscope.yaml",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("the start-up line lacks %s:\n%s", want, line)
		}
	}
	t.Log(line)
	if strings.Contains(out, "hunter2") || strings.Contains(out, "npmuser") {
		t.Errorf("the log shows a credential:\n%s", out)
	}
}

func TestStartupStoreAndTokens(t *testing.T) {
	for _, tc := range []struct {
		url, want string
	}{
		{"", "embedded /data"},
		{"postgres://u:pw@db.internal:6543/pkgs?sslmode=require", "postgres db.internal:6543/pkgs"},
		{"host=db.internal port=5433 dbname=pkgs user=u password=pw", "postgres db.internal:5433/pkgs"},
	} {
		if got := storeDesc(config.Config{DataDir: "/data", DatabaseURL: tc.url}); got != tc.want {
			t.Errorf("storeDesc(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
	for in, want := range map[string]string{"": "off", "redis://:pw@r.internal:6379/0": "r.internal:6379", "unix:///run/redis.sock": "unix socket"} {
		if got := redisDesc(in); got != want {
			t.Errorf("redisDesc(%q) = %q, want %q", in, got, want)
		}
	}
}
