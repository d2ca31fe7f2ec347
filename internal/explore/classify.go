package explore

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/pkgscope/pkgscope/internal/fill"
	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/semver"
	"github.com/pkgscope/pkgscope/internal/store"
	"github.com/pkgscope/pkgscope/internal/unavailable"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// ErrBadData marks a package that was read whole but does not hold what a
// consumer of its files expects (a web-docs data package pinned at a
// version with another layout): 502, since the caller cannot fix it.
var ErrBadData = errors.New("package data not in the expected format")

// Class is how an error is reported to a caller, whatever the transport.
type Class struct {
	Status     int           // HTTP status
	Code       string        // stable machine-readable code
	RetryAfter time.Duration // set for 503s: when to try again
}

// Classify maps an error from any layer to its Class. This is the one
// place errors become statuses (STYLE §7); an upstream failure is never a
// 404 (§8): only a genuine "no such package/version/file" is.
func Classify(err error) Class {
	var (
		in   *InputError
		nf   *NotFoundError
		lim  *LimitError
		fb   *ForbiddenError
		unav *unavailable.Error
	)
	switch {
	case errors.As(err, &in), errors.Is(err, index.ErrBadPattern), errors.Is(err, index.ErrBadQuery):
		return Class{Status: http.StatusBadRequest, Code: "bad_request"}
	case errors.As(err, &fb):
		return Class{Status: http.StatusForbidden, Code: "forbidden"}
	case errors.As(err, &lim):
		return Class{Status: http.StatusUnprocessableEntity, Code: "limit_exceeded"}
	case errors.Is(err, ingest.ErrUnsupported):
		return Class{Status: http.StatusUnprocessableEntity, Code: "package_unsupported"}
	case errors.Is(err, ingest.ErrLimit), errors.Is(err, index.ErrTooLarge):
		return Class{Status: http.StatusUnprocessableEntity, Code: "package_too_large"}
	case errors.As(err, &nf), errors.Is(err, upstream.ErrNotFound):
		return Class{Status: http.StatusNotFound, Code: "not_found"}
	case errors.Is(err, semver.ErrNoMatch):
		return Class{Status: http.StatusNotFound, Code: "no_matching_version"}
	case errors.Is(err, fill.ErrBusy):
		// This mirror, not the registry, is full: every fill slot taken
		// and max-fill-waiters fills waiting (fill.Slots).
		ra := 5 * time.Second
		if errors.As(err, &unav) && unav.RetryAfter > 0 {
			ra = unav.RetryAfter
		}
		return Class{Status: http.StatusServiceUnavailable, Code: "fills_busy", RetryAfter: ra}
	case errors.As(err, &unav):
		// The registry's or jsDelivr's (one shape): its text says what
		// failed in words, never a URL or an address.
		ra := unav.RetryAfter
		if ra <= 0 {
			ra = 30 * time.Second
		}
		return Class{Status: http.StatusServiceUnavailable, Code: "upstream_unavailable", RetryAfter: ra}
	case errors.Is(err, upstream.ErrTarballURL):
		// The packument named a tarball on a host that is not the
		// registry's (SSRF guard): the upstream served something wrong.
		return Class{Status: http.StatusBadGateway, Code: "upstream_tarball_url"}
	case errors.Is(err, upstream.ErrIntegrity):
		return Class{Status: http.StatusBadGateway, Code: "upstream_integrity"}
	case errors.Is(err, upstream.ErrTooLarge):
		return Class{Status: http.StatusUnprocessableEntity, Code: "package_too_large"}
	case errors.Is(err, ingest.ErrBadArchive):
		return Class{Status: http.StatusBadGateway, Code: "upstream_bad_archive"}
	case errors.Is(err, store.ErrUnavailable):
		// The database is down or unreachable: retry soon, never 404.
		return Class{Status: http.StatusServiceUnavailable, Code: "store_unavailable", RetryAfter: 5 * time.Second}
	case errors.Is(err, store.ErrNotFound):
		// A version vanished between resolve and read, or a blob is
		// missing: the store is inconsistent, not the caller wrong.
		return Class{Status: http.StatusInternalServerError, Code: "internal"}
	case errors.Is(err, ErrGrepUnavailable):
		return Class{Status: http.StatusNotImplemented, Code: "grep_unavailable"}
	case errors.Is(err, ErrBadData):
		return Class{Status: http.StatusBadGateway, Code: "upstream_bad_data"}
	case errors.Is(err, context.DeadlineExceeded):
		return Class{Status: http.StatusServiceUnavailable, Code: "timeout", RetryAfter: 10 * time.Second}
	}
	return Class{Status: http.StatusInternalServerError, Code: "internal"}
}
