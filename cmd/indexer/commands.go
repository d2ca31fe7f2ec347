package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pkgscope/pkgscope/internal/blobgc"
	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/lockfile"
	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/popular"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// cmdWarm warms specs or a lockfile.
func cmdWarm(ctx context.Context, s settings, getenv func(string) string, log *slog.Logger) (int, error) {
	var wants []warm.Want
	var source string
	switch {
	case s.lockfile != "" && len(s.args) > 0:
		return exitUsage, errors.New("give specs or --lockfile, not both")
	case s.lockfile != "":
		path := s.lockfile
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			if path, err = lockfile.Find(path); err != nil {
				return exitUsage, err
			}
		}
		lf, err := lockfile.ParseFile(path)
		if err != nil {
			return exitUsage, err
		}
		wants = warm.Wants(lf)
		source = fmt.Sprintf("indexer warm --lockfile %s (%s)", filepath.Base(path), lf.Format)
	case len(s.args) > 0:
		for _, a := range s.args {
			wants = append(wants, warm.ParseSpecArg(a))
		}
		source = "indexer warm " + strings.Join(s.args, " ")
		if len(source) > 200 {
			source = source[:200] + "..."
		}
	default:
		return exitUsage, errors.New("nothing to warm: give specs (react@19) or --lockfile PATH")
	}
	return warmWants(ctx, s, getenv, log, source, wants)
}

// cmdPopular warms the top of the shipped list, each at its latest version.
func cmdPopular(ctx context.Context, s settings, getenv func(string) string, log *slog.Logger) (int, error) {
	if len(s.args) > 0 {
		return exitUsage, fmt.Errorf("unexpected arguments %q (did you mean `indexer popular refresh`?)", s.args)
	}
	if s.top <= 0 {
		return exitUsage, errors.New("--top must be positive")
	}
	l, err := popular.Shipped()
	if err != nil {
		return exitFailed, err
	}
	var wants []warm.Want
	for _, name := range l.Top(s.top) {
		wants = append(wants, warm.Want{Name: name})
	}
	return warmWants(ctx, s, getenv, log, fmt.Sprintf("indexer popular --top %d (list of %s)", s.top, l.Date), wants)
}

// warmWants submits a request and, unless detached, works it here,
// showing progress, and prints the summary.
func warmWants(ctx context.Context, s settings, getenv func(string) string, log *slog.Logger, source string, wants []warm.Want) (int, error) {
	ix, err := open(ctx, s, getenv, log)
	if err != nil {
		return exitFailed, err
	}
	defer ix.close()
	start := time.Now()
	id, err := ix.q.Submit(ctx, source, wants)
	if err != nil {
		return exitFailed, err
	}
	if s.detach {
		fmt.Fprintln(s.stdout, id)
		return exitOK, nil
	}
	if err := ix.q.Start(ctx); err != nil {
		return exitFailed, err
	}
	d := newDisplay(s.stdout, s.noProgress)
	p, werr := ix.q.Wait(ctx, id, d.update)
	d.done()
	// Jobs cut short by an interrupt are retried by the next worker.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.mirror.ShutdownTimeout)
	defer cancel()
	if err := ix.q.Stop(sctx); err != nil {
		log.Warn("stopping workers", "err", err)
	}
	n, timing := ix.q.Fetched()
	summarize(s.stdout, p, time.Since(start), n, timing)
	switch {
	case werr != nil && ctx.Err() != nil:
		fmt.Fprintf(s.stderr, "interrupted: the request's remaining jobs stay queued; `indexer worker` finishes them (indexer status %s)\n", id)
		return exitStopped, nil
	case werr != nil:
		return exitFailed, werr
	case p.Failed > 0:
		return exitFailed, nil
	}
	return exitOK, nil
}

// cmdWorker works warm jobs until interrupted.
func cmdWorker(ctx context.Context, s settings, getenv func(string) string, log *slog.Logger) (int, error) {
	if len(s.args) > 0 {
		return exitUsage, fmt.Errorf("unexpected arguments %q", s.args)
	}
	ix, err := open(ctx, s, getenv, log)
	if err != nil {
		return exitFailed, err
	}
	defer ix.close()
	if err := ix.q.Start(ctx); err != nil {
		return exitFailed, err
	}
	fmt.Fprintf(s.stderr, "%s indexer worker: %s on queue %q\n", stamp(), english.Count(s.warm.Workers, "worker"), s.warm.Queue)
	<-ctx.Done()
	fmt.Fprintf(s.stderr, "%s indexer worker: stopping, running jobs get %s\n", stamp(), s.mirror.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.mirror.ShutdownTimeout)
	defer cancel()
	if err := ix.q.Stop(sctx); err != nil {
		return exitFailed, err
	}
	return exitOK, nil
}

// cmdReindex rebuilds what an upgrade made stale: search indexes missing
// in the current index format (built from the stored files, nothing
// fetched), and versions stored under an older ingest format (fetched and
// ingested again, then indexed).
func cmdReindex(ctx context.Context, s settings, getenv func(string) string, log *slog.Logger) (int, error) {
	if len(s.args) > 0 {
		return exitUsage, fmt.Errorf("unexpected arguments %q", s.args)
	}
	format, ingestFormat := s.format, s.ingestFormat
	if format == 0 {
		format = index.FormatVersion
	}
	if ingestFormat == 0 {
		ingestFormat = warm.IngestFormat
	}
	ix, err := open(ctx, s, getenv, log)
	if err != nil {
		return exitFailed, err
	}
	stale, err := ix.q.Stale(ctx, ingestFormat, s.warm.MaxRequestItems)
	if err != nil {
		ix.close()
		return exitUsage, err
	}
	unindexed, err := ix.q.Unindexed(ctx, format, s.warm.MaxRequestItems-len(stale))
	ix.close()
	if err != nil {
		return exitUsage, err
	}
	// A re-ingested version is indexed by its job: list it once.
	restored := map[string]bool{}
	for _, w := range stale {
		restored[w.Name+"@"+w.Spec] = true
	}
	wants := stale
	for _, w := range unindexed {
		if !restored[w.Name+"@"+w.Spec] {
			wants = append(wants, w)
		}
	}
	fmt.Fprintf(s.stdout, "%s stored under an ingest format older than %d; %d without a search index of format %d",
		english.Count(len(stale), "version"), ingestFormat, len(wants)-len(stale), format)
	if len(wants) >= s.warm.MaxRequestItems {
		fmt.Fprint(s.stdout, " (at most max-request-items per run: run reindex again for the rest)")
	}
	fmt.Fprintln(s.stdout)
	if s.dryRun || len(wants) == 0 {
		for _, w := range wants[:min(len(wants), maxListed)] {
			fmt.Fprintf(s.stdout, "  %s@%s\n", w.Name, w.Spec)
		}
		return exitOK, nil
	}
	return warmWants(ctx, s, getenv, log, fmt.Sprintf("indexer reindex --format %d --ingest-format %d", format, ingestFormat), wants)
}

// cmdGC sweeps the whole store with the blob collector now, rather than
// waiting for the mirrors' scheduled passes (blobgc.Sweep): what a
// failed bulk warm or reindex left behind goes at once, once older than
// blob-gc-grace.
func cmdGC(ctx context.Context, s settings, getenv func(string) string, log *slog.Logger) (int, error) {
	if len(s.args) > 0 {
		return exitUsage, fmt.Errorf("unexpected arguments %q", s.args)
	}
	ix, err := open(ctx, s, getenv, log)
	if err != nil {
		return exitFailed, err
	}
	defer ix.close()
	opt := s.mirror.BlobGC()
	sum, err := blobgc.Sweep(ctx, ix.st, opt, s.warm.PollInterval)
	fmt.Fprintf(s.stdout, "blob collector: %d blobs examined, %d deleted (%d stored bytes) unreferenced for over %s\n",
		sum.Examined, sum.Deleted, sum.Freed, opt.Grace)
	if err != nil {
		return exitFailed, err
	}
	return exitOK, nil
}

// cmdStatus prints a request's progress and summary.
func cmdStatus(ctx context.Context, s settings, getenv func(string) string, log *slog.Logger) (int, error) {
	if len(s.args) != 1 {
		return exitUsage, errors.New("give one request id")
	}
	ix, err := open(ctx, s, getenv, log)
	if err != nil {
		return exitFailed, err
	}
	defer ix.close()
	if s.wait {
		// Wait reads counts only; the summary below reads every item.
		if _, err := ix.q.Wait(ctx, s.args[0], nil); err != nil {
			return exitFailed, err
		}
	}
	p, err := ix.q.Progress(ctx, s.args[0])
	if err != nil {
		return exitFailed, err
	}
	fmt.Fprintf(s.stdout, "source: %s\ncreated: %s\n", p.Source, p.CreatedAt.Format(time.RFC3339))
	summarize(s.stdout, p, 0, 0, warm.JobTiming{})
	if p.Failed > 0 {
		return exitFailed, nil
	}
	return exitOK, nil
}

// cmdRefresh rewrites the popular-package list.
func cmdRefresh(ctx context.Context, s settings, getenv func(string) string, log *slog.Logger) (int, error) {
	if len(s.args) > 0 {
		return exitUsage, fmt.Errorf("unexpected arguments %q", s.args)
	}
	var l *popular.List
	if s.fromDownloads != "" {
		if s.date == "" {
			return exitUsage, errors.New("--from-downloads needs --date (when the index was made)")
		}
		f, err := os.Open(s.fromDownloads)
		if err != nil {
			return exitFailed, err
		}
		defer f.Close()
		if l, err = popular.FromDownloads(f, filepath.Base(s.fromDownloads), s.date, s.size); err != nil {
			return exitFailed, err
		}
	} else {
		npm, err := npmrc.Load(s.mirror.ProjectDir, getenv)
		if err != nil {
			return exitFailed, fmt.Errorf("reading npm configuration: %w", err)
		}
		reg := popular.Registry{URL: npm.Registry(), Auth: npm.AuthHeader}
		if l, err = popular.Search(ctx, nil, reg, popular.SearchOptions{Texts: s.texts, Size: s.size, Timeout: s.mirror.UpstreamTimeout}); err != nil {
			return exitFailed, err
		}
	}
	b, err := l.Encode()
	if err != nil {
		return exitFailed, err
	}
	// Written beside, then renamed over: a reader never sees half a list.
	tmp := s.out + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return exitFailed, err
	}
	if err := os.Rename(tmp, s.out); err != nil {
		os.Remove(tmp)
		return exitFailed, err
	}
	fmt.Fprintf(s.stdout, "wrote %s: %s (%s, %s)\n", s.out, english.Count(len(l.Packages), "package"), l.Method, l.Date)
	return exitOK, nil
}
