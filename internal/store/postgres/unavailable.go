package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pkgscope/pkgscope/internal/store"
)

// unreachable reports whether err says the database could not be reached
// or stopped answering, rather than anything about the request: such
// errors become store.ErrUnavailable, which callers answer with 503 and
// Retry-After. A caller's own cancellation is not one of them; a deadline
// is (the store's QueryTimeout or WriteTimeout, or the caller's: either
// way the database did not answer in time).
func unreachable(err error) bool {
	if errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.Canceled) {
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &ce), errors.As(err, &ne), pgconn.Timeout(err),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	case errors.As(err, &pe):
		// Class 08 is connection exceptions; 57P01-03 a server shutting
		// down or starting; 53300 too many connections.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" ||
			pe.Code == "57P03" || pe.Code == "53300"
	}
	return false
}
