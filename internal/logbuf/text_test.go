package logbuf_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/logbuf"
)

type valuer struct{}

func (valuer) LogValue() slog.Value { return slog.StringValue("resolved") }

// TestTextHandlerAsSlog: TextHandler writes every record byte for byte as
// slog.TextHandler does, whether it formats it itself (the access log's
// plain line) or leaves it to slog (quoting, groups, other kinds, levels
// that flush).
func TestTextHandlerAsSlog(t *testing.T) {
	at := time.Date(2026, 12, 6, 6, 19, 5, 550_999_999, time.UTC)
	east := time.FixedZone("east", 5*3600+30*60)
	cases := []struct {
		name  string
		time  time.Time
		level slog.Level
		msg   string
		attrs []slog.Attr
	}{
		{"access line", at, slog.LevelInfo, "request", []slog.Attr{
			slog.String("id", "AYBbIvOgXiwGYxaYbklkrGdDNOyKtChw"), slog.String("method", "GET"),
			slog.String("path", "/v1/npm/@types/react@19.1.0/index.d.ts"), slog.Int("status", 200),
			slog.Duration("latency", 8949*time.Nanosecond),
		}},
		{"whole milliseconds", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), slog.LevelInfo, "m", nil},
		{"another zone", at.In(east), slog.LevelInfo, "m", []slog.Attr{slog.Int("n", -3)}},
		{"monotonic clock", time.Now(), slog.LevelInfo, "m", nil},
		{"no time", time.Time{}, slog.LevelInfo, "m", []slog.Attr{slog.Bool("b", true)}},
		{"debug", at, slog.LevelDebug, "m", []slog.Attr{slog.Uint64("u", 1<<63)}},
		{"level between", at, slog.LevelInfo + 2, "m", nil},
		{"durations", at, slog.LevelInfo, "m", []slog.Attr{
			slog.Duration("zero", 0), slog.Duration("long", 90*time.Minute+time.Millisecond), slog.Duration("neg", -time.Second),
		}},
		{"backslash", at, slog.LevelInfo, "m", []slog.Attr{slog.String("p", `a\b`), slog.String("q", "x~!*'()[]{}<>&?#%+,;:@$^|`")}},
		{"space", at, slog.LevelInfo, "m", []slog.Attr{slog.String("p", "a b")}},
		{"equals", at, slog.LevelInfo, "m", []slog.Attr{slog.String("p", "a=b")}},
		{"quote", at, slog.LevelInfo, "m", []slog.Attr{slog.String("p", `a"b`)}},
		{"control", at, slog.LevelInfo, "m", []slog.Attr{slog.String("p", "a\x01b\x7f")}},
		{"non-ASCII", at, slog.LevelInfo, "m", []slog.Attr{slog.String("p", "/café"), slog.String("q", "\u00a0"), slog.String("r", "\xff")}},
		{"empty value", at, slog.LevelInfo, "m", []slog.Attr{slog.String("p", "")}},
		{"empty attr", at, slog.LevelInfo, "m", []slog.Attr{{}, slog.String("p", "x")}},
		{"key to quote", at, slog.LevelInfo, "m", []slog.Attr{slog.String("a key", "x")}},
		{"message to quote", at, slog.LevelInfo, "a message", []slog.Attr{slog.String("p", "x")}},
		{"float", at, slog.LevelInfo, "m", []slog.Attr{slog.Float64("f", 0.25)}},
		{"time value", at, slog.LevelInfo, "m", []slog.Attr{slog.Time("t", at)}},
		{"group", at, slog.LevelInfo, "m", []slog.Attr{slog.Group("g", slog.String("a", "b"))}},
		{"valuer", at, slog.LevelInfo, "m", []slog.Attr{slog.Any("v", valuer{})}},
		{"error", at, slog.LevelError, "request failed", []slog.Attr{slog.String("id", "x"), slog.Int("status", 500)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, want := newSink(), newSink()
			gw, ww := logbuf.New(got, 1<<10, time.Hour), logbuf.New(want, 1<<10, time.Hour)
			r := slog.NewRecord(c.time, c.level, c.msg, 0)
			r.AddAttrs(c.attrs...)
			if err := logbuf.TextHandler(gw, slog.LevelWarn).Handle(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			if err := slog.NewTextHandler(ww, &slog.HandlerOptions{Level: slog.LevelDebug}).Handle(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			gw.Close()
			ww.Close()
			if got.String() != want.String() {
				t.Errorf("TextHandler wrote\n%q\nslog writes\n%q", got, want)
			}
		})
	}
}

// TestTextHandlerWithAttrs: a handler with attributes or a group keeps
// them (slog writes those records).
func TestTextHandlerWithAttrs(t *testing.T) {
	got, want := newSink(), newSink()
	gw, ww := logbuf.New(got, 1<<10, time.Hour), logbuf.New(want, 1<<10, time.Hour)
	slog.New(logbuf.TextHandler(gw, slog.LevelWarn)).With("component", "fill").WithGroup("g").Info("m", "a", 1)
	slog.New(slog.NewTextHandler(ww, nil)).With("component", "fill").WithGroup("g").Info("m", "a", 1)
	gw.Close()
	ww.Close()
	// The times may differ by a millisecond: compare from the level on.
	cut := func(s string) string { return s[len("time=2026-12-06T06:19:05.550Z "):] }
	if cut(got.String()) != cut(want.String()) {
		t.Errorf("TextHandler wrote\n%q\nslog writes\n%q", got, want)
	}
}
