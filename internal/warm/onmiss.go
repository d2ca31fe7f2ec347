package warm

import (
	"context"
	"errors"
	"log/slog"

	"github.com/pkgscope/pkgscope/internal/fill"
)

// OnMiss wraps the mirror's miss path so that a miss the registry could
// not serve now (an outage, a 429, a timeout: anything but a permanent
// error such as "no such version" or an integrity failure) leaves a
// durable warm job behind: the version is fetched when the registry
// recovers, without waiting for the agent to ask again. A fill that
// succeeds, or fails for good, enqueues nothing; nor does one refused
// because this process was fetching all it may (fill.ErrBusy: max-fills,
// max-fill-waiters): its caller was told when to retry, and queueing
// every refusal would turn a stampede of misses into a queue full of
// them (max-warm-queue) that crowds out warm requests. Enqueue errors
// are logged, never returned: the caller's error is the fill's. A fill
// cut short by shutdown (fill.ErrShutdown) is still wanted, so it leaves
// a job: app.App.Close ends fills before it closes the queue.
func OnMiss(next fill.Filler, e Enqueuer, log *slog.Logger) fill.Filler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return fill.FillerFunc(func(ctx context.Context, name, version string) error {
		err := next.Fill(ctx, name, version)
		if err == nil || permanent(err) || errors.Is(err, fill.ErrBusy) {
			return err
		}
		// The caller may have given up (that may be why the fill failed);
		// the enqueue is still wanted.
		if qerr := e.Enqueue(context.WithoutCancel(ctx), name, version); qerr != nil {
			log.Error("queueing a warm job after a failed fill", "package", name, "version", version, "err", qerr)
		}
		return err
	})
}
