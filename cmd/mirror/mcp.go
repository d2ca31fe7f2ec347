package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkgscope/pkgscope/internal/app"
	"github.com/pkgscope/pkgscope/internal/client"
	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/mcp"
	"github.com/pkgscope/pkgscope/internal/project"
	"github.com/pkgscope/pkgscope/internal/version"
)

const mcpUsage = `Usage: pkgscope mcp [--project DIR] [--structured] [--remote URL [--token T]] [settings]

Runs pkgscope's MCP tools (explore_npm, explore_web_docs) on stdin/stdout
for one agent. Without --remote it serves from an embedded store in
--data-dir, filled from the registry in npm's configuration; with --remote
it forwards every call to a shared pkgscope. Logs go to stderr: stdout
carries the protocol.

Flags:
`

const mcpUsageEnd = `
Without --remote every pkgscope setting applies too (pkgscope --help-all),
e.g. --data-dir, --database-url, --config.

An agent's MCP configuration runs it as:
  {"mcpServers": {"pkgscope": {"command": "pkgscope", "args": ["mcp"]}}}
`

// mcpFlags are mcp's own flags, in the order its help lists them.
var mcpFlags = []string{"project", "structured", "remote", "token", "max-manifest-bytes"}

// writeMCPHelp prints `pkgscope mcp -h`, or with --help-all or --help
// TOPIC the settings it shares with the mirror.
func writeMCPHelp(w, errw io.Writer, fs *flag.FlagSet, h config.HelpRequest) int {
	if h.All || h.Topic != "" || h.Markdown {
		return writeHelp(w, errw, h)
	}
	fmt.Fprint(w, mcpUsage)
	config.WriteList(w, config.FlagSettings(fs, "", mcpFlags...))
	fmt.Fprint(w, mcpUsageEnd)
	return 0
}

// mcpMain is `pkgscope mcp`. It returns the process exit code.
func mcpMain(args []string, log *slog.Logger) int {
	// stdout carries the protocol: anything else printed there (a stray
	// fmt.Print in a dependency) would corrupt it, so hand the transport
	// the real stdout and point os.Stdout at stderr for everyone else.
	if h, ok := config.ParseHelp(args); ok {
		fs, _, _, _, _, _ := mcpFlagSet(os.Getenv)
		return writeMCPHelp(os.Stdout, os.Stderr, fs, h)
	}
	stdout := os.Stdout
	os.Stdout = os.Stderr
	// An agent's client shows this process's stderr in its own logs: the
	// start's info lines (16 of them, mostly the embedded store's
	// migrations) are noise there. Warnings and errors still show.
	log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := runMCP(ctx, args, log, os.Getenv, &sdk.IOTransport{Reader: os.Stdin, Writer: stdout})
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "pkgscope mcp:", err)
		return 2
	case err != nil && ctx.Err() == nil:
		log.Error("pkgscope mcp stopped", "err", err)
		return 1
	}
	return 0
}

var errUsage = errors.New("usage")

// runMCP wires the MCP server from args and runs it on t until the client
// disconnects or ctx is done.
func runMCP(ctx context.Context, args []string, log *slog.Logger, getenv func(string) string, t sdk.Transport) error {
	fs, remote, token, project, structured, maxManifest := mcpFlagSet(getenv)
	lim := mcp.DefaultLimits()
	own, rest := splitArgs(args, fs)
	if err := fs.Parse(own); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeMCPHelp(os.Stderr, os.Stderr, fs, config.HelpRequest{})
			return err
		}
		return fmt.Errorf("%w: %v (pkgscope mcp -h)", errUsage, err)
	}
	if *token == "" {
		*token = getenv("PKGSCOPE_TOKEN")
	}
	if *project == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("finding the working directory (give --project): %w", err)
		}
		*project = wd
	}
	proj, err := mcp.NewProject(*project, *maxManifest)
	if err != nil {
		return fmt.Errorf("%w: --project: %v", errUsage, err)
	}

	var ex mcp.Explorer
	opt := mcp.Options{Limits: lim, Project: proj, Logger: log, Version: version.Get().Version, Structured: *structured}
	if *remote != "" {
		if len(rest) > 0 {
			return fmt.Errorf("%w: --remote forwards every call to a shared pkgscope; store flags %q do not apply", errUsage, rest)
		}
		c, err := client.New(*remote, client.Options{Token: *token})
		if err != nil {
			return fmt.Errorf("%w: --remote: %v", errUsage, err)
		}
		ex = c
		// A call naming no package explores the local project's tree: its
		// lockfile is registered with the shared pkgscope (POST
		// /v1/projects) on first use and again only when it changes.
		opt.LocalProject = remoteProject(c, proj.LockDir())
		log.Info("mcp: forwarding to a shared pkgscope", "endpoint", c.Endpoint(), "project", proj.Dir())
	} else {
		cfg, err := config.Load("pkgscope mcp", rest, getenv)
		if err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		if cfg.ProjectDir == "" {
			// The project's .npmrc (scoped registries, auth) applies too.
			cfg.ProjectDir = proj.Dir()
		}
		a, err := app.New(ctx, cfg, log, getenv)
		if err != nil {
			return err
		}
		defer a.Close()
		ex = a.Explorer
		if a.WebDocs != nil {
			opt.WebDocs = a.WebDocs // explore_web_docs, over the same local mirror
		}
		// A call naming no package explores the local project's tree.
		opt.LocalProject = func(ctx context.Context) (string, error) {
			reg, err := a.Projects.RegisterDir(ctx, proj.LockDir()) // a workspace's tree is its root's
			if err != nil {
				return "", err
			}
			return reg.ID, nil
		}
		log.Info("mcp: serving from the embedded store", "data-dir", cfg.DataDir, "project", proj.Dir())
	}
	srv := mcp.NewServer(ex, opt)
	return srv.Run(ctx, t)
}

// mcpFlagSet defines mcp's own flags; the rest of its arguments are the
// mirror's settings (splitArgs).
func mcpFlagSet(getenv func(string) string) (fs *flag.FlagSet, remote, token, project *string, structured *bool, maxManifest *int64) {
	fs = flag.NewFlagSet("pkgscope mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // help and errors are printed by mcpMain
	remote = fs.String("remote", getenv("PKGSCOPE_REMOTE"), "`URL` of a shared pkgscope to forward calls to, instead of the embedded store ($PKGSCOPE_REMOTE)")
	// The token's default comes from the environment after parsing, so
	// --help and flag errors never print it.
	token = fs.String("token", "", "bearer `TOKEN` for --remote; prefer $PKGSCOPE_TOKEN, which other users cannot see in ps")
	project = fs.String("project", getenv("PKGSCOPE_PROJECT"), "project `DIR` whose lockfile and package.json choose the default version (default: the working directory) ($PKGSCOPE_PROJECT)")
	structured = fs.Bool("structured", false, "answers carry structuredContent (the /v1/explore JSON) beside the text, and tools/list the output schema, for clients that hand their model JSON")
	maxManifest = fs.Int64("max-manifest-bytes", mcp.DefaultMaxManifestBytes, "largest project package.json read, in bytes")
	return fs, remote, token, project, structured, maxManifest
}

// splitArgs separates the flags fs defines from the rest, which are the
// store flags config.Load parses. A flag without "=" takes the next
// argument with it unless it is a boolean: one of fs's own (--structured)
// or of the mirror's settings (--jsdelivr-fallback, config.TakesValue).
func splitArgs(args []string, fs *flag.FlagSet) (own, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") {
			rest = append(rest, args[i:]...)
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		dst := &rest
		f := fs.Lookup(name)
		if name == "h" || name == "help" || f != nil {
			dst = &own
		}
		*dst = append(*dst, a)
		bare := name == "h" || name == "help" || (f != nil && config.IsBoolFlag(f)) || (f == nil && !config.TakesValue(name))
		if !hasValue && !bare && i+1 < len(args) {
			i++
			*dst = append(*dst, args[i])
		}
	}
	return own, rest
}

// remoteProject returns the LocalProject of `mirror mcp --remote`: it
// reads the project in dir on each call (a lockfile is re-read as the
// stdio mirror re-reads it) and uploads it only when its content id
// differs from the one last registered, so unchanged files cost no
// upload.
func remoteProject(c *client.Client, dir string) func(context.Context) (string, error) {
	var mu sync.Mutex
	last := ""
	return func(ctx context.Context) (string, error) {
		u, err := project.ReadDir(dir, project.DefaultLimits().MaxLockfileBytes)
		if err != nil {
			return "", err
		}
		id := project.ID(u)
		mu.Lock()
		known := id == last
		mu.Unlock()
		if known {
			return id, nil
		}
		reg, err := c.RegisterProject(ctx, u)
		if err != nil {
			return "", err
		}
		mu.Lock()
		last = reg.ID
		mu.Unlock()
		return reg.ID, nil
	}
}
