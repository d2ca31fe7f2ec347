// Command mirror serves npm package files (list, glob, read, grep) over a
// JSON API, from an embedded store by default or from Postgres.
//
//	go run ./cmd/mirror                     # embedded store, no services
//	go run ./cmd/mirror --database-url=...  # org-wide Postgres store
//	go run ./cmd/mirror mcp                 # MCP tool on stdio for one agent
//	mirror hash-token < token               # sha256:HEX line for --tokens-file
//
// Every flag has an environment variable; see --help.
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
	if len(os.Args) > 1 && os.Args[1] == "mcp" {
		os.Exit(mcpMain(os.Args[2:], log))
	}
	if len(os.Args) > 1 && os.Args[1] == "hash-token" {
		os.Exit(hashTokenMain(os.Stdin, os.Stdout, os.Stderr))
	}
	cfg, err := config.Load("mirror", os.Args[1:], os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mirror: configuration:", err)
		os.Exit(2)
	}
	if cfg.LogFlushInterval > 0 {
		w := logbuf.New(os.Stderr, int(cfg.LogBufferBytes), cfg.LogFlushInterval)
		log = slog.New(logbuf.Handler(slog.NewTextHandler(w, nil), w, slog.LevelWarn))
		defer w.Close()
	}
	if err := serve(cfg, log); err != nil {
		log.Error("mirror stopped", "err", err)
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
