package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// settings is everything a command runs with: the mirror's configuration
// (store, registry client, ingest limits: the indexer warms through the
// same miss path, so with the same settings and the same flags), the warm
// queue's, and the command's own flags and arguments.
type settings struct {
	mirror config.Config
	warm   warm.Config
	// Command flags.
	lockfile      string
	top           int
	detach        bool
	wait          bool
	noProgress    bool
	out           string
	texts         stringList
	size          int
	fromDownloads string
	date          string
	format        int
	ingestFormat  int
	dryRun        bool
	args          []string
	// Where output goes (os.Stdout and os.Stderr outside tests).
	stdout, stderr *os.File
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// parseSettings reads the command's flags, environment and arguments.
//
// Flags may come anywhere after the command. The indexer's own are parsed
// here; any other is handed to config.Load, which owns the mirror's
// (--database-url, --data-dir, --max-tarball-bytes, ...). A flag this
// FlagSet does not know consumes the next argument when it has no
// "=value", unless it is one of the mirror's booleans.
func parseSettings(cmd command, args []string, getenv func(string) string, help io.Writer) (settings, error) {
	s := settings{warm: warm.DefaultConfig()}
	fs, b := defineFlags(&s, cmd.name, getenv, nil)
	if h, ok := config.ParseHelp(args); ok {
		if err := writeCommandHelp(help, cmd, fs, b.Settings(), h); err != nil {
			return s, err
		}
		return s, flag.ErrHelp
	}
	queue := map[string]bool{}
	for _, q := range b.Settings() {
		queue[q.Name] = true
	}

	var mine, theirs []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			s.args = append(s.args, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			s.args = append(s.args, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f != nil && !slices.Contains(cmd.flags, name) && !(cmd.queue && queue[name]) {
			return s, fmt.Errorf("--%s is not a flag of %s (%s %s -h lists them)", name, cmd.name, indexerName, cmd.name)
		}
		takesValue := (f == nil && config.TakesValue(name)) || (f != nil && !config.IsBoolFlag(f))
		next := []string{a}
		if takesValue && !hasValue && i+1 < len(args) {
			i++
			next = append(next, args[i])
		}
		if f != nil {
			mine = append(mine, next...)
		} else {
			theirs = append(theirs, next...)
		}
	}
	// The config file (--config is the mirror's flag) holds the queue
	// settings in its indexer section: bind them again with it, between
	// the defaults and the environment.
	file, err := config.Open(theirs, getenv)
	if err != nil {
		return s, err
	}
	sec, err := file.Section(config.IndexerSection)
	if err != nil {
		return s, err
	}
	positional := s.args
	s = settings{warm: warm.DefaultConfig(), args: positional}
	fs, b = defineFlags(&s, cmd.name, getenv, sec)
	if err := errors.Join(b.Err(), sec.Unknown(b.Settings())); err != nil {
		return s, err
	}
	if err := fs.Parse(mine); err != nil {
		return s, err
	}
	if s.mirror, err = config.Load(indexerName, theirs, getenv); err != nil {
		return s, err
	}
	if err := s.warm.Validate(); err != nil {
		return s, err
	}
	if s.warm.JobTimeout <= s.mirror.FillTimeout {
		return s, fmt.Errorf("job-timeout (%s) must be longer than fill-timeout (%s): a job waits for its fill", s.warm.JobTimeout, s.mirror.FillTimeout)
	}
	return s, nil
}

// defineFlags defines the indexer's own flags on a new FlagSet, bound to
// s: the queue settings through a Binder (with file's values, then
// $PKGSCOPE_WARM_<NAME> variables), and the commands' flags.
func defineFlags(s *settings, name string, getenv func(string) string, file *config.File) (*flag.FlagSet, *config.Binder) {
	fs := flag.NewFlagSet(indexerName+" "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // help is writeCommandHelp's, errors are returned
	b := config.NewBinder(fs, getenv, config.EnvPrefix+"WARM_")
	b.UseFile(file)
	w := &s.warm
	b.Group("Queue: this process's warm jobs")
	b.Int(&w.Workers, "workers", "warm jobs run at once by this process")
	b.Int(&w.MaxAttempts, "max-attempts", "attempts before a package is reported failed")
	b.Dur(&w.RetryBase, "retry-base", "delay before the first retry, doubled each retry")
	b.Dur(&w.RetryMax, "retry-max", "longest delay between retries")
	b.Dur(&w.MaxSnoozeAge, "max-snooze-age", "how long a job waits out 429/503 without spending attempts")
	b.Dur(&w.JobTimeout, "job-timeout", "time for one job attempt (must exceed fill-timeout)")
	b.Dur(&w.RescueMargin, "rescue-margin", "how long past job-timeout a running job is taken for lost (its worker killed) and run again")
	b.Dur(&w.PollInterval, "poll-interval", "how often idle workers and waiting commands look for news")
	b.Int(&w.MaxRequestItems, "max-request-items", "most packages in one warm request")
	b.Dur(&w.RequestRetention, "request-retention", "how long a request's progress is kept")
	b.Dur(&w.CleanupInterval, "cleanup-interval", "how often old requests are deleted")
	b.Str(&w.Queue, "queue", "River queue of warm jobs")

	fs.StringVar(&s.lockfile, "lockfile", "", "warm: a `PATH` to a lockfile, a package.json, or a project directory holding one")
	fs.IntVar(&s.top, "top", 100, "popular: how many of the most-used packages to warm")
	fs.BoolVar(&s.detach, "detach", false, "warm, popular: submit the request, print its id and exit (workers elsewhere run it)")
	fs.BoolVar(&s.wait, "wait", false, "status: wait until the request is finished (a CI step that submitted with --detach or POST /v1/warm)")
	fs.BoolVar(&s.noProgress, "no-progress", false, "plain log lines even on a terminal")
	fs.StringVar(&s.out, "out", "data/popular.json", "popular refresh: `FILE` to write")
	fs.Var(&s.texts, "text", "popular refresh: a search `QUERY` (repeatable; default a set of broad keywords)")
	fs.IntVar(&s.size, "size", 5000, "popular refresh: packages to keep")
	fs.StringVar(&s.fromDownloads, "from-downloads", "", "popular refresh: rank from a package index TSV `FILE` (name, downloads_a_month columns) instead of the registry's search")
	fs.StringVar(&s.date, "date", "", "popular refresh --from-downloads: the `DATE` the index was made (YYYY-MM-DD)")
	fs.IntVar(&s.format, "format", 0, "reindex: build search indexes of this format where missing (default, and only choice: this binary's)")
	fs.IntVar(&s.ingestFormat, "ingest-format", 0, "reindex: re-ingest versions stored under an ingest format older than this (default: this binary's)")
	fs.BoolVar(&s.dryRun, "dry-run", false, "reindex: list what would be re-ingested, change nothing")
	return fs, b
}
