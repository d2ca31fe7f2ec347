// Command indexer prewarms pkgscope's store so that agents almost never
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

const usage = `usage: indexer COMMAND [flags] [args]

commands:
  warm SPEC...              warm packages (name, name@version, name@range, name@tag)
  warm --lockfile PATH      warm a lockfile's dependencies (or a package.json's, or a project directory's)
  popular [--top N]         warm the N most-used packages of the shipped list
  popular refresh           rewrite the list from the registry's search endpoint
  worker                    work warm jobs until interrupted
  reindex                   build search indexes missing in the current format, re-ingest
                            versions stored under an older ingest format
  status ID                 print the progress of a warm request
  version                   print the version, commit and Go version
  gc                        delete the file bodies and index chunks nothing names, older than
                            --blob-gc-grace, from the whole store now

Run "indexer COMMAND -h" for the flags.
`

// run is the whole command: it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, log *slog.Logger, stdout, stderr *os.File) int {
	if version.IsRequest(args) {
		fmt.Fprint(stdout, version.Get().Lines(version.IndexerName))
		return exitOK
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	command, rest := args[0], args[1:]
	if command == "popular" && len(rest) > 0 && rest[0] == "refresh" {
		command, rest = "popular refresh", rest[1:]
	}
	s, err := parseSettings(command, rest, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "indexer %s: configuration: %v\n", command, err)
		return exitUsage
	}
	var cmd func(context.Context, settings, func(string) string, *slog.Logger) (int, error)
	switch command {
	case "warm":
		cmd = cmdWarm
	case "popular":
		cmd = cmdPopular
	case "popular refresh":
		cmd = cmdRefresh
	case "worker":
		cmd = cmdWorker
	case "reindex":
		cmd = cmdReindex
	case "status":
		cmd = cmdStatus
	case "gc":
		cmd = cmdGC
	default:
		fmt.Fprintf(stderr, "indexer: unknown command %q\n\n%s", command, usage)
		return exitUsage
	}
	s.stdout, s.stderr = stdout, stderr
	code, err := cmd(ctx, s, getenv, log)
	if err != nil {
		fmt.Fprintf(stderr, "indexer %s: %v\n", command, err)
		if code == exitOK {
			code = exitFailed
		}
	}
	return code
}
