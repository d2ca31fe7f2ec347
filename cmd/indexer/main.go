// Command indexer (pkgscope-indexer in releases) prewarms pkgscope's store so that agents almost never
// wait for a miss. It warms through the mirror's own miss path, with the
// mirror's settings (every mirror flag and environment variable applies),
// as durable River jobs in the store's database.
//
//	indexer warm lucide-react@^1 react@19 @types/react   # ranges and tags resolved like the mirror
//	indexer warm --lockfile path/to/package-lock.json     # every dependency at its locked version
//	indexer popular --top 500                             # the most-used packages (data/popular.json)
//	indexer popular refresh                               # rewrite data/popular.json from the registry's search
//	indexer worker                                        # work warm jobs until SIGINT/SIGTERM
//	indexer reindex [--format N] [--dry-run]              # rebuild search indexes / re-ingest after a format change
//	indexer status ID                                     # progress of a warm request
//	indexer gc                                            # delete unreferenced blobs now (mirrors do it on a schedule)
//
// warm and popular run workers in this process and wait, showing progress
// (bars on a terminal, log lines otherwise), then print a summary; they
// exit 1 when any package failed. With --detach they only submit the
// request and print its id, for `indexer worker` processes to run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/pkgscope/pkgscope/internal/version"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailed  = 1 // a package failed
	exitUsage   = 2
	exitStopped = 130 // interrupted; the jobs stay queued
)

func main() {
	// A long-lived worker logs each job; the other commands show progress
	// instead, and log only what goes wrong.
	level := slog.LevelWarn
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, log, os.Stdout, os.Stderr))
}

// run is the whole command: it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, log *slog.Logger, stdout, stderr *os.File) int {
	if version.IsRequest(args) {
		fmt.Fprint(stdout, version.Get().Lines(version.IndexerName))
		return exitOK
	}
	if len(args) == 0 {
		writeUsage(stderr)
		return exitUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		writeUsage(stdout)
		return exitOK
	}
	name, rest := args[0], args[1:]
	if name == "popular" && len(rest) > 0 && rest[0] == "refresh" {
		name, rest = "popular refresh", rest[1:]
	}
	cmd, ok := commandNamed(name)
	if !ok {
		fmt.Fprintf(stderr, "%s: %v\n\n", indexerName, unknownCommand(name))
		writeUsage(stderr)
		return exitUsage
	}
	s, err := parseSettings(cmd, rest, getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if errors.Is(err, errBadTopic) {
		fmt.Fprintf(stderr, "%s %s: %v\n", indexerName, name, err)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: configuration: %v\nRun %s %s -h for usage.\n", indexerName, name, err, indexerName, name)
		return exitUsage
	}
	s.stdout, s.stderr = stdout, stderr
	code, err := cmd.run(ctx, s, getenv, log)
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: %v\n", indexerName, name, err)
		if code == exitOK {
			code = exitFailed
		}
	}
	return code
}
