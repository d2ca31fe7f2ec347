package warm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/semaphore"

	"github.com/pkgscope/pkgscope/internal/auth"
	"github.com/pkgscope/pkgscope/internal/ratelimit"
	"github.com/pkgscope/pkgscope/internal/strictjson"
)

// BodyBudget bounds the memory of lockfile bodies being received at once
// (setting max-lockfile-bytes-in-flight): POST /v1/warm and POST
// /v1/projects read their body charging its bytes as they arrive, and take
// a parse slot (ParseSlots) only once the whole body is in. A client that
// sends its body slowly thus holds the bytes it sent, never a parse slot:
// before, the slot was taken first, and two connections sending a byte at
// a time kept every warm request and project registration waiting until
// read-timeout, again and again.
//
// Each caller (its token; its address without tokens) holds at most its
// share of the budget (setting max-lockfile-bytes-per-caller, half of it
// by default), so one caller's uploads, however slow, leave room for
// everyone else's: two slow 34 MB uploads of one caller made another
// caller's 150-byte POST /v1/warm wait 26 s (issue 25 §2). A caller past
// its share waits for its own uploads to end; one that finds the whole
// budget spent waits for others'. A body that arrives slower than
// max-lockfile-bytes-per-caller's companion, min-upload-bytes-per-second,
// once uploadGrace has passed, is cut (408): a slow upload holds its
// bytes for seconds, not for the whole read-timeout.
//
// A body waits for the budget while others hold it, at most wait (the
// server's read-timeout, after which its connection could not be read
// anyway): two bodies that each hold part of the budget and each need
// more than is left would otherwise wait for one another for as long as
// their clients do. A body that could not get its bytes is a 503 coded
// "upload_pool_full", with Retry-After.
type BodyBudget struct {
	sem  *semaphore.Weighted
	lim  BodyLimits
	held atomic.Int64

	mu      sync.Mutex
	callers map[string]*callerShare

	// onWait, set by tests, is told of a body about to wait for the bytes
	// the setting named holds.
	onWait func(setting string)
}

// waiting tells onWait of a body about to wait.
func (b *BodyBudget) waiting(setting string) {
	if b.onWait != nil {
		b.onWait(setting)
	}
}

// callerShare is one caller's part of the budget; its sem is nil when a
// share is the whole budget.
type callerShare struct {
	sem    *semaphore.Weighted
	bodies int // bodies being read; guarded by BodyBudget.mu
}

func (sh *callerShare) release(n int64) {
	if sh.sem != nil {
		sh.sem.Release(n)
	}
}

// BodyLimits configure a BodyBudget.
type BodyLimits struct {
	// Total is the budget (max-lockfile-bytes-in-flight), PerCaller one
	// caller's share of it (max-lockfile-bytes-per-caller; 0: all of
	// it), MaxBody the largest body (the route's limit,
	// max-warm-body-bytes). Total and PerCaller below one whole body are
	// raised to it, or such a body would never be read.
	Total, PerCaller, MaxBody int64
	// Wait bounds how long a body waits for the budget (0: as long as its
	// client).
	Wait time.Duration
	// MinRate is the slowest a body may arrive, in bytes per second,
	// once uploadGrace has passed (min-upload-bytes-per-second; 0: any).
	MinRate int64
	// Clock returns the time; nil is time.Now.
	Clock func() time.Time
}

// uploadGrace is the time a body has before MinRate applies: a TCP
// connection's slow start and a proxy's buffering delay its first bytes
// by up to a second or two on a slow link.
const uploadGrace = 2 * time.Second

// Held is how many bytes bodies hold of the budget now.
func (b *BodyBudget) Held() int64 { return b.held.Load() }

// maxNamedFields is how many unknown fields a refused body's answer
// names.
const maxNamedFields = 10

// minBodyBuffer is the first buffer a body is read into.
const minBodyBuffer = 4 << 10

// NewBodyBudget returns a budget within l.
func NewBodyBudget(l BodyLimits) *BodyBudget {
	l.MaxBody = max(l.MaxBody, minBodyBuffer)
	l.Total = max(l.Total, l.MaxBody+1)
	if l.PerCaller <= 0 || l.PerCaller > l.Total {
		l.PerCaller = l.Total
	}
	l.PerCaller = max(l.PerCaller, l.MaxBody+1)
	if l.Clock == nil {
		l.Clock = time.Now
	}
	return &BodyBudget{sem: semaphore.NewWeighted(l.Total), lim: l, callers: map[string]*callerShare{}}
}

// DefaultBodyBudget is a budget of DefaultLockfileBytesInFlight for
// bodies of up to as many bytes, waiting as long as their clients: the
// handlers' when they are given none (tests).
func DefaultBodyBudget() *BodyBudget {
	return NewBodyBudget(BodyLimits{Total: DefaultLockfileBytesInFlight, MaxBody: DefaultLockfileBytesInFlight})
}

// PoolFullError is a body refused because the bytes it needed were
// held by other bodies (the caller's own, past its share, or anyone's,
// past the budget), or every parse slot by other lockfiles, for as long
// as it could wait: 503 with Retry-After.
type PoolFullError struct{ Setting string }

func (e *PoolFullError) Error() string {
	switch e.Setting {
	case "max-lockfile-bytes-per-caller":
		return "this caller's other uploads hold its share of the lockfile pool (setting max-lockfile-bytes-per-caller); retry once they end"
	case "max-lockfile-parses":
		return "the mirror is parsing other lockfiles (setting max-lockfile-parses); retry"
	}
	return "the mirror is receiving other lockfiles (setting max-lockfile-bytes-in-flight); retry"
}

// ErrorCode is the API's error code of the refusal: "upload_pool_full"
// for the bytes of bodies, "lockfile_parses_full" for the parse slots.
func (e *PoolFullError) ErrorCode() string {
	if e.Setting == "max-lockfile-parses" {
		return "lockfile_parses_full"
	}
	return "upload_pool_full"
}

// poolFull answers a body that could not get its bytes: 503, Retry-After.
func poolFull(c echo.Context, setting string) error {
	c.Response().Header().Set("Retry-After", "1")
	err := &PoolFullError{Setting: setting}
	return &echo.HTTPError{Code: http.StatusServiceUnavailable, Message: err.Error(), Internal: err}
}

// caller names whose share a request's body takes: the token auth
// verified, else the client's address (as the rate limit keys callers).
func caller(c echo.Context) string {
	if id, ok := auth.FromContext(c); ok && id.ID != "" {
		return "token " + id.ID
	}
	return "address " + ratelimit.ClientIP(c)
}

// hold is one body's charge against the budget and its caller's share.
type hold struct {
	b       *BodyBudget
	key     string
	share   *callerShare
	charged int64
	done    bool
}

func (b *BodyBudget) open(key string) *hold {
	b.mu.Lock()
	defer b.mu.Unlock()
	sh := b.callers[key]
	if sh == nil {
		sh = &callerShare{}
		if b.lim.PerCaller < b.lim.Total {
			sh.sem = semaphore.NewWeighted(b.lim.PerCaller)
		}
		b.callers[key] = sh
	}
	sh.bodies++
	return &hold{b: b, key: key, share: sh}
}

// grow charges the body up to to bytes, waiting within ctx: first its
// caller's share, then the budget. Free bytes are taken even from a
// caller that has left: its body may have arrived whole. It returns the
// setting that refused it, "" when charged.
func (h *hold) grow(ctx context.Context, to int64) string {
	n := to - h.charged
	if sem := h.share.sem; sem != nil && !sem.TryAcquire(n) {
		h.b.waiting("max-lockfile-bytes-per-caller")
		if sem.Acquire(ctx, n) != nil {
			return "max-lockfile-bytes-per-caller"
		}
	}
	if !h.b.sem.TryAcquire(n) {
		h.b.waiting("max-lockfile-bytes-in-flight")
		if h.b.sem.Acquire(ctx, n) != nil {
			h.share.release(n)
			return "max-lockfile-bytes-in-flight"
		}
	}
	h.b.held.Add(n)
	h.charged = to
	return ""
}

// release gives the body's bytes back; the first call also ends the
// body's claim on its caller's share. Safe to call more than once.
func (h *hold) release() {
	h.share.release(h.charged)
	h.b.sem.Release(h.charged)
	h.b.held.Add(-h.charged)
	h.charged = 0
	if h.done {
		return
	}
	h.done = true
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	if h.share.bodies--; h.share.bodies == 0 {
		delete(h.b.callers, h.key)
	}
}

// DecodeBody reads r's body within the budget and decodes it into v as
// strictjson.DecodeBody does, naming setting (the route's body limit) when
// it is too large. The returned release gives the body's bytes back to
// the budget: call it once v's strings are all that is kept of the body,
// that is, once the parse is done. A caller that gives up while the
// budget is spent gets a 503 naming the setting, with Retry-After.
func (b *BodyBudget) DecodeBody(c echo.Context, v any, setting string) (release func(), err error) {
	data, release, err := b.read(c, setting)
	if err != nil {
		return nil, err
	}
	if err := strictjson.Unmarshal(data, v); err != nil {
		release()
		var ue *strictjson.UnknownFieldError
		if errors.As(err, &ue) && len(ue.Names) > maxNamedFields {
			// Named, each, in the answer: a body of 60,000 made-up keys
			// was answered with all of them, 1.5 MB.
			more := len(ue.Names) - maxNamedFields
			ue.Names = ue.Names[:maxNamedFields]
			err = fmt.Errorf("%w; and %d more unknown fields", err, more)
		}
		if strictjson.TrailingData(err) {
			return nil, echo.NewHTTPError(http.StatusBadRequest, "the body holds more than one JSON value").SetInternal(err)
		}
		return nil, echo.NewHTTPError(http.StatusBadRequest, "decoding the body: "+err.Error()).SetInternal(err)
	}
	return release, nil
}

// read reads the body into a buffer that grows as bytes arrive, charging
// each growth to the budget before it is made: what the body holds in
// memory is always charged, and a body that has sent little holds little.
func (b *BodyBudget) read(c echo.Context, setting string) ([]byte, func(), error) {
	ctx := c.Request().Context()
	if b.lim.Wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.lim.Wait)
		defer cancel()
	}
	h := b.open(caller(c))
	if s := h.grow(ctx, minBodyBuffer); s != "" {
		h.release()
		return nil, nil, poolFull(c, s)
	}
	buf := make([]byte, 0, minBodyBuffer)
	body := c.Request().Body
	pace := b.pace(c)
	// The buffer never grows past what the body limit lets through (one
	// byte more than maxBody tells a larger body), nor past a declared
	// Content-Length, which the server's body reader does not read past:
	// a 33 MiB body takes 33 MiB of the budget, not the 64 doubling
	// would. The length is a ceiling only: the budget is charged as the
	// bytes arrive, never for what a client merely declares.
	ceiling := b.lim.MaxBody + 1
	if n := c.Request().ContentLength; n > 0 && n < b.lim.MaxBody {
		ceiling = n + 1
	}
	for {
		if len(buf) == cap(buf) {
			if int64(cap(buf)) >= ceiling {
				h.release()
				return nil, nil, tooLarge(setting)
			}
			next := min(2*int64(cap(buf)), ceiling)
			if s := h.grow(ctx, next); s != "" {
				h.release()
				return nil, nil, poolFull(c, s)
			}
			buf = append(make([]byte, 0, next), buf...)
		}
		pace.next(int64(len(buf)))
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			pace.stop()
			return buf, h.release, nil
		}
		if err == nil {
			err = pace.check(int64(len(buf)))
		} else if perr := pace.check(int64(len(buf))); perr != nil {
			err = perr // the read deadline pace set, not read-timeout
		}
		if err != nil {
			h.release()
			var he *echo.HTTPError // Echo's body limit
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge || errors.As(err, &mbe):
				return nil, nil, tooLarge(setting)
			case errors.Is(err, errTooSlow):
				// The connection is closed after the answer: net/http would
				// otherwise read the rest of the body first, from a
				// client that is not sending it.
				c.Response().Header().Set(echo.HeaderConnection, "close")
				return nil, nil, echo.NewHTTPError(http.StatusRequestTimeout, err.Error())
			}
			return nil, nil, echo.NewHTTPError(http.StatusBadRequest, "reading the body: "+err.Error())
		}
	}
}

// errTooSlow is a body arriving slower than min-upload-bytes-per-second.
var errTooSlow = errors.New("the body arrived slower than the mirror accepts")

// pacer holds a body to BodyLimits.MinRate: after each read, the bytes
// received must keep up with MinRate since uploadGrace; before each, the
// connection's read deadline is set to when they would fall a second
// behind, so that a client that stops sending is cut then too, not at
// read-timeout. Without a MinRate, or where the connection takes no
// deadline (in-process tests), only the check after each read applies.
type pacer struct {
	rate     int64
	wait     time.Duration // BodyLimits.Wait, the server's read-timeout
	start    time.Time
	clock    func() time.Time
	rc       *http.ResponseController
	deadline time.Time
}

func (b *BodyBudget) pace(c echo.Context) *pacer {
	p := &pacer{rate: b.lim.MinRate, wait: b.lim.Wait, clock: b.lim.Clock, start: b.lim.Clock()}
	if p.rate > 0 {
		p.rc = http.NewResponseController(c.Response())
	}
	return p
}

// due is when received bytes are due at the minimum rate.
func (p *pacer) due(received int64) time.Time {
	return p.start.Add(uploadGrace + time.Duration(float64(received)/float64(p.rate)*float64(time.Second)))
}

func (p *pacer) next(received int64) {
	if p.rc == nil {
		return
	}
	d := p.due(received).Add(time.Second)
	if p.wait > 0 && d.After(p.start.Add(p.wait)) {
		d = p.start.Add(p.wait) // never later than read-timeout's
	}
	if p.rc.SetReadDeadline(d) == nil {
		p.deadline = d
	}
}

func (p *pacer) check(received int64) error {
	if p.rate <= 0 {
		return nil
	}
	now := p.clock()
	if now.After(p.due(received)) {
		return fmt.Errorf("%w: %d bytes in %s, under %d bytes a second after the first %s (setting min-upload-bytes-per-second): send the body at a steady pace",
			errTooSlow, received, now.Sub(p.start).Round(time.Millisecond), p.rate, uploadGrace)
	}
	return nil
}

// stop lifts the read deadline once the whole body is read: net/http
// keeps reading the connection in the background to notice a client
// leaving, and a deadline passing during the parse would read as one. A
// body that failed keeps it, so that net/http's read of what is left of
// it (before the answer) ends too.
func (p *pacer) stop() {
	if !p.deadline.IsZero() {
		p.rc.SetReadDeadline(time.Time{})
	}
}

func tooLarge(setting string) error {
	return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "the body is over the limit (setting "+setting+")")
}

// DefaultLockfileBytesInFlight is the default of the setting
// max-lockfile-bytes-in-flight: 128 MiB, two bodies at max-warm-body-bytes,
// one for each of two callers' shares (DefaultLockfileBytesPerCaller).
// Before the budget, up to max-lockfile-parses (2) bodies of 64 MiB were
// read at once within their slots, as many as now; at 64 MiB, one caller
// holding its share would have left no room for anyone else.
const DefaultLockfileBytesInFlight = 128 << 20

// DefaultLockfileBytesPerCaller is the default of the setting
// max-lockfile-bytes-per-caller: 64 MiB, one body at max-warm-body-bytes,
// half of the budget, so one caller's uploads always leave the other half.
const DefaultLockfileBytesPerCaller = 64 << 20

// DefaultMinUploadBytesPerSecond is the default of the setting
// min-upload-bytes-per-second: 64 KiB/s (512 kbit/s, a slow uplink); the
// server's read-timeout (30 s) asks 2.1 MiB/s of a 64 MiB body anyway, so
// the minimum cuts slow small bodies early, and stalled ones after 3 s.
const DefaultMinUploadBytesPerSecond = 64 << 10
