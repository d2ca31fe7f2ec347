package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/pkgscope/pkgscope/internal/closest"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/version"
)

// name is the product's and this binary's name in every usage line
// (`go install ./cmd/mirror` names the binary mirror: the same program).
const name = version.Name

// commands are the subcommands, first in the help; serve is the default.
var commands = []struct{ usage, what string }{
	{"serve [flags]", "run the mirror: API, /mcp, web page (the default)"},
	{"mcp [flags]", "MCP tools on stdio for one agent (" + name + " mcp -h)"},
	{"hash-token", "print stdin's tokens hashed, for --tokens-file"},
	{"version", "print the version, commit and Go version"},
}

// common are the settings most users set, first in the help, with a
// shorter text than --help-all's; each one's default is added when short.
var common = []struct{ name, what string }{
	{"addr", "listen address"},
	{"public-url", "the address users reach it at, for links in answers"},
	{"data-dir", "embedded store and caches (~/.cache/pkgscope)"},
	{"database-url", "Postgres store shared by replicas ($DATABASE_URL)"},
	{"redis-url", "Redis: cache, fill lock, rate limits ($REDIS_URL)"},
	{"tokens-file", "bearer tokens every route but health checks needs"},
	{"allowed-hosts", "host names a mirror without tokens answers"},
	{"project-dir", "where npm's .npmrc (registry, auth) is read"},
	{"metrics-addr", "serve /metrics on a private listener of its own"},
	{"jsdelivr-fallback", "answer from jsDelivr when the registry cannot"},
	{"config", "YAML file of settings (docs/pkgscope.example.yaml)"},
}

const about = name + ` serves the files of npm packages to agents: list, glob, read, grep
and diff over a JSON API, MCP and a web page, from a store it fills from
the registry in npm's configuration.
`

// writeHelp prints what h asks for about the mirror's settings; it
// returns the exit code (2 for a topic that matches nothing).
func writeHelp(w, errw io.Writer, h config.HelpRequest) int {
	all := config.Settings()
	switch {
	case h.Markdown:
		config.WriteMarkdown(w, name, all)
	case h.All:
		fmt.Fprintf(w, "Usage: %s [serve] [flags]\n\n%s\n", name, envRule)
		config.WriteGroups(w, all)
	case h.Topic != "":
		sel := config.Select(all, h.Topic)
		if len(sel) == 0 {
			fmt.Fprintf(errw, "%s: no settings about %q; topics: %s\n", name, h.Topic, strings.Join(config.Topics(all), ", "))
			return 2
		}
		config.WriteGroups(w, sel)
	default:
		writeShortHelp(w, all)
	}
	return 0
}

const envRule = `Each setting is also an environment variable (--data-dir: PKGSCOPE_DATA_DIR)
and a key of the --config file; flags win over the environment, which wins
over the file.
`

// writeShortHelp is --help: one screen.
func writeShortHelp(w io.Writer, all []config.Setting) {
	fmt.Fprintf(w, "%s\nUsage:\n", about)
	for _, c := range commands {
		config.WriteColumns(w, name+" "+c.usage, c.what)
	}
	fmt.Fprintln(w, "\nSettings most users set:")
	byName := map[string]config.Setting{}
	for _, s := range all {
		byName[s.Name] = s
	}
	for _, c := range common {
		s := byName[c.name]
		text := c.what
		if s.Default != "" && s.Kind != config.KindBool && len(s.Default) < 20 {
			text += " (default " + s.Default + ")"
		}
		config.WriteEntry(w, s, text)
	}
	fmt.Fprintf(w, "\n%s\n", envRule)
	config.WriteColumns(w, name+" --help-all", fmt.Sprintf("all %d settings, by topic", len(all)))
	config.WriteColumns(w, name+" --help TOPIC", "one topic: "+strings.Join(config.Topics(all), ", ")+"; or a word of settings' names (--help timeout)")
	config.WriteColumns(w, "docs/OPERATIONS.md", "the same reference, with sizing, backups and upgrades")
}

// unknownCommand is the error for a first argument that is neither a
// flag nor a command.
func unknownCommand(arg string) error {
	names := []string{"serve", "mcp", "hash-token", "version"}
	if near := closest.Strings(arg, names, 1); len(near) > 0 {
		return fmt.Errorf("unknown command %q; did you mean %s?", arg, near[0])
	}
	return fmt.Errorf("unknown command %q; commands: %s", arg, strings.Join(names, ", "))
}
