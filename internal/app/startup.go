package app

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/version"
)

// startupAttrs are the attributes of the line Serve logs once it listens:
// what an operator checks first. Which build; where it stores; which
// registry (from npm's configuration) it fills from; where people and
// agents reach it; whether tokens are required. Stores, registries and
// Redis are named by host only: their URLs may carry credentials.
func (a *App) startupAttrs(cfg config.Config, listen string) []any {
	base := strings.TrimSuffix(cfg.PublicURL, "/")
	if base == "" {
		base = "http://" + listen // not loopback, no public-url: what this process listens on
	}
	tokens := "off: open API, answering localhost"
	if len(cfg.AllowedHosts) > 0 {
		tokens += " and " + strings.Join(cfg.AllowedHosts, ",")
	}
	if n := a.Tokens.Len(); n > 0 {
		tokens = fmt.Sprintf("required (%d)", n)
	}
	attrs := []any{
		"version", version.Get().Short(),
		"addr", "http://" + listen,
		"web", base + "/",
		"mcp", base + "/mcp",
		"store", storeDesc(cfg),
		"registry", hostOf(a.core.NPM.Registry()),
		"redis", redisDesc(cfg.RedisURL),
		"tokens", tokens,
	}
	if cfg.ConfigFile != "" {
		attrs = append(attrs, "config", cfg.ConfigFile)
	}
	return attrs
}

// storeDesc names the store without credentials: the embedded store's
// folder, or Postgres's host:port/database.
func storeDesc(cfg config.Config) string {
	if cfg.DatabaseURL == "" {
		return "embedded " + cfg.DataDir
	}
	pc, err := pgconn.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return "postgres" // the store opened it, so this does not happen; never print the URL
	}
	return fmt.Sprintf("postgres %s:%d/%s", pc.Host, pc.Port, pc.Database)
}

// redisDesc names Redis by host, "off" without it.
func redisDesc(raw string) string {
	if raw == "" {
		return "off"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "on"
	}
	if u.Scheme == "unix" {
		return "unix socket"
	}
	return u.Host
}

// hostOf is a URL's host (and port), never its credentials or path.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable)"
	}
	return u.Host
}
