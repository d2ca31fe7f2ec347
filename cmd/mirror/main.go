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
)

func main() {
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Serve(ctx, cfg, log); err != nil {
		log.Error("mirror stopped", "err", err)
		os.Exit(1)
	}
}
