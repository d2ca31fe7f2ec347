// Command mirror is pkgscope: it serves npm package files (list, glob,
// read, grep, diff) over a JSON API, MCP and a web page, from an embedded
// store by default or from Postgres. Releases name the binary pkgscope;
// `go install ./cmd/mirror` names it mirror.
//
//	pkgscope                        # embedded store, no services
//	pkgscope --database-url=...     # org-wide Postgres store
//	pkgscope --config pkgscope.yaml # settings from a file (docs/pkgscope.example.yaml)
//	pkgscope mcp                    # MCP tools on stdio for one agent
//	pkgscope hash-token < token     # sha256:HEX line for --tokens-file
//
// Every setting is a flag, an environment variable and a config file
// key; see --help, --help-all and docs/OPERATIONS.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/pkgscope/pkgscope/internal/app"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/logbuf"
	"github.com/pkgscope/pkgscope/internal/version"
)

func main() {
	if version.IsRequest(os.Args[1:]) {
		fmt.Print(version.Get().Lines(version.Name))
		return
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	args := os.Args[1:]
	if len(args) > 0 {
		switch args[0] {
		case "mcp":
			os.Exit(mcpMain(args[1:], log))
		case "hash-token":
			os.Exit(hashTokenMain(args[1:], os.Stdin, os.Stdout, os.Stderr))
		case "serve":
			args = args[1:]
		default:
			if !strings.HasPrefix(args[0], "-") {
				fmt.Fprintf(os.Stderr, "%s: %v\n", name, unknownCommand(args[0]))
				os.Exit(2)
			}
		}
	}
	if h, ok := config.ParseHelp(args); ok {
		os.Exit(writeHelp(os.Stdout, os.Stderr, h))
	}
	cfg, err := config.Load(name, args, os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: configuration: %v\nRun %s --help for usage.\n", name, err, name)
		os.Exit(2)
	}
	if cfg.LogFlushInterval > 0 {
		var w *logbuf.Writer
		log, w = logbuf.Logger(os.Stderr, int(cfg.LogBufferBytes), cfg.LogFlushInterval)
		defer w.Close()
	}
	if err := serve(cfg, log); err != nil {
		log.Error(name+" stopped", "err", err)
		// Exit skips the deferred Close: the error, and every line before
		// it, are written already (logbuf.Handler flushes at warn).
		os.Exit(1)
	}
}

// serve runs the mirror until SIGINT or SIGTERM.
func serve(cfg config.Config, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return app.Serve(ctx, cfg, log)
}
