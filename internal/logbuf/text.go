package logbuf

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// TextHandler is Handler over slog's text handler writing to w, with the
// common record formatted here: one whose level, message, keys and string
// values are plain ASCII that slog writes unquoted, and whose values are
// strings, integers, booleans or durations — the access log's line per
// request. Its bytes are slog.TextHandler's (TestTextHandlerAsSlog holds
// them equal); any other record, and every record at level or above, goes
// to slog's handler. slog's generic walk over the attributes was 5% of a
// warm 2.6 KiB read's CPU (issue 27), this a fifth of that.
func TextHandler(w *Writer, level slog.Level) slog.Handler {
	return &text{flushing: flushing{Handler: slog.NewTextHandler(w, nil), w: w, level: level}}
}

type text struct{ flushing }

// lines holds line buffers between records.
var lines = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

func (t *text) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < t.level {
		bp := lines.Get().(*[]byte)
		b, ok := appendPlain((*bp)[:0], r)
		if ok {
			_, err := t.w.Write(b)
			*bp = b
			lines.Put(bp)
			return err
		}
		lines.Put(bp)
	}
	return t.flushing.Handle(ctx, r)
}

// appendPlain appends r as slog's text handler writes it (with no options),
// false when r has something it leaves to slog.
func appendPlain(b []byte, r slog.Record) ([]byte, bool) {
	if !r.Time.IsZero() {
		b = append(b, "time="...)
		b = appendRFC3339Millis(b, r.Time.Round(0))
		b = append(b, ' ')
	}
	level := r.Level.String()
	if !plain(level) || !plain(r.Message) {
		return b, false
	}
	b = append(b, "level="...)
	b = append(b, level...)
	b = append(b, " msg="...)
	b = append(b, r.Message...)
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		if !plain(a.Key) {
			ok = false
			return false
		}
		b = append(b, ' ')
		b = append(b, a.Key...)
		b = append(b, '=')
		switch v := a.Value; v.Kind() {
		case slog.KindString:
			if ok = plain(v.String()); ok {
				b = append(b, v.String()...)
			}
		case slog.KindInt64:
			b = strconv.AppendInt(b, v.Int64(), 10)
		case slog.KindUint64:
			b = strconv.AppendUint(b, v.Uint64(), 10)
		case slog.KindBool:
			b = strconv.AppendBool(b, v.Bool())
		case slog.KindDuration:
			b = append(b, v.Duration().String()...)
		default:
			ok = false
		}
		return ok
	})
	return append(b, '\n'), ok
}

// plain reports whether slog's text handler writes s as it is: not empty,
// ASCII, and no space, '=', '"' or control character. slog also leaves
// some non-ASCII text unquoted; that goes to slog.
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == '=' || c == '"' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// appendRFC3339Millis is slog's own time format: RFC 3339 with exactly
// three digits of milliseconds, truncated.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	// RFC3339Nano trims trailing zeros: a tenth of a millisecond added
	// keeps four digits after the point, and the fourth is dropped.
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...)
}
