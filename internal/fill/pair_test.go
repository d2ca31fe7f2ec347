package fill_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/pkgscope/pkgscope/internal/fill"
)

// stepLock answers Acquire with one outcome and records what happened to
// it in a shared log.
type stepLock struct {
	name    string
	outcome string // "take", "handoff", "down", "ctx"
	log     *[]string
	cancel  context.CancelFunc
}

func (l stepLock) Acquire(ctx context.Context, key string, ready func(context.Context) bool) (func(), error) {
	*l.log = append(*l.log, "acquire "+l.name)
	switch l.outcome {
	case "take":
		return func() { *l.log = append(*l.log, "release "+l.name) }, nil
	case "handoff":
		return nil, nil
	case "ctx":
		l.cancel()
		return nil, ctx.Err()
	}
	return nil, errors.New(l.name + " unreachable")
}

// TestPairTakesBothAndFallsBackToEither: every holder takes first then
// second; either alone is enough to hold; neither is an error (the fill
// goes on unlocked); a hand-off or a cancelled caller holds nothing.
func TestPairTakesBothAndFallsBackToEither(t *testing.T) {
	for _, tc := range []struct {
		first, second string
		held          bool   // Acquire returned a release
		errs          string // "": no error; "ctx": ctx's; "down": another
		log           []string
	}{
		{"take", "take", true, "", []string{"acquire first", "acquire second", "release second", "release first"}},
		{"down", "take", true, "", []string{"acquire first", "acquire second", "release second"}},
		{"take", "down", true, "", []string{"acquire first", "acquire second", "release first"}},
		{"down", "down", false, "down", []string{"acquire first", "acquire second"}},
		{"handoff", "take", false, "", []string{"acquire first"}},
		{"take", "handoff", false, "", []string{"acquire first", "acquire second", "release first"}},
		{"down", "handoff", false, "", []string{"acquire first", "acquire second"}},
		{"ctx", "take", false, "ctx", []string{"acquire first"}},
		{"take", "ctx", false, "ctx", []string{"acquire first", "acquire second", "release first"}},
		{"down", "ctx", false, "ctx", []string{"acquire first", "acquire second"}},
	} {
		t.Run(tc.first+","+tc.second, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var log []string
			l := fill.Pair(stepLock{"first", tc.first, &log, cancel}, stepLock{"second", tc.second, &log, cancel})
			release, err := l.Acquire(ctx, "k", func(context.Context) bool { return false })
			if release != nil {
				release()
			}
			switch {
			case (release != nil) != tc.held:
				t.Errorf("held = %v, want %v", release != nil, tc.held)
			case tc.errs == "" && err != nil, tc.errs != "" && err == nil:
				t.Errorf("err = %v, want %q", err, tc.errs)
			case tc.errs == "ctx" && !errors.Is(err, context.Canceled):
				t.Errorf("err = %v, want ctx's", err)
			}
			if !slices.Equal(log, tc.log) {
				t.Errorf("steps %q, want %q", log, tc.log)
			}
		})
	}
}
