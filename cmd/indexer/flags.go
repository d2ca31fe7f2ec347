package main

import (
	"flag"
	"fmt"
	"io"
	"os"
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
// (--database-url, --data-dir, --max-tarball-bytes, ...). The mirror's
// flags all take a value, so a flag this FlagSet does not know consumes
// the next argument when it has no "=value".
func parseSettings(command string, args []string, getenv func(string) string, usage io.Writer) (settings, error) {
	s := settings{warm: warm.DefaultConfig()}
	fs := flag.NewFlagSet("indexer "+command, flag.ContinueOnError)
	fs.SetOutput(usage)
	b := config.NewBinder(fs, getenv, config.EnvPrefix+"WARM_")
	w := &s.warm
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

	fs.StringVar(&s.lockfile, "lockfile", "", "warm: a lockfile, a package.json, or a project directory holding one")
	fs.IntVar(&s.top, "top", 100, "popular: how many of the most-used packages to warm")
	fs.BoolVar(&s.detach, "detach", false, "warm, popular: submit the request, print its id and exit (workers elsewhere run it)")
	fs.BoolVar(&s.wait, "wait", false, "status: wait until the request is finished (a CI step that submitted with --detach or POST /v1/warm)")
	fs.BoolVar(&s.noProgress, "no-progress", false, "plain log lines even on a terminal")
	fs.StringVar(&s.out, "out", "data/popular.json", "popular refresh: file to write")
	fs.Var(&s.texts, "text", "popular refresh: a search query (repeatable; default a set of broad keywords)")
	fs.IntVar(&s.size, "size", 5000, "popular refresh: packages to keep")
	fs.StringVar(&s.fromDownloads, "from-downloads", "", "popular refresh: rank from a package index TSV (name, downloads_a_month columns) instead of the registry's search")
	fs.StringVar(&s.date, "date", "", "popular refresh --from-downloads: the date the index was made (YYYY-MM-DD)")
	fs.IntVar(&s.format, "format", 0, "reindex: build search indexes of this format where missing (default, and only choice: this binary's)")
	fs.IntVar(&s.ingestFormat, "ingest-format", 0, "reindex: re-ingest versions stored under an ingest format older than this (default: this binary's)")
	fs.BoolVar(&s.dryRun, "dry-run", false, "reindex: list what would be re-ingested, change nothing")

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
		if name == "h" || name == "help" {
			fs.Usage()
			fmt.Fprintln(usage, "\nThe mirror's settings (store, registry client, ingest limits) apply too:")
			config.Load("indexer", []string{"-h"}, getenv)
			return s, flag.ErrHelp
		}
		f := fs.Lookup(name)
		takesValue := f == nil || !isBool(f)
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
	if err := b.Err(); err != nil {
		return s, err
	}
	if err := fs.Parse(mine); err != nil {
		return s, err
	}
	var err error
	if s.mirror, err = config.Load("indexer", theirs, getenv); err != nil {
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

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
