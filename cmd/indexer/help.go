package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"

	"github.com/pkgscope/pkgscope/internal/closest"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/version"
)

// indexerName is the binary's name in usage lines (releases name it so;
// `go install ./cmd/indexer` names it indexer).
const indexerName = version.IndexerName

// command is one indexer command: its usage, its help and its own flags,
// which its help lists first.
type command struct {
	name string
	args string // after the name in its usage line
	// about is its line in the command list; text its help's paragraph.
	about, text string
	// flags are its own flags (defined in parseSettings).
	flags []string
	// queue: it opens the warm queue, so the queue settings apply.
	queue bool
	run   func(context.Context, settings, func(string) string, *slog.Logger) (int, error)
}

// commands are the indexer's commands, in the order its usage lists them.
var commands = []command{
	{name: "warm", args: "SPEC... | --lockfile PATH", about: "warm packages, or a lockfile's dependencies",
		text: `Warms packages (name, name@version, name@range, name@tag; ranges and tags
are resolved as the mirror resolves them) or every dependency of a lockfile
at its locked version, through the mirror's miss path, as durable jobs in
the store's queue. It shows progress, then a summary, and exits 1 when a
package failed; with --detach it only submits the request and prints its id.`,
		flags: []string{"lockfile", "detach", "no-progress"}, queue: true, run: cmdWarm},
	{name: "popular", args: "[--top N]", about: "warm the N most-used packages of the shipped list",
		text: `Warms the most-used packages of the list shipped in data/popular.json, each
at its latest version, as warm does.`,
		flags: []string{"top", "detach", "no-progress"}, queue: true, run: cmdPopular},
	{name: "popular refresh", args: "[--out FILE]", about: "rewrite the list from the registry's search",
		text: `Rewrites the popular-package list from the registry's search endpoint (the
registry of npm's configuration), or from a package index with downloads.`,
		flags: []string{"out", "text", "size", "from-downloads", "date"}, run: cmdRefresh},
	{name: "worker", about: "work warm jobs until interrupted",
		text: `Works warm jobs (submitted by warm --detach, POST /v1/warm, or a miss the
registry could not serve) until SIGINT or SIGTERM; running jobs then get
shutdown-timeout to finish, and the rest stay queued.`,
		queue: true, run: cmdWorker},
	{name: "reindex", args: "[--dry-run]", about: "rebuild what an upgrade's format change made stale",
		text: `Builds the search indexes missing in the current index format (from the
stored files, nothing fetched) and re-ingests versions stored under an older
ingest format, at most max-request-items per run.`,
		flags: []string{"dry-run", "format", "ingest-format", "no-progress"}, queue: true, run: cmdReindex},
	{name: "status", args: "ID", about: "print the progress of a warm request",
		text:  `Prints a warm request's progress and summary; exits 1 when a package failed.`,
		flags: []string{"wait"}, queue: true, run: cmdStatus},
	{name: "gc", about: "delete unreferenced file bodies and index chunks now",
		text: `Deletes the file bodies and index chunks nothing names, last written more
than blob-gc-grace ago, from the whole store now (mirrors do it on a
schedule, blob-gc-interval).`,
		queue: true, run: cmdGC},
}

func commandNamed(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func unknownCommand(name string) error {
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	if near := closest.Strings(name, names, 1); len(near) > 0 {
		return fmt.Errorf("unknown command %q; did you mean %s?", name, near[0])
	}
	return fmt.Errorf("unknown command %q", name)
}

// writeUsage is the indexer's usage: its commands.
func writeUsage(w io.Writer) {
	fmt.Fprintf(w, `Usage: %s COMMAND [flags] [args]

Warms pkgscope's store ahead of agents, through the mirror's own miss path
and with its settings, as durable jobs in the store's queue.

Commands:
`, indexerName)
	for _, c := range commands {
		config.WriteColumns(w, strings.TrimSpace(c.name+" "+c.args), c.about)
	}
	config.WriteColumns(w, "version", "print the version, commit and Go version")
	fmt.Fprintf(w, "\nRun %s COMMAND -h for a command's flags.\n", indexerName)
}

// errBadTopic is --help TOPIC's error for a topic that matches nothing.
var errBadTopic = errors.New("no such help topic")

// writeCommandHelp is `pkgscope-indexer COMMAND -h`: the command's usage
// and its own flags first, then the queue settings when it runs jobs, then
// the mirror's settings: the common ones, or with --help-all (or --help
// TOPIC) all of them (or a topic's).
func writeCommandHelp(w io.Writer, c command, fs *flag.FlagSet, queue []config.Setting, h config.HelpRequest) error {
	mirror := config.Settings()
	if h.Topic != "" {
		sel := config.Select(append(queue, mirror...), h.Topic)
		if len(sel) == 0 {
			return fmt.Errorf("%w %q; topics: %s", errBadTopic, h.Topic, strings.Join(config.Topics(append(queue, mirror...)), ", "))
		}
		config.WriteGroups(w, sel)
		return nil
	}
	fmt.Fprintf(w, "Usage: %s %s [flags]\n\n%s\n", indexerName, strings.TrimSpace(c.name+" "+c.args), c.text)
	if len(c.flags) > 0 {
		fmt.Fprintln(w, "\nFlags:")
		own := config.FlagSettings(fs, "", c.flags...)
		for i := range own {
			own[i].Usage = commandPrefix.ReplaceAllString(own[i].Usage, "")
		}
		config.WriteList(w, own)
	}
	if h.All || h.Markdown {
		if c.queue {
			fmt.Fprintln(w)
			config.WriteGroups(w, queue)
		}
		fmt.Fprintf(w, "\nThe mirror's settings apply too (flags, $PKGSCOPE_<NAME>, the --config file):\n\n")
		config.WriteGroups(w, mirror)
		return nil
	}
	if c.queue {
		fmt.Fprintln(w, "\nQueue settings (also $PKGSCOPE_WARM_<NAME>; described by --help queue):")
		var names []string
		for _, q := range queue {
			names = append(names, "--"+q.Name)
		}
		for _, l := range config.Wrap(strings.Join(names, ", "), 76) {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	fmt.Fprintf(w, `
The mirror's settings apply too, for the store, the registry client and the
ingest limits (flags, $PKGSCOPE_<NAME>, the --config file), e.g. --data-dir,
--database-url, --config. All of them: %s %s --help-all
`, indexerName, c.name)
	return nil
}

// commandPrefix is the "warm, popular: " that starts a command flag's
// usage, naming the commands it serves: its own command's help drops it.
var commandPrefix = regexp.MustCompile(`^[a-z]+( [a-z]+)?(, [a-z]+( [a-z]+)?)*: `)
