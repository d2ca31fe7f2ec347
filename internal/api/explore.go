package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/explore"
)

func (s *Server) explore(c echo.Context) error {
	req, err := decode(c)
	if err != nil {
		return err
	}
	c.Set("action", req.Action) // metrics.ActionKey: latency by action
	res, err := explore.Do(c.Request().Context(), s.ex, *req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// decode reads the body strictly: an unknown field is a 400 that names
// the field meant (explore.UnknownFields, as the MCP tool's), since a
// misspelt field would otherwise be silently ignored.
func decode(c echo.Context) (*explore.Request, error) {
	var req explore.Request
	if err := decodeStrict(c, &req); err != nil {
		// The decoder goes on after an unknown field, so req.Action is
		// known wherever in the body the field was.
		if name, ok := unknownField(err); ok {
			return nil, explore.UnknownFields([]string{name}, req.Action)
		}
		return nil, err
	}
	return &req, nil
}

// unknownField is the field encoding/json's DisallowUnknownFields refused,
// from its message (json: unknown field "x"), which decodeStrict wraps.
func unknownField(err error) (string, bool) {
	var ie *explore.InputError
	if !errors.As(err, &ie) {
		return "", false
	}
	_, rest, ok := strings.Cut(ie.Err.Error(), `json: unknown field "`)
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(rest, `"`)
	return name, ok
}

// decodeStrict reads one JSON object into v: unknown fields are a 400
// naming the field, since a misspelt field would otherwise be silently
// ignored. /v1/explore and /v1/webdocs share it.
func decodeStrict(c echo.Context, v any) error {
	ct := c.Request().Header.Get(echo.HeaderContentType)
	if ct != "" && !strings.HasPrefix(ct, echo.MIMEApplicationJSON) && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		// curl -d sends form-urlencoded by default; its body is still our
		// JSON. (A browser's cross-site form is refused by HostGuard.)
		return echo.NewHTTPError(http.StatusUnsupportedMediaType, "send a JSON body with Content-Type: application/json")
	}
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		// A sized body over the limit is refused before the handler; a
		// chunked one fails here, mid-read, with the body limit's 413
		// (an *echo.HTTPError) or net/http's MaxBytesError.
		var mbe *http.MaxBytesError
		var he *echo.HTTPError
		if errors.As(err, &mbe) || errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge {
			return echo.ErrStatusRequestEntityTooLarge
		}
		if errors.Is(err, io.EOF) {
			return inputErr("body", "empty: send a JSON object with an action")
		}
		return inputErr("body", "not valid JSON for this endpoint: "+err.Error())
	}
	if dec.More() {
		return inputErr("body", "trailing data after the JSON object")
	}
	return nil
}

func inputErr(field, msg string) error {
	return &explore.InputError{Field: field, Err: errors.New(msg)}
}
