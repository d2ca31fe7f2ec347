package warm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/semaphore"

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
// A body waits for the budget while others hold it, at most wait (the
// server's read-timeout, after which its connection could not be read
// anyway): two bodies that each hold part of the budget and each need
// more than is left would otherwise wait for one another for as long as
// their clients do.
type BodyBudget struct {
	sem     *semaphore.Weighted
	maxBody int64
	wait    time.Duration
	held    atomic.Int64
}

// Held is how many bytes bodies hold of the budget now.
func (b *BodyBudget) Held() int64 { return b.held.Load() }

// maxNamedFields is how many unknown fields a refused body's answer
// names.
const maxNamedFields = 10

// minBodyBuffer is the first buffer a body is read into.
const minBodyBuffer = 4 << 10

// NewBodyBudget returns a budget of total bytes for bodies of at most
// maxBody bytes each (the route's body limit, max-warm-body-bytes), each
// waiting at most wait for it (0: as long as its client). A total below
// one whole body is raised to it, or such a body would never be read.
func NewBodyBudget(total, maxBody int64, wait time.Duration) *BodyBudget {
	maxBody = max(maxBody, minBodyBuffer)
	return &BodyBudget{sem: semaphore.NewWeighted(max(total, maxBody+1)), maxBody: maxBody, wait: wait}
}

// DefaultBodyBudget is a budget of DefaultLockfileBytesInFlight for
// bodies of up to as many bytes, waiting as long as their clients: the
// handlers' when they are given none (tests).
func DefaultBodyBudget() *BodyBudget {
	return NewBodyBudget(DefaultLockfileBytesInFlight, DefaultLockfileBytesInFlight, 0)
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
	if b.wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.wait)
		defer cancel()
	}
	var charged int64
	release := func() { b.sem.Release(charged); b.held.Add(-charged); charged = 0 }
	grow := func(to int64) error {
		// Free bytes are taken even from a caller that has left: its
		// body may have arrived whole.
		if !b.sem.TryAcquire(to-charged) && b.sem.Acquire(ctx, to-charged) != nil {
			c.Response().Header().Set("Retry-After", "1")
			return echo.NewHTTPError(http.StatusServiceUnavailable,
				"the mirror is receiving other lockfiles (setting max-lockfile-bytes-in-flight); retry")
		}
		b.held.Add(to - charged)
		charged = to
		return nil
	}
	if err := grow(minBodyBuffer); err != nil {
		return nil, nil, err
	}
	buf := make([]byte, 0, minBodyBuffer)
	body := c.Request().Body
	// The buffer never grows past what the body limit lets through (one
	// byte more than maxBody tells a larger body), nor past a declared
	// Content-Length, which the server's body reader does not read past:
	// a 33 MiB body takes 33 MiB of the budget, not the 64 doubling
	// would. The length is a ceiling only: the budget is charged as the
	// bytes arrive, never for what a client merely declares.
	ceiling := b.maxBody + 1
	if n := c.Request().ContentLength; n > 0 && n < b.maxBody {
		ceiling = n + 1
	}
	for {
		if len(buf) == cap(buf) {
			if int64(cap(buf)) >= ceiling {
				release()
				return nil, nil, tooLarge(setting)
			}
			next := min(2*int64(cap(buf)), ceiling)
			if err := grow(next); err != nil {
				release()
				return nil, nil, err
			}
			buf = append(make([]byte, 0, next), buf...)
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, release, nil
		}
		if err != nil {
			release()
			var he *echo.HTTPError // Echo's body limit
			var mbe *http.MaxBytesError
			if errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge || errors.As(err, &mbe) {
				return nil, nil, tooLarge(setting)
			}
			return nil, nil, echo.NewHTTPError(http.StatusBadRequest, "reading the body: "+err.Error())
		}
	}
}

func tooLarge(setting string) error {
	return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "the body is over the limit (setting "+setting+")")
}

// DefaultLockfileBytesInFlight is the default of the setting
// max-lockfile-bytes-in-flight: 64 MiB, one body at max-warm-body-bytes.
// Before the budget, up to max-lockfile-parses (2) bodies of 64 MiB were
// read at once within their slots; now bodies are read before a slot is
// taken, and at most this many of their bytes are held, so the memory of
// bodies and parses together stays below what it was.
const DefaultLockfileBytesInFlight = 64 << 20
