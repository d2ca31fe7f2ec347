package warm

import (
	"context"
	"log/slog"

	"github.com/pkgscope/pkgscope/internal/fill"
)

// OnMiss wraps the mirror's miss path so that a miss the registry could
// not serve now (an outage, a 429, a timeout: anything but a permanent
// error such as "no such version" or an integrity failure) leaves a
// durable warm job behind: the version is fetched when the registry
// recovers, without waiting for the agent to ask again. A fill that
// succeeds, or fails for good, enqueues nothing. Enqueue errors are
// logged, never returned: the caller's error is the fill's.
func OnMiss(next fill.Filler, e Enqueuer, log *slog.Logger) fill.Filler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return fill.FillerFunc(func(ctx context.Context, name, version string) error {
		err := next.Fill(ctx, name, version)
		if err == nil || permanent(err) {
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
