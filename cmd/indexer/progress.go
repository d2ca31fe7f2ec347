package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/warm"
)

// plainEvery is how often the plain (not a terminal) display prints a
// line while packages finish: a CI log of a 1,000-package lockfile gets
// a line per 5 s rather than 1,000 lines.
const plainEvery = 5 * time.Second

// maxListed is how many skipped or failed packages the summary lists by
// name; `indexer status ID` lists them all.
const maxListed = 50

// display shows a request's progress.
type display interface {
	update(p warm.Progress)
	// done ends the display; the summary follows on stdout.
	done()
}

// newDisplay returns progress bars when w is a terminal (and bars are not
// turned off), log lines otherwise.
func newDisplay(w *os.File, plain bool) display {
	if !plain && term.IsTerminal(int(w.Fd())) {
		return &barDisplay{w: w}
	}
	return &lineDisplay{w: w, start: time.Now()}
}

// barDisplay is a progress bar over the packages that were pending when
// the request was submitted (present and skipped ones finish at once and
// would distort the rate and ETA), with the counts and bytes beside it.
type barDisplay struct {
	w    io.Writer
	bar  *progressbar.ProgressBar
	base int // items already finished at the first update
}

func (d *barDisplay) update(p warm.Progress) {
	finished := p.Total - p.Pending
	if d.bar == nil {
		d.base = finished
		d.bar = progressbar.NewOptions(p.Pending,
			progressbar.OptionSetWriter(d.w),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("pkg"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
		)
	}
	d.bar.Describe(fmt.Sprintf("warming · %d done, %d present, %d skipped, %d failed · %s",
		p.Done, p.Present, p.Skipped, p.Failed, bytesString(p.Bytes)))
	d.bar.Set(finished - d.base)
}

func (d *barDisplay) done() {
	if d.bar != nil {
		d.bar.Finish()
		fmt.Fprintln(d.w)
	}
}

// lineDisplay prints a log line when packages finish, at most every
// plainEvery, and always the last.
type lineDisplay struct {
	w        io.Writer
	start    time.Time
	last     time.Time
	lastDone int
	first    int
	started  bool
	final    warm.Progress
}

func (d *lineDisplay) update(p warm.Progress) {
	finished := p.Total - p.Pending
	if !d.started {
		d.started, d.first = true, finished
		fmt.Fprintf(d.w, "%s warm request %s: %s, %d to fetch\n", stamp(), p.ID, english.Count(p.Total, "package"), p.Pending)
	}
	d.final = p
	if finished == d.lastDone || (time.Since(d.last) < plainEvery && !p.Finished) {
		return
	}
	d.last, d.lastDone = time.Now(), finished
	line := fmt.Sprintf("%s warm %d/%d: %d done, %d present, %d skipped, %d failed; %s",
		stamp(), finished, p.Total, p.Done, p.Present, p.Skipped, p.Failed, bytesString(p.Bytes))
	if worked := finished - d.first; worked > 0 {
		rate := float64(worked) / time.Since(d.start).Seconds()
		line += fmt.Sprintf("; %.1f packages/s", rate)
		if p.Pending > 0 {
			line += fmt.Sprintf("; about %s left", (time.Duration(float64(p.Pending)/rate) * time.Second).Round(time.Second))
		}
	}
	fmt.Fprintln(d.w, line)
}

func (d *lineDisplay) done() {}

func stamp() string { return time.Now().Format(time.TimeOnly) }

// summarize writes the final summary of a request.
func summarize(w io.Writer, p warm.Progress, elapsed time.Duration, fetched int, t warm.JobTiming) {
	fmt.Fprintf(w, "warm request %s: %s", p.ID, english.Count(p.Total, "package"))
	if elapsed > 0 {
		fmt.Fprintf(w, " in %s", elapsed.Round(time.Millisecond))
	}
	fmt.Fprintln(w)
	var doneBytes int64
	for _, it := range p.Items {
		if it.State == warm.Done {
			doneBytes += it.Bytes
		}
	}
	rate := ""
	if p.Done > 0 && elapsed > 0 {
		rate = fmt.Sprintf(", %.0f packages/minute", float64(p.Done)/elapsed.Minutes())
	}
	fmt.Fprintf(w, "  warmed          %5d  (%s unpacked%s)\n", p.Done, bytesString(doneBytes), rate)
	fmt.Fprintf(w, "  already present %5d\n", p.Present)
	fmt.Fprintf(w, "  skipped         %5d\n", p.Skipped)
	list(w, p, warm.Skipped)
	fmt.Fprintf(w, "  failed          %5d\n", p.Failed)
	list(w, p, warm.Failed)
	if p.Pending > 0 {
		fmt.Fprintf(w, "  still pending   %5d  (indexer status %s)\n", p.Pending, p.ID)
	}
	if fetched > 0 && t.Total > 0 {
		pct := func(d time.Duration) float64 { return 100 * d.Seconds() / t.Total.Seconds() }
		fmt.Fprintf(w, "  job time (%d fetched here, %s summed over workers): download %.0f%%, store %.0f%%, index %.0f%%, registry metadata %.0f%%, unpack/hash/compress %.0f%%, queued for max-fill-bytes %.0f%%; %s downloaded\n",
			fetched, t.Total.Round(time.Millisecond), pct(t.Download), pct(t.Store), pct(t.Index), pct(t.Metadata), pct(t.Other()), pct(t.Queued), bytesString(t.DownloadBytes))
	}
}

func list(w io.Writer, p warm.Progress, state warm.State) {
	n := 0
	for _, it := range p.Items {
		if it.State != state {
			continue
		}
		if n++; n > maxListed {
			continue
		}
		what := it.Name
		if it.Version != "" {
			what += "@" + it.Version
		} else if it.Spec != "" {
			what += "@" + it.Spec
		}
		fmt.Fprintf(w, "    %s: %s\n", what, it.Reason)
	}
	if n > maxListed {
		fmt.Fprintf(w, "    ... and %d more (indexer status %s)\n", n-maxListed, p.ID)
	}
}

func bytesString(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
